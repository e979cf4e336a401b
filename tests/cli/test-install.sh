#!/usr/bin/env bash
# test-install.sh — `meson install` into a staging folder (DESTDIR), then the
# installed fabricsim, run from another folder with none of the data
# variables set, finds the installed data: topologies and workloads by name,
# the catalog, the validation references.  Each lookup is shown to read the
# installed copy (a file that only it holds, a model text changed only in
# it), not the source tree.  Also: the man page renders without a warning
# and documents every command; every example of the man page (the help
# texts' "Example:" blocks) runs from an empty folder with the installed
# copy; the bash completion completes commands and options.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
: "${FS_BUILD_ROOT:?set FS_BUILD_ROOT to the build folder}"

meson install -C "$FS_BUILD_ROOT" --no-rebuild --quiet --destdir "$tmp/stage" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log" >&2; fail "meson install exited non-zero"; }
bin=$(find "$tmp/stage" -path '*/bin/fabricsim' -type f | head -1)
[ -n "$bin" ] || fail "no bin/fabricsim installed"
prefix=$(dirname "$(dirname "$bin")")
share="$prefix/share/fabricsim"
for d in models models/compute models/nccl topologies topologies/nodes workloads workloads/traces \
         workloads/sweeps validation/reference; do
  [ -d "$share/$d" ] || fail "share/fabricsim/$d not installed"
done
[ -f "$share/topologies/dgx-h100.yaml" ] || fail "topologies/dgx-h100.yaml not installed"
[ -f "$share/validation/reference/README.md" ] || fail "validation/reference/README.md not installed"

# Only the installed copy has these.
cp "$share/topologies/dgx-h100.yaml" "$share/topologies/only-installed.yaml"
cp "$share/workloads/gpt3-13b.yaml" "$share/workloads/only-installed-wl.yaml"
sed -i 's/PCI Express 4.0, 16 GT/PCI Express 4.0 (installed copy), 16 GT/' "$share/models/pcie.yaml"
grep -rq 'installed copy' "$share/models" || fail "the model text to change was not found"

mkdir "$tmp/elsewhere"
cd "$tmp/elsewhere"
run() { env -u FABRICSIM_MODELS -u FABRICSIM_DATA -u FABRICSIM_WORKLOADS -u FABRICSIM_VALIDATION "$bin" "$@"; }

out=$(run topo check only-installed) || fail "topo check only-installed exited $?"
contains "$out" "8 GPUs" "topo check by name"
out=$(run coll dgx-h100 -o all_reduce -b 1M -e 1M) || fail "coll dgx-h100 exited $?"
contains "$out" "all_reduce_perf" "coll by name"
out=$(run coll topologies/dgx-h100.yaml -o all_reduce -b 1M -e 1M) || fail "coll as in --help exited $?"
out=$(run train dgx-h100 only-installed-wl --global-batch-size=8) || fail "train by name exited $?"
contains "$out" "step time" "train by name"
out=$(run models pcie-gen4-x16) || fail "models exited $?"
contains "$out" "installed copy" "the catalog read"
out=$(run validate --json nonexistent-table 2>&1) && fail "validate of a missing table succeeded"
contains "$out" "$share/validation/reference" "the reference folder"
# A name that is nowhere: the error names what was written.
err=$(run topo check no-such-topology 2>&1) && fail "topo check of a missing name succeeded"
contains "$err" "no-such-topology" "missing name"
[ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "missing name: error is not one line: $err"

# The man page: renders without a warning, one section per command.
man1=$(find "$tmp/stage" -path '*/man1/fabricsim.1' -type f | head -1)
[ -n "$man1" ] || fail "no man1/fabricsim.1 installed"
if command -v groff >/dev/null; then
  warn=$(groff -man -Tutf8 -ww -z "$man1" 2>&1) || fail "groff exited $?"
  [ -z "$warn" ] || fail "groff warns: $warn"
fi
cmds=$(run help | awk '/^Commands:/{on=1; next} on && NF==0 {exit} on && $1 != "help" {print $1}')
[ "$(printf '%s\n' "$cmds" | wc -l)" -ge 10 ] || fail "too few commands in 'fabricsim help': $cmds"
for c in $cmds; do
  up=$(printf '%s' "$c" | tr a-z A-Z)
  grep -qx ".SH FABRICSIM $up" "$man1" || fail "the man page has no section for $c"
done
grep -qx '.SS fabricsim explain schedule' "$man1" || fail "the man page lacks explain schedule"

# Every example of the man page, each in an empty folder of its own: it
# finds what it names (topologies, workloads, calibration files, sample
# inputs: fs_datadir_resolve) and exits 0, or 2 where its comment says
# "# an error"; one still running after FS_EXAMPLE_SECONDS (default 5) has
# found its inputs, which is what is checked here, and is stopped.  An
# example that starts with another program (nvidia-smi, mpirun) needs that
# program and is skipped.
python3 - "$man1" "$(dirname "$bin")" "$tmp/examples" "${FS_EXAMPLE_SECONDS:-5}" <<'PY' || fail "man page examples"
import os, re, subprocess, sys
man, bindir, work, secs = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
def unroff(line):
    line = re.sub(r'\\\[u([0-9A-F]{4})\]', lambda m: chr(int(m.group(1), 16)), line)
    line = line.replace('\\-', '-').replace('\\e', '\\')
    return line[2:] if line.startswith('\\&') else line
examples, inside, cur = [], False, ''
for raw in open(man, encoding='utf-8'):
    line = raw.rstrip('\n')
    if re.fullmatch(r'Examples?:', line):
        inside = True
    elif inside and (line == '.fi' or not line.strip()):
        inside = False
    elif inside:
        line = unroff(line).strip()
        if line.endswith('\\'):
            cur += line[:-1].rstrip() + ' '
        else:
            examples.append(cur + line)
            cur = ''
env = {k: v for k, v in os.environ.items()
       if k not in ('FABRICSIM_MODELS', 'FABRICSIM_DATA', 'FABRICSIM_WORKLOADS', 'FABRICSIM_VALIDATION')}
env['PATH'] = bindir + ':' + env['PATH']
bad, ran, skipped = [], 0, []
for i, ex in enumerate(examples):
    words = [w for w in ex.split() if not re.fullmatch(r'[A-Z_]+=\S*', w)]
    if words[0] != 'fabricsim':
        skipped.append(ex)
        continue
    want = 2 if re.search(r'#\s*an error', ex) else 0
    folder = os.path.join(work, str(i))
    os.makedirs(folder)
    try:
        p = subprocess.run(['bash', '-c', ex], cwd=folder, env=env, capture_output=True, text=True,
                           timeout=secs)
        if p.returncode != want:
            bad.append(f"{ex}\n    exit {p.returncode}, expected {want}: {p.stderr.strip()[:300]}")
    except subprocess.TimeoutExpired:
        pass
    ran += 1
for b in bad:
    print("FAIL: example:", b, file=sys.stderr)
print(f"man page examples: {ran} run, {len(skipped)} need another program: " + "; ".join(skipped))
sys.exit(1 if bad or ran < 30 else 0)
PY

# The bash completion.
comp=$(find "$tmp/stage" -path '*/bash-completion/completions/fabricsim' -type f | head -1)
[ -n "$comp" ] || fail "no bash-completion/completions/fabricsim installed"
complete_words() {
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _fabricsim; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$comp" "$@"
}
[ "$(complete_words fabricsim co)" = "coll" ] || fail "completion of 'co': $(complete_words fabricsim co)"
[ "$(complete_words fabricsim coll --js)" = "--json" ] || fail "completion of 'coll --js'"
[ "$(complete_words fabricsim topo pa)" = "paths" ] || fail "completion of 'topo pa'"
[ "$(complete_words fabricsim explain sch)" = "schedule" ] || fail "completion of 'explain sch'"
contains "$(complete_words fabricsim explain schedule --)" "--microbatches" "completion of explain schedule options"
for c in $cmds; do
  [ "$(complete_words fabricsim "$c" --he)" = "--help" ] || [ "$c" = explain ] ||
    fail "completion of '$c --he'"
done
echo "cli install: ok"
