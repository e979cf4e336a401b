#!/usr/bin/env bash
# test-progress.sh — the progress line (report/progress.h, issue 22 item 2):
# a run of coll or train that lasts over a second draws "CMD: elapsed, N
# events, simulated T" on stderr when stderr is a terminal, and ends that
# line with a newline; so does explain overlap; --quiet (-q) draws nothing;
# stdout is never touched; an error (Ctrl-C) while the line is drawn is
# printed on a line of its own.
# stderr here is a pseudo-terminal (python3's pty), and the command is held
# stopped for 1.5 s once it has started, so that the run lasts over a second
# on any machine while its simulation ticks after the pause.  (A stderr that
# is not a terminal: nothing, test-scenario.sh.)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
T="$FS_SOURCE_ROOT/topologies"
W="$FS_SOURCE_ROOT/workloads"

cat >"$tmp/on_tty.py" <<'PY'
# on_tty.py [--int] OUT COMMAND...: runs COMMAND with stderr on a pseudo-terminal
# and stdout in OUT, stops it for 1.5 s 0.1 s after its start, and prints what it
# wrote on the terminal ("\r\n" as the terminal turns "\n"), then "<end>"; with
# --int, sends it SIGINT once a progress line is drawn.  Exit status: COMMAND's.
import os, pty, select, signal, subprocess, sys, time
interrupt = sys.argv[1] == "--int"
args = sys.argv[2:] if interrupt else sys.argv[1:]
master, slave = pty.openpty()
with open(args[0], "wb") as out:
    p = subprocess.Popen(args[1:], stdin=subprocess.DEVNULL, stdout=out, stderr=slave)
os.close(slave)
got, t0, paused = b"", time.monotonic(), False
while True:
    if not paused and time.monotonic() - t0 > 0.1:
        p.send_signal(signal.SIGSTOP)
        time.sleep(1.5)
        p.send_signal(signal.SIGCONT)
        paused = True
    if interrupt and b" events, " in got:
        p.send_signal(signal.SIGINT)
        interrupt = False
    if select.select([master], [], [], 0.05)[0]:
        try:
            b = os.read(master, 4096)
        except OSError:  # EIO: the command closed the terminal
            break
        if not b:
            break
        got += b
    elif p.poll() is not None and paused:
        break
p.wait()
sys.stdout.write(got.decode(errors="replace") + "<end>")
sys.exit(p.returncode)
PY

COLL=(coll "$T/dgx-h100-ib-ndr.yaml" -D nodes=8 -b 8 -e 8G -f 2)
TRAIN=(train "$T/dgx-h100-superpod-256.yaml" "$W/gpt3-175b.yaml" --tp=8 --pp=8
       --global-batch-size=1024)
# The reduced form (FS_TEST_REDUCED=1, the sanitizer build) checks coll only.
RUNS=(COLL TRAIN EO)
[ "${FS_TEST_REDUCED:-0}" = 1 ] && RUNS=(COLL)
# explain overlap runs two steps, and has its progress line too.
EO=(explain overlap "$T/dgx-h100-superpod-256.yaml" "$W/gpt3-175b.yaml" --tp=8 --pp=8
    --global-batch-size=1024)
for run in "${RUNS[@]}"; do
  declare -n args=$run
  cmd="${args[0]}"; [ "$cmd" = explain ] && cmd="explain overlap"
  err=$(python3 "$tmp/on_tty.py" "$tmp/out" "$FABRICSIM" "${args[@]}") || fail "$cmd exited $?"
  contains "$err" "$cmd: " "$cmd's progress line on a terminal"
  contains "$err" " M events, simulated " "$cmd's progress line"
  contains "$err" $'   \r\n<end>' "$cmd: the progress line ends with a newline"
  grep -q "events" "$tmp/out" && fail "$cmd: the progress line went to stdout"
  [ -s "$tmp/out" ] || fail "$cmd: no report on stdout"
  err=$(python3 "$tmp/on_tty.py" "$tmp/out" "$FABRICSIM" "${args[@]}" --quiet) ||
    fail "$cmd --quiet exited $?"
  [ "$err" = "<end>" ] || fail "$cmd --quiet drew on the terminal: $err"
  unset -n args
done
# An error while the line is drawn (here Ctrl-C) starts on a line of its own.
set +e
err=$(python3 "$tmp/on_tty.py" --int "$tmp/out" "$FABRICSIM" "${COLL[@]}")
st=$?
set -e
[ "$st" -eq 130 ] || fail "coll interrupted on a terminal exited $st, expected 130: $err"
contains "$err" $'   \r\nfabricsim coll: interrupted at simulated time' "the error after the progress line"
contains "$err" $'partial results not written\r\n<end>' "nothing after the error"

echo "cli progress: ok"
