#!/usr/bin/env bash
# test-golden.sh — every command of tests/data/golden/commands.txt (text,
# JSON and CSV of each command) must print its file byte for byte
# (determinism; numbers change only on purpose, with tools/regen-golden).
# The check itself is tools/regen-golden --check, so the test and the tool
# that rewrites the files run the commands the same way.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

n=$(grep -cv '^\(#\|$\)' "$FS_SOURCE_ROOT/tests/data/golden/commands.txt")
[ "$n" -ge 40 ] || fail "only $n golden commands listed"
FABRICSIM="$FABRICSIM" "$FS_SOURCE_ROOT/tools/regen-golden" --check || fail "golden outputs differ (see above)"
echo "golden: ok"
