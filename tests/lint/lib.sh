# shellcheck shell=bash
# tests/lint/lib.sh — the preamble of the lint tests of a checker tool
# (test-check-layers.sh, test-check-comments.sh), sourced after `set -uo
# pipefail` with the tool's name:
#
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" check-layers
#
# It sets $root (the source tree: $FS_SOURCE_ROOT or this checkout) and
# $check (tools/NAME), makes the scratch folder $tmp (removed on exit) where
# a test builds its small faulty trees under $tmp/t, runs the tool on the
# tree itself (which must pass), and defines the helpers below.  Failures
# are counted, not fatal, so one run lists them all; the script ends with
# `lint_done`.
root=${FS_SOURCE_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
check="$root/tools/$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
# fail WHAT: counts a failure, "FAIL: WHAT" on stderr.
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
# expect WANT: the tool on $tmp/t exits 1 and prints WANT.
expect() {
  local out st
  out=$("$check" "$tmp/t" 2>/dev/null); st=$?
  [ "$st" -eq 1 ] || fail "$1: exit $st, expected 1"
  printf '%s\n' "$out" | grep -qF -- "$1" || fail "expected '$1', got: $out"
}
# lint_done: "ok" when nothing failed, else exit status 1.
lint_done() { [ "$fails" -eq 0 ] && echo "ok" || exit 1; }

out=$("$check" "$root" 2>&1) || fail "the tree itself: $out"
