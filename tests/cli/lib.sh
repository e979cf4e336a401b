# shellcheck shell=bash
# tests/cli/lib.sh — the preamble of every CLI test, sourced as its first
# command:
#
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#
# It sets `set -euo pipefail`; requires $FABRICSIM (meson sets it, and the
# other variables: see README.md here) and defaults $FS_SOURCE_ROOT,
# $FS_TEST_DATA and $FABRICSIM_MODELS to this tree for a run by hand; makes
# the scratch folder $tmp, removed on exit; and defines the helpers below.
# A script that needs another EXIT trap must remove $tmp in it too.
set -euo pipefail
: "${FABRICSIM:?set FABRICSIM to the fabricsim binary}"
: "${FS_SOURCE_ROOT:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${FS_TEST_DATA:=$FS_SOURCE_ROOT/tests/data}"
: "${FABRICSIM_MODELS:=$FS_SOURCE_ROOT/models}"
export FS_SOURCE_ROOT FS_TEST_DATA FABRICSIM_MODELS

# fail WHAT: the test's failure, "FAIL: WHAT" on stderr, exit 1.
fail() { echo "FAIL: $*" >&2; exit 1; }
# contains TEXT FRAGMENT WHAT: fails unless TEXT holds FRAGMENT.
contains() { case "$1" in *"$2"*) ;; *) fail "$3: output does not contain '$2': $1" ;; esac; }
# one_line TEXT WHAT: fails unless TEXT (an error message) is one line.
one_line() { [ "$(printf '%s\n' "$1" | wc -l)" -eq 1 ] || fail "$2: error is not one line: $1"; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# refused WHAT COMMAND...: runs COMMAND, which must refuse its input: exit
# status 2 and nothing on stdout; its stderr is left in $err.
refused() {
  local what=$1 out st
  shift
  set +e
  out=$("$@" 2>"$tmp/refused.err")
  st=$?
  set -e
  err=$(cat "$tmp/refused.err")
  [ "$st" -eq 2 ] || fail "$what: exit $st, expected 2: $err"
  [ -z "$out" ] || fail "$what: stdout not empty: $out"
}

# ---- waiting for a running command, then signalling it -------------------
# (test-interrupt.sh, test-interrupt-output.sh).  No time limit: the test's
# own timeout bounds a wait, and on a loaded machine any fixed delay is
# too short.

# pause: 20 ms without starting a process (`sleep` 50 times a second cost
# more CPU than some of the runs it waits for): a read with a timeout on a
# FIFO that nothing writes, opened once per test.
pause() {
  if [ -z "${pause_fd:-}" ]; then
    mkfifo "$tmp/pause.fifo"
    exec {pause_fd}<>"$tmp/pause.fifo"
  fi
  read -r -t 0.02 -u "$pause_fd" _ || true
}

# wait_until PID COND...: runs COND every 20 ms until it succeeds; returns
# 1 when PID ends first.
wait_until() {
  local pid="$1"
  shift
  until "$@"; do
    kill -0 "$pid" 2>/dev/null || return 1
    pause
  done
}

# signal_when PID SIGNAL COND...: waits until COND holds, then sends SIGNAL
# to PID; returns 1 (nothing sent) when PID ends first.
signal_when() {
  local pid="$1" sig="$2"
  shift 2
  wait_until "$pid" "$@" || return 1
  kill -"$sig" "$pid" 2>/dev/null
}

# The conditions.
# sigint_handled PID: PID is fabricsim with its SIGINT handler installed
# (bit 1 of SigCgt in /proc/PID/status): from then on SIGINT is the
# command's to handle; before that it kills the process outright (exit
# 130, nothing on stderr).
sigint_handled() {
  local pid="$1" comm mask
  comm=$(cat "/proc/$pid/comm" 2>/dev/null || true)
  mask=$(sed -n 's/^SigCgt:[[:space:]]*//p' "/proc/$pid/status" 2>/dev/null || true)
  [ "$comm" = fabricsim ] && [ -n "$mask" ] && (( (16#$mask >> 1) & 1 ))
}
# has_lines FILE N: FILE exists and holds at least N lines.
has_lines() { [ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ]; }
# writing PID OUT: PID's temporary file of OUT exists (the atomic writer of
# src/util/strutil.h is writing OUT).
writing() { compgen -G "$2.tmp-$1-*" >/dev/null; }
