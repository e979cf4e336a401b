#!/usr/bin/env bash
# test-check-comments.sh — tools/check-comments on this tree (every function
# of 40 lines or more states its job in a comment above it, issue 22 item 8)
# and on small trees with each kind of fault (no comment, a comment apart
# from the function by a blank line, a section rule, a two-word comment, a
# comment after code, a long function of tools/ or of a CUDA probe), which
# it must report as file:line:col with exit status 1; block and `//`
# comments right above pass.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" check-comments

# f NAME LINES: a C function NAME whose signature and body span LINES lines.
f() {
  printf 'static int %s(int a,\n                 int b)\n{\n' "$1"
  for _ in $(seq $(($2 - 4))); do printf '  a += b;\n'; done
  printf '}\n'
}
# mk ABOVE: src/m/m.c holds a short function, then ABOVE, then a 40-line one.
mk() {
  rm -rf "$tmp/t"; mkdir -p "$tmp/t/src/m"
  { printf '#include <stdio.h>\n\n'; f short 10; printf '\n%b' "$1"; f long 40; } \
    > "$tmp/t/src/m/m.c"
}
at=$((2 + 10 + 2))  # the long function's first line without a comment
# good ABOVE WHAT: a tree with ABOVE over the long function passes.
good() {
  local out
  mk "$1"; out=$("$check" "$tmp/t" 2>&1) || fail "$2: $out"
}

good '/* Adds b to a, many times over. */\n' "a block comment"
good '/* Adds b to a,\n * many times over. */\n' "a comment of two lines"
good '// Adds b to a,\n// many times over.\n' "a // comment"

mk ''
expect "src/m/m.c:$at:1: long has 40 lines and no comment above it that states its job"
mk '/* Adds b to a, many times over. */\n\n'
expect "src/m/m.c:$((at + 2)):1: long has 40 lines and no comment above it"
mk '/* ---- the long ones ---- */\n'
expect "src/m/m.c:$((at + 1)):1: long has 40 lines and no comment above it"
mk '/* Long. */\n'
expect "src/m/m.c:$((at + 1)):1: long has 40 lines"
mk 'int x; /* a declaration, not a comment above */\n'
expect "src/m/m.c:$((at + 1)):1: long has 40 lines"

# The build's tools and the CUDA probes are checked too (a .cu file as C).
for where in tools/t.c validation/probes/t.cu; do
  rm -rf "$tmp/t"; mkdir -p "$tmp/t/src" "$tmp/t/$(dirname "$where")"; f long 40 > "$tmp/t/$where"
  expect "$where:1:1: long has 40 lines and no comment above it"
  { printf '/* Adds b to a, many times over. */\n'; f long 40; } > "$tmp/t/$where"
  out=$("$check" "$tmp/t" 2>&1) || fail "$where with its comment: $out"
done

# 39 lines need no comment; --min-lines lowers the bar.
rm -rf "$tmp/t"; mkdir -p "$tmp/t/src/m"; f mid 39 > "$tmp/t/src/m/m.c"
out=$("$check" "$tmp/t" 2>&1) || fail "a 39-line function: $out"
out=$("$check" --min-lines 39 "$tmp/t" 2>/dev/null); st=$?
[ "$st" -eq 1 ] || fail "--min-lines 39: exit $st, expected 1"

"$check" "$tmp/none" >/dev/null 2>&1; st=$?
[ "$st" -eq 2 ] || fail "a tree without src/: exit $st, expected 2"

lint_done
