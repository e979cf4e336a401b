#!/usr/bin/env bash
# test-suites.sh — the suite names that exist and only those (issue 22,
# item 6): the names `tools/test --suite` accepts are the suites of this
# build's tests (meson introspect), every one of them; `cuda` may be offered
# where the build has no CUDA probes (nvcc not found), nothing else.
set -uo pipefail
root=${FS_SOURCE_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
: "${FS_BUILD_ROOT:?set FS_BUILD_ROOT to the build folder}"
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# tools/test's list: the pattern of its `--suite` case, "unit|cli|...)".
offered=$(sed -n 's/^ *\([a-z|-]*\)) suite_args+=(--suite "$2") ;;$/\1/p' "$root/tools/test" | tr '|' '\n' | sort)
[ -n "$offered" ] || fail "no --suite list found in tools/test"
existing=$(meson introspect "$FS_BUILD_ROOT" --tests |
  python3 -c 'import json, sys
print("\n".join(sorted({s.split(":", 1)[-1] for t in json.load(sys.stdin) for s in t["suite"]})))')
[ -n "$existing" ] || fail "meson introspect listed no suites"
for s in $existing; do
  grep -qx -- "$s" <<<"$offered" || fail "suite '$s' exists but tools/test --suite does not offer it"
done
for s in $offered; do
  grep -qx -- "$s" <<<"$existing" || [ "$s" = cuda ] ||
    fail "tools/test --suite offers '$s', which no test has"
done
# An unknown name is refused before anything is built.
out=$("$root/tools/test" --suite no-such-suite 2>&1); st=$?
[ "$st" -eq 2 ] || fail "tools/test --suite no-such-suite exited $st, expected 2"
grep -q "unknown suite 'no-such-suite'" <<<"$out" || fail "unknown suite: $out"
[ "$fails" -eq 0 ] && echo "ok" || exit 1
