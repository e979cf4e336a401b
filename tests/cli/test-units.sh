#!/usr/bin/env bash
# test-units.sh — `fabricsim units`: parses quantities as the YAML loaders do.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# expect_out ARGS... :: FRAGMENT: runs `fabricsim units ARGS`, must exit 0 and print FRAGMENT.
expect_out() {
  local args=() frag
  while [ "$1" != "::" ]; do args+=("$1"); shift; done
  frag="$2"
  local out
  out=$("$FABRICSIM" units "${args[@]}" 2>&1) || fail "units ${args[*]} exited $? (output: $out)"
  case "$out" in
    *"$frag"*) ;;
    *) fail "units ${args[*]}: output does not contain '$frag': $out" ;;
  esac
}

# expect_bad ARGS... :: FRAGMENT: must exit 2 with exactly one line on stderr containing FRAGMENT.
expect_bad() {
  local args=() frag
  while [ "$1" != "::" ]; do args+=("$1"); shift; done
  frag="$2"
  local status=0 out err
  err=$("$FABRICSIM" units "${args[@]}" 2>&1 >/dev/null) || status=$?
  [ "$status" -eq 2 ] || fail "units ${args[*]}: exit status $status, expected 2"
  [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "units ${args[*]}: stderr is not one line: $err"
  case "$err" in
    *"$frag"*) ;;
    *) fail "units ${args[*]}: stderr does not contain '$frag': $err" ;;
  esac
  out=$("$FABRICSIM" units "${args[@]}" 2>/dev/null) || true
  [ -z "$out" ] || fail "units ${args[*]}: printed to stdout on error: $out"
}

expect_out "900 GB/s" :: "900000000000 B/s"
expect_out "900 GB/s" :: "900.0 GB/s"
expect_out "400 Gb/s" :: "50000000000 B/s"
expect_out "1 GiB/s" :: "1073741824 B/s"
expect_out "1.5 us" :: "1500000 ps"
expect_out "1.5 µs" :: "1.500 us"
expect_out 16G :: "17179869184 B"
expect_out 16G :: "16 GiB"
expect_out "80 GB" :: "80000000000 B"
expect_out "32 GT/s" :: "32000000000 bit/s"
expect_out "700 W" :: "700 W"
expect_out "989 TFLOP/s" :: "989000000000000 FLOP/s"
expect_out --kind time "2 ms" :: "2000000000 ps"
expect_out --kind lane-rate "53.125 Gb/s" :: "53125000000 bit/s"

# Several quantities: one line each, in order.
out=$("$FABRICSIM" units "900 GB/s" "1.5 us" 16G) || fail "three quantities exited $?"
[ "$(printf '%s\n' "$out" | wc -l)" -eq 3 ] || fail "three quantities gave: $out"
[ "$(printf '%s\n' "$out" | head -1 | cut -f2)" = bandwidth ] || fail "first line is not the bandwidth: $out"

# Determinism: the same input prints the same bytes.
a=$("$FABRICSIM" units "450 GB/s" "123456 ps" 1536)
b=$("$FABRICSIM" units "450 GB/s" "123456 ps" 1536)
[ "$a" = "$b" ] || fail "output differs between runs"

expect_bad --kind time "12 parsecs" :: 'unknown unit "parsecs"'
expect_bad --kind time "12 parsecs" :: "known units: ps, ns, us"
expect_bad --kind bandwidth fast :: 'expected a bandwidth like "50 GB/s", got "fast"'
expect_bad --kind bandwidth "5 GB/sx" :: 'unexpected "x" after the unit "GB/s"'
expect_bad --kind bandwidth "1e30 TB/s" :: "out of range"
expect_bad --kind size "1e30 TB" :: "too large"
expect_bad --kind time -- "-5 ns" :: "cannot be negative"
expect_bad --kind furlongs 5 :: 'unknown kind "furlongs"'
expect_bad "12 parsecs" :: '"12 parsecs" is not a bandwidth, lane rate, time'
expect_bad "1e30 TB/s" :: "the limit is 1000000 TB/s"
expect_bad -- "-5 ns" :: "a time cannot be negative"
expect_bad "5 GB/sx" :: 'unexpected "x" after the unit "GB/s"'
expect_bad $'50\nGB/s' :: '"50\nGB/s" is not a bandwidth'

# No quantity at all is a usage error.
status=0
"$FABRICSIM" units >/dev/null 2>&1 || status=$?
[ "$status" -eq 2 ] || fail "units without arguments exited $status, expected 2"

echo "cli units: ok"
