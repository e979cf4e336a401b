#!/usr/bin/env bash
# test-interrupt-output.sh — a stop signal during the *output* phase (issue
# 21 item 5).  The trace writers (train, flows and replay --trace; coll
# --trace shares their writer, src/report/links.c)
# build the trace as they write it, through the atomic writer: the
# temporary file OUT.tmp-PID-XXXXXX appears when the simulation is over and
# the trace starts, so the test waits for it and then sends SIGINT or
# SIGTERM.  Each run must exit 130 with one line "interrupted while writing
# OUT; nothing written", leave no OUT and no temporary file.  Then a
# temporary file of a killed run (its PID gone) is removed by the next run
# writing the same trace, and one of a live process is kept.  (A stop
# during the simulation itself is test-interrupt.sh's; sweeps keep
# OUT.partial for --resume by design, tested there.)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

T="$FS_SOURCE_ROOT/topologies/dgx-h100.yaml"
TIB="$FS_SOURCE_ROOT/topologies/dgx-h100-ib-ndr.yaml"
W="$FS_SOURCE_ROOT/workloads"

# stopped_in_output NAME SIGNAL OUT CMD...: runs CMD, sends SIGNAL once the
# output phase has begun, checks status 130, the message, and that neither
# OUT nor any temporary file of it is left.
# A run that finished its write before the signal arrived (exit 0 and a
# whole OUT: the signal came too late, not a stop ignored) is run again,
# up to 5 times.
stopped_in_output() {
  local name="$1" sig="$2" out="$3" rc=0 pid try
  shift 3
  for try in 1 2 3 4 5; do
    rc=0
    rm -f "$out"
    "$@" >"$tmp/stdout" 2>"$tmp/err" &
    pid=$!
    if ! signal_when "$pid" "$sig" writing "$pid" "$out"; then
      wait "$pid" || fail "$name: exit status $? before the output phase: $(cat "$tmp/err")"
      continue # the whole write fell between two looks
    fi
    wait "$pid" || rc=$?
    [ "$rc" -eq 0 ] && [ -s "$out" ] && ! compgen -G "$out.tmp-*" >/dev/null || break
  done
  [ "$rc" -eq 130 ] || fail "$name: exit status $rc after SIG$sig in the output phase, expected 130: $(cat "$tmp/err")"
  [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$name: stderr is not one line: $(cat "$tmp/err")"
  grep -qx "fabricsim [a-z]*: interrupted while writing $out; nothing written" "$tmp/err" \
    || fail "$name: unexpected message: $(cat "$tmp/err")"
  [ ! -e "$out" ] || fail "$name: $out was written by an interrupted run"
  ! compgen -G "$out.tmp-*" >/dev/null || fail "$name: a temporary file was left: $(ls "$tmp")"
  [ ! -s "$tmp/stdout" ] || fail "$name: a report was printed after the interrupt"
}

# Inputs whose traces take long enough to write (10 MB and more) that the
# signal lands while the file is still being built, and whose simulations
# are quick: transfers one at a time, compute-only ranks.
python3 - "$tmp/flows.csv" "$tmp/trace-in.json" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    f.write("id,start,src,dst,bytes\n")
    for i in range(60000):
        a = i % 8
        f.write(f"f{i},{i} us,gpu{a},gpu{(a + 1 + i % 7) % 8},{1 + i % 7}K\n")
ops = []
for k in range(30000):
    for r in range(8):
        ops.append({"id": f"c{k}.{r}", "rank": r, "kind": "compute", "duration": "1 us"})
json.dump({"schema_version": 1, "nranks": 8,
           "communicators": [{"name": "world", "ranks": list(range(8))}], "ops": ops},
          open(sys.argv[2], "w"))
PY

stopped_in_output "train --trace" INT "$tmp/train.json" \
  "$FABRICSIM" train "$TIB" "$W/llama2-7b.yaml" -D nodes=2 --pp=8 -q --trace "$tmp/train.json"
stopped_in_output "replay --trace" TERM "$tmp/replay.json" \
  "$FABRICSIM" replay "$T" "$tmp/trace-in.json" --trace "$tmp/replay.json"
stopped_in_output "flows --trace" TERM "$tmp/flows.json" \
  "$FABRICSIM" flows "$T" "$tmp/flows.csv" --trace "$tmp/flows.json"

# A killed run's temporary trace (its PID no longer runs) is removed by the
# next run writing the same trace; a live process's is kept.
dead=$(sh -c 'echo $$')
touch "$tmp/small.json.tmp-$dead-AbC123" "$tmp/small.json.tmp-$$-XyZ789"
printf 'id,start,src,dst,bytes\nx,0 us,gpu0,gpu1,1M\n' >"$tmp/one.csv"
"$FABRICSIM" flows "$T" "$tmp/one.csv" --trace "$tmp/small.json" >/dev/null || fail "flows --trace failed"
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$tmp/small.json" \
  || fail "the trace is not JSON"
[ ! -e "$tmp/small.json.tmp-$dead-AbC123" ] || fail "a killed run's temporary trace was kept"
[ -e "$tmp/small.json.tmp-$$-XyZ789" ] || fail "a live process's temporary trace was removed"
echo "cli interrupt-output: ok"
