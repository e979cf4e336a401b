#!/usr/bin/env bash
# test-import.sh — `fabricsim topo import-smi` and `import-nccl`: every y_
# sample imports, the output loads, and `topo paths` on it prints the same
# class for every GPU pair as the nvidia-smi input; -o writes the file
# (atomically, same bytes as stdout); bad inputs exit 2 with file:line:col
# on one stderr line; option misuse exits 2.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# The GPU x GPU classes of an nvidia-smi matrix (GPU rows, GPU columns),
# colour codes and carriage returns removed, one line per row.
smi_gpu_matrix() {
  sed -e 's/\x1b\[[0-9;]*[A-Za-z]//g' -e 's/\r//g' "$1" | awk '
    !h && $1 == "GPU0" && $2 != "X" { h = 1; n = 0; for (i = 1; i <= NF; i++) if ($i ~ /^GPU[0-9]+$/) n++; next }
    h && $1 ~ /^GPU[0-9]+$/ { line = ""; for (i = 2; i <= n + 1; i++) line = line (i > 2 ? " " : "") $i; print line }'
}
# The same from `topo paths` output.
paths_gpu_matrix() {
  awk '/^GPU[0-9]+ / && $2 != "=" { line = ""; for (i = 2; i < NF; i++) line = line (i > 2 ? " " : "") $i; print line }' "$1"
}

n=0
for f in "$FS_TEST_DATA"/smi/y_*.txt; do
  b=$(basename "$f" .txt)
  "$FABRICSIM" topo import-smi "$f" -o "$tmp/$b.yaml" || fail "import-smi $f exited $?"
  head -1 "$tmp/$b.yaml" | grep -q '^# Imported by `fabricsim topo import-smi` from' \
    || fail "$b: no header comment"
  "$FABRICSIM" topo import-smi "$f" > "$tmp/$b.stdout.yaml"
  cmp -s "$tmp/$b.yaml" "$tmp/$b.stdout.yaml" || fail "$b: -o and stdout differ"
  "$FABRICSIM" topo check "$tmp/$b.yaml" > /dev/null || fail "$b: output does not pass topo check"
  "$FABRICSIM" topo paths "$tmp/$b.yaml" > "$tmp/$b.paths"
  smi_gpu_matrix "$f" > "$tmp/$b.want"
  paths_gpu_matrix "$tmp/$b.paths" > "$tmp/$b.got"
  [ -s "$tmp/$b.want" ] || fail "$b: could not read the input matrix"
  diff "$tmp/$b.want" "$tmp/$b.got" > /dev/null || fail "$b: topo paths differs from the input:
$(diff "$tmp/$b.want" "$tmp/$b.got")"
  n=$((n + 1))
done
[ "$n" -ge 5 ] || fail "expected at least 5 smi samples, found $n"

for f in "$FS_TEST_DATA"/nccl-xml/y_*.xml; do
  b=$(basename "$f" .xml)
  "$FABRICSIM" topo import-nccl "$f" -o "$tmp/$b.yaml" || fail "import-nccl $f exited $?"
  head -1 "$tmp/$b.yaml" | grep -q '^# Imported by `fabricsim topo import-nccl` from' \
    || fail "$b: no header comment"
  "$FABRICSIM" topo paths "$tmp/$b.yaml" > "$tmp/$b.paths"
  paths_gpu_matrix "$tmp/$b.paths" > "$tmp/$b.got"
  diff "${f%.xml}.paths" "$tmp/$b.got" > /dev/null || fail "$b: paths differ from ${f%.xml}.paths"
done

# Rejected inputs: exit 2, one line, file:line:col and the .err fragment.
for f in "$FS_TEST_DATA"/smi/n_*.txt "$FS_TEST_DATA"/nccl-xml/n_*.xml; do
  case "$f" in *.txt) action=import-smi ;; *) action=import-nccl ;; esac
  set +e
  err=$("$FABRICSIM" topo "$action" "$f" 2>&1 >/dev/null)
  rc=$?
  set -e
  [ "$rc" -eq 2 ] || fail "$f: exit $rc, expected 2 ($err)"
  [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "$f: message on several lines: $err"
  contains "$err" "$(cat "${f%.*}.err")" "$f"
done

# Model flags, and their misuse.
out=$("$FABRICSIM" topo import-smi "$FS_TEST_DATA/smi/y_pcie-8gpu.txt" --gpu rtx-4090 --cpu epyc-7742 --nic connectx-6)
contains "$out" "model: rtx-4090}" "--gpu"
contains "$out" "given with --gpu" "--gpu"
set +e
err=$("$FABRICSIM" topo import-smi "$FS_TEST_DATA/smi/y_pcie-8gpu.txt" --gpu h100-sxn 2>&1); rc=$?
[ "$rc" -eq 2 ] || fail "unknown --gpu: exit $rc"
contains "$err" 'did you mean "h100-sxm"' "unknown --gpu"
err=$("$FABRICSIM" topo check "$FS_TEST_DATA/smi/y_pcie-8gpu.txt" --gpu h100-sxm 2>&1); rc=$?
[ "$rc" -eq 2 ] || fail "--gpu with check: exit $rc"
err=$("$FABRICSIM" topo import-smi "$tmp/does-not-exist.txt" 2>&1); rc=$?
[ "$rc" -eq 2 ] || fail "missing input: exit $rc"
err=$("$FABRICSIM" topo import-smi "$FS_TEST_DATA/smi/y_pcie-8gpu.txt" -o "$tmp/no/such/dir/x.yaml" 2>&1); rc=$?
[ "$rc" -eq 1 ] || fail "unwritable output: exit $rc ($err)"
set -e

# --smi-q: nvidia-smi -L text identifies the GPU (no GPU guess line then);
# misuse and text without a clue exit 2 with one line.
printf 'GPU 0: NVIDIA H200 (UUID: GPU-0)\n' > "$tmp/l.txt"
"$FABRICSIM" topo import-smi "$FS_TEST_DATA/smi/y_dgx-h100-nics.txt" --smi-q "$tmp/l.txt" \
  > "$tmp/h200.yaml" 2> "$tmp/h200.err" || fail "--smi-q exited $?"
grep -q "model: h200-sxm}" "$tmp/h200.yaml" || fail "--smi-q did not identify h200-sxm"
! grep -q "guess: GPU" "$tmp/h200.err" || fail "--smi-q still guessed the GPU"
"$FABRICSIM" topo import-smi "$FS_TEST_DATA/smi/y_dgx-h100-nics.txt" 2> "$tmp/guess.err" > /dev/null
grep -q "guess: GPU h100-sxm .*also fits h200-sxm, b200" "$tmp/guess.err" || fail "no GPU guess line"
set +e
printf 'hello\n' > "$tmp/none.txt"
err=$("$FABRICSIM" topo import-smi "$FS_TEST_DATA/smi/y_dgx-h100-nics.txt" --smi-q "$tmp/none.txt" 2>&1 >/dev/null); rc=$?
[ "$rc" -eq 2 ] && [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "--smi-q without clues: exit $rc ($err)"
contains "$err" "none.txt:1:1: no clue found" "--smi-q without clues"
err=$("$FABRICSIM" topo import-nccl "$FS_TEST_DATA/nccl-xml/y_dgx-h100.xml" --smi-q "$tmp/l.txt" 2>&1); rc=$?
[ "$rc" -eq 2 ] || fail "--smi-q with import-nccl: exit $rc"
contains "$err" "--smi-q applies to import-smi only" "--smi-q with import-nccl"
set -e

# Determinism: the same input gives the same bytes.
"$FABRICSIM" topo import-nccl "$FS_TEST_DATA/nccl-xml/y_dgx-a100.xml" > "$tmp/a1"
"$FABRICSIM" topo import-nccl "$FS_TEST_DATA/nccl-xml/y_dgx-a100.xml" > "$tmp/a2"
cmp -s "$tmp/a1" "$tmp/a2" || fail "import-nccl is not deterministic"
echo "ok"
