#!/usr/bin/env bash
# test-check-layers.sh — tools/check-layers on this tree (no include goes
# up the layers of src/meson.build) and on small trees with each kind of
# fault (an upward include, a table out of order, a command layer of
# 2,500 lines or more, an engine built outside the scenario), which it
# must report as file:line:col with exit status 1.  Also the build's check
# (--build STAMP: an upward include fails it and writes no stamp), and, in
# a build folder ($FS_BUILD_ROOT), that every module's objects wait for it:
# each compile edge of build.ninja has src/layers-ok.h as an order-only
# input, so an upward include fails the build before anything compiles.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" check-layers

# A tree of three layers: low, mid (uses low), high (uses low and mid).
mk() {
  rm -rf "$tmp/t"; mkdir -p "$tmp/t/src/low" "$tmp/t/src/mid" "$tmp/t/src/high" "$tmp/t/src/cli"
  cat > "$tmp/t/src/meson.build" <<'MESON'
fs_layers = [
  ['low', []],
  ['mid', ['low']],
  ['high', ['low', 'mid']],
]
MESON
  printf '#pragma once\n' > "$tmp/t/src/low/low.h"
  printf '#include "low/low.h"\n' > "$tmp/t/src/mid/mid.h"
  printf '#include "low/low.h"\n#include "mid/mid.h"\n' > "$tmp/t/src/high/high.c"
  printf '#include "high/high.h"\n#include "low/low.h"\n' > "$tmp/t/src/cli/main.c"
  cat > "$tmp/t/src/README.md" <<'MD'
| module | responsibility | uses | key headers |
|---|---|---|---|
| `low/` | x | — | `low.h` |
| `mid/` | x | `low` | `mid.h` |
| `high/` | x | `low`, `mid` | `high.h` |
| `cli/` | x | all | |
MD
}

mk
out=$("$check" "$tmp/t" 2>&1) || fail "a good tree: $out"

mk; printf '#include "mid/mid.h"\n' > "$tmp/t/src/low/up.c"
expect "src/low/up.c:1:1: includes mid/mid.h, but mid is above low in the layers"

mk; sed -i "s/\['mid', \['low'\]\]/['mid', []]/" "$tmp/t/src/meson.build"
sed -i 's/| `mid\/` | x | `low` |/| `mid\/` | x | — |/' "$tmp/t/src/README.md"
expect "src/mid/mid.h:1:1: includes low/low.h, but mid does not declare low"

mk; printf '#pragma once\n' > "$tmp/t/src/high/high.c"
expect "src/meson.build:4:1: high declares low, mid but includes nothing from it"

mk; sed -i "s/\['low', \[\]\],/['low', ['mid']],/" "$tmp/t/src/meson.build"
expect "src/meson.build:2:1: low uses mid, listed below it"

mk; mkdir -p "$tmp/t/src/extra"
expect "src/meson.build:1:1: src/extra/ is not in the layer table fs_layers"

mk; sed -i 's/| `high\/` | x | `low`, `mid` |/| `high\/` | x | `low` |/' "$tmp/t/src/README.md"
expect "src/README.md:5:1: \`high/\` uses low, mid (fs_layers in src/meson.build), not low"

mk; seq 2500 | sed 's/.*/\/\/ line/' >> "$tmp/t/src/cli/main.c"
expect "src/cli:1:1: the command layer has 2502 lines of .c and .h, not under 2500"

mk; printf '#include "low/low.h"\n#include "mid/mid.h"\n  r = fs_router_new(topo, net, NULL);\n' \
  > "$tmp/t/src/high/high.c"
expect "src/high/high.c:3:7: builds an engine (fs_router_new) outside src/scenario/"

# The build's check: includes only; the stamp only when they are right.
mk; printf '#include "mid/mid.h"\n' > "$tmp/t/src/low/up.c"
out=$("$check" --build "$tmp/stamp.h" "$tmp/t" 2>&1); st=$?
[ "$st" -eq 1 ] || fail "--build on an upward include: exit $st, expected 1"
printf '%s\n' "$out" | grep -qF "src/low/up.c:1:1: includes mid/mid.h, but mid is above low" ||
  fail "--build on an upward include: $out"
[ ! -e "$tmp/stamp.h" ] || fail "--build wrote its stamp despite an upward include"
mk; seq 2500 | sed 's/.*/\/\/ line/' >> "$tmp/t/src/cli/main.c"
"$check" --build "$tmp/stamp.h" "$tmp/t" >/dev/null 2>&1 || fail "--build failed on a rule that is not an include's"
[ -s "$tmp/stamp.h" ] || fail "--build wrote no stamp on good includes"
if [ -n "${FS_BUILD_ROOT:-}" ] && [ -f "$FS_BUILD_ROOT/build.ninja" ]; then
  edges=$(grep -E '^build src/libfs[a-z]+\.a\.p/[^:]*\.o:' "$FS_BUILD_ROOT/build.ninja")
  [ "$(printf '%s\n' "$edges" | wc -l)" -ge 100 ] || fail "build.ninja: too few module objects: $edges"
  loose=$(printf '%s\n' "$edges" | grep -v '|| .*src/layers-ok\.h' || true)
  [ -z "$loose" ] || fail "module objects compiled without the layer check: $loose"
fi

mk; printf 'fs_layers = [\n  junk\n]\n' > "$tmp/t/src/meson.build"
"$check" "$tmp/t" >/dev/null 2>&1; st=$?
[ "$st" -eq 2 ] || fail "a table that does not parse: exit $st, expected 2"

lint_done
