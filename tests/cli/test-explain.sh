#!/usr/bin/env bash
# test-explain.sh — runs every ```sh block of workloads/teaching/README.md
# (with `fabricsim` as the built binary) and checks that each exits 0 and
# prints something; then `explain schedule`'s bubble against the formula
# and its usage errors.
set -euo pipefail
: "${FABRICSIM:?set FABRICSIM to the fabricsim binary}"
: "${FS_SOURCE_ROOT:?set FS_SOURCE_ROOT to the source tree}"
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin"
ln -s "$FABRICSIM" "$tmp/bin/fabricsim"
export PATH="$tmp/bin:$PATH"
cd "$FS_SOURCE_ROOT"

n=0
python3 - "$FS_SOURCE_ROOT/workloads/teaching/README.md" "$tmp" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
for i, b in enumerate(blocks):
    open(f"{sys.argv[2]}/block{i}.sh", "w").write("set -eo pipefail\n" + b)
PY
for f in "$tmp"/block*.sh; do
  out=$(bash "$f") || fail "$(cat "$f"): exit $?"
  [ -n "$out" ] || fail "$(cat "$f"): no output"
  n=$((n + 1))
done
[ $n -ge 4 ] || fail "expected at least 4 sh blocks, found $n"

# GPipe and 1F1B: (p-1)/(m+p-1) = 3/11; interleaved v=2: 3/19.
out=$(fabricsim explain schedule --pp 4 --microbatches 8)
case "$out" in *"bubble 27.3%"*"bubble 27.3%"*"bubble 15.8%"*) ;; *) fail "bubbles: $out" ;; esac
set +e
fabricsim explain schedule --pp 0 >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "--pp 0 exit $rc"
fabricsim explain nothing >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "unknown topic exit $rc"
set -e
echo "explain: $n README blocks ok"
