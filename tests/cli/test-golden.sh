#!/usr/bin/env bash
# test-golden.sh — fixed commands whose stdout must match tests/data/golden/
# byte for byte (determinism; numbers change only on purpose).  The commands
# are the table in tests/data/golden/README.md.
set -euo pipefail
: "${FABRICSIM:?set FABRICSIM to the fabricsim binary}"
: "${FS_SOURCE_ROOT:?set FS_SOURCE_ROOT to the source tree}"

fail() { echo "FAIL: $*" >&2; exit 1; }
G="$FS_SOURCE_ROOT/tests/data/golden"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$FS_SOURCE_ROOT"

check() {
  local name=$1; shift
  "$FABRICSIM" "$@" >"$tmp/$name.txt" || fail "$name: fabricsim $* exited $?"
  diff -u "$G/$name.txt" "$tmp/$name.txt" >&2 || fail "$name: output differs from $G/$name.txt"
  # Twice in a row: same bytes.
  "$FABRICSIM" "$@" | cmp -s - "$tmp/$name.txt" || fail "$name: two runs differ"
}

check coll-dgx-h100-allreduce coll topologies/dgx-h100.yaml -o all_reduce -b 8 -e 16G -f 2
echo "golden: ok"
