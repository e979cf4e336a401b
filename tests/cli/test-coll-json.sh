#!/usr/bin/env bash
# test-coll-json.sh — `fabricsim coll -J FILE` writes the JSON file that
# nccl-tests' own -J/--output_file writes (NVIDIA/nccl-tests src/util.cu,
# JSON_FILE_VERSION 3): the golden file pins the bytes; the keys and their
# order are nccl-tests'; the figures are the text table's; `calibrate`'s
# reader (src/calib/nccl-log.c) reads it back with the right collective,
# ranks and rows; the file is written atomically and misuse exits 2.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

G="$FS_SOURCE_ROOT/tests/data/golden"
T="$FS_SOURCE_ROOT/topologies"

# The golden command, run in $tmp so that the -J path in "args" is relative.
(cd "$tmp" && "$FABRICSIM" coll "$T/dgx-h100.yaml" -o all_reduce -b 8 -e 16G -f 2 -J ar.json > ar.txt)
cmp -s "$tmp/ar.txt" "$G/coll-dgx-h100-allreduce.txt" || fail "-J changed the text output"
# The golden file is `-J -` (the file on stdout); the written file differs only in args' -J.
sed 's|"-J","ar.json"|"-J","-"|' "$tmp/ar.json" > "$tmp/ar.stdout.json"
cmp -s "$tmp/ar.stdout.json" "$G/coll-dgx-h100-allreduce-J.json" || fail "-J output differs from the golden file:
$(diff <(tr ',' '\n' < "$G/coll-dgx-h100-allreduce-J.json") <(tr ',' '\n' < "$tmp/ar.stdout.json") | head -20)"
(cd "$tmp" && "$FABRICSIM" coll "$T/dgx-h100.yaml" -o all_reduce -b 8 -e 16G -f 2 -J ar.json > /dev/null)
sed 's|"-J","ar.json"|"-J","-"|' "$tmp/ar.json" | cmp -s - "$G/coll-dgx-h100-allreduce-J.json" || fail "-J is not deterministic"
ls "$tmp" | grep -q 'ar.json\.' && fail "a temporary file was left: $(ls "$tmp")"

# Structure: nccl-tests' keys in nccl-tests' order, and the table's figures.
python3 - "$tmp/ar.json" "$tmp/ar.txt" <<'PY' || fail "the -J file does not have nccl-tests' structure"
import json, sys
text = open(sys.argv[1]).read()
assert not text.endswith("\n"), "nccl-tests' file ends without a newline"
d = json.loads(text, object_pairs_hook=lambda kv: kv)   # keep key order
keys = [k for k, _ in d]
assert keys == ["version", "start_time", "args", "env", "nccl_version", "config", "results",
                "out_of_bounds", "average_bus_bandwidth", "end_time"], keys
top = dict(d)
assert top["version"] == 3
cfg = dict(top["config"])
assert [k for k, _ in top["config"]] == ["nthreads", "ngpus", "minimum_bytes", "maximum_bytes",
    "step_factor", "warmup_iters", "iterations", "aggregated_iterations", "validation", "graph",
    "blocking_collectives", "per_iter_timing", "per_iter_skip", "parallel_init", "devices"]
devs = [dict(x) for x in cfg["devices"]]
assert len(devs) == 8 and [x["rank"] for x in devs] == list(range(8))
assert [k for k, _ in cfg["devices"][0]] == ["rank", "group", "pid", "hostname", "device",
                                             "device_hex", "device_info"]
rows = [dict(r) for r in top["results"]]
assert [k for k, _ in top["results"][0]] == ["size", "count", "type", "redop", "root",
    "out_of_place", "in_place", "actual_iterations", "experiment_name"]
assert [k for k, _ in dict(top["results"][0])["out_of_place"]] == ["time", "alg_bw", "bus_bw", "nwrong"]
table = [l.split() for l in open(sys.argv[2]) if l.strip() and not l.startswith("#")]
assert len(table) == len(rows) == 32, (len(table), len(rows))
for r, t in zip(rows, table):
    assert r["size"] == int(t[0]) and r["count"] == int(t[1]) and r["type"] == t[2]
    assert r["redop"] == t[3] and r["root"] == "    -1" and t[4] == "-1"
    oop, ip = dict(r["out_of_place"]), dict(r["in_place"])
    for v, col in ((oop["time"], 5), (oop["alg_bw"], 6), (oop["bus_bw"], 7), (ip["time"], 9),
                   (ip["bus_bw"], 11)):
        shown = float(t[col])
        assert abs(v - shown) <= max(0.006, 0.0006 * abs(shown)), (r["size"], v, t[col])
    assert oop["nwrong"] is None
avg = dict(top["average_bus_bandwidth"])
footer = [l for l in open(sys.argv[2]) if "Avg bus bandwidth" in l][0]
assert abs(avg["bandwidth"] - float(footer.split(":")[1])) < 1e-3, (avg, footer)
PY

# calibrate's reader reads it back: the collective from args[0], 8 ranks on 1 host.
out=$("$FABRICSIM" calibrate nccl-tests --topo "$T/dgx-h100.yaml" "$tmp/ar.json")
contains "$out" "all_reduce on 8 ranks, 1 host" "calibrate reading -J output"
# A rooted collective and another datatype: root and type come through.
"$FABRICSIM" coll "$T/dgx-h100.yaml" -o broadcast -r 3 -d half -b 1M -e 4M -f 2 -J "$tmp/bc.json" > /dev/null
grep -q '"type":"half","redop":"none","root":"     3"' "$tmp/bc.json" || fail "broadcast -r 3 -d half: $(head -c 600 "$tmp/bc.json")"
grep -q '"args":\["broadcast_perf",' "$tmp/bc.json" || fail "broadcast: args[0] is not broadcast_perf"
out=$("$FABRICSIM" calibrate nccl-tests --topo "$T/dgx-h100.yaml" "$tmp/bc.json")
contains "$out" "broadcast on 8 ranks" "calibrate reading a broadcast -J file"

# -J - puts the file on stdout in place of the table, and takes no --json.
"$FABRICSIM" coll "$T/dgx-h100.yaml" -o all_reduce -b 8 -e 16G -f 2 -J - | cmp -s - "$G/coll-dgx-h100-allreduce-J.json" \
  || fail "-J - is not the golden file"
set +e
out=$("$FABRICSIM" coll "$T/dgx-h100.yaml" -J - --json 2>&1); st=$?
set -e
[ "$st" = 2 ] || fail "-J - --json exited $st"
contains "$out" "takes no --json or --csv" "-J - --json"

# Misuse: -J with several collectives; an unwritable path (exit 1, nothing left).
set +e
out=$("$FABRICSIM" coll "$T/dgx-h100.yaml" -o all -J "$tmp/all.json" 2>&1); st=$?
set -e
[ "$st" = 2 ] || fail "-o all -J exited $st"
contains "$out" "-J writes one collective's file" "-o all -J"
[ ! -e "$tmp/all.json" ] || fail "-o all -J left a file"
set +e
out=$("$FABRICSIM" coll "$T/dgx-h100.yaml" -J "$tmp/no/such/dir/x.json" 2>&1); st=$?
set -e
[ "$st" = 1 ] || fail "unwritable -J exited $st: $out"
echo "cli coll-json: ok"
