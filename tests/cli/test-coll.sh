#!/usr/bin/env bash
# test-coll.sh — `fabricsim coll`: the nccl-tests table and footer, JSON,
# NCCL_ALGO / --algo / --proto / --channels, every collective on a DGX H100
# (one by one and -o all),
# several hosts, determinism, and bad input exiting 2 with one stderr line.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

T="$FS_SOURCE_ROOT/topologies"

# The nccl-tests layout: header, column titles, one row per size, footer.
out=$("$FABRICSIM" coll "$T/dgx-h100.yaml" -o all_reduce -b 8 -e 128M -f 4)
contains "$out" "# Collective test starting: all_reduce_perf" "header"
contains "$out" "# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 4(factor)" "header (one process per GPU)"
contains "$out" "#       size         count      type   redop    root     time   algbw   busbw  #wrong" "titles"
contains "$out" "# Avg bus bandwidth    : " "footer"
contains "$out" "# Collective test concluded: all_reduce_perf" "footer"
rows=$(printf '%s\n' "$out" | grep -c '^ *[0-9]')
[ "$rows" -eq 13 ] || fail "expected 13 rows (8 B .. 128 MiB by 4), got $rows"
# A row: 13 nccl-tests columns, then the note; small sizes use LL.
first=$(printf '%s\n' "$out" | grep '^ *[0-9]' | head -1)
set -- $first
[ "$1" = 8 ] && [ "$2" = 2 ] && [ "$3" = float ] && [ "$4" = sum ] && [ "$5" = -1 ] || fail "first row: $first"
[ "$9" = N/A ] && [ "${13}" = N/A ] && [ "${14}" = "#" ] || fail "first row columns: $first"
contains "${15}" "/LL/" "small size protocol"
# busbw of the largest row is a realistic fraction of NVLink4 (450 GB/s per GPU).
last=$(printf '%s\n' "$out" | grep '^ *[0-9]' | tail -1)
python3 - "$last" <<'PY' || fail "largest all_reduce busbw out of range: $last"
import sys
f = sys.argv[1].split()
bus = float(f[7])
assert 150 < bus < 600, bus
PY

# Determinism: byte-identical output.
"$FABRICSIM" coll "$T/dgx-h100.yaml" -o all_gather -b 1K -e 64M -f 8 > "$tmp/a"
"$FABRICSIM" coll "$T/dgx-h100.yaml" -o all_gather -b 1K -e 64M -f 8 > "$tmp/b"
cmp -s "$tmp/a" "$tmp/b" || fail "coll output differs between two runs"

# Every collective runs on 8 GPUs.
for op in all_reduce all_gather reduce_scatter broadcast reduce alltoall sendrecv gather scatter hypercube barrier; do
  "$FABRICSIM" coll "$T/dgx-h100.yaml" -o "$op" -b 1K -e 1M -f 32 > "$tmp/$op" || fail "coll -o $op exited $?"
  contains "$(cat "$tmp/$op")" "# Collective test concluded: ${op}_perf" "$op"
done

# -o all: every collective, one nccl-tests block each, in the catalog's
# order, each block the same as that collective run alone; the redop
# meaning of -o stays (-o max), and --redop all repeats reducing ops' rows.
ops="all_reduce all_gather reduce_scatter broadcast reduce alltoall sendrecv gather scatter hypercube barrier"
"$FABRICSIM" coll "$T/dgx-h100.yaml" -o all -b 1K -e 1M -f 32 > "$tmp/all"
[ "$(grep '^# Collective test starting' "$tmp/all" | awk '{print $NF}' | tr '\n' ' ')" = \
  "$(for op in $ops; do printf '%s_perf ' "$op"; done)" ] || fail "-o all: blocks $(grep -c starting "$tmp/all")"
[ "$(grep -c '^# Avg bus bandwidth' "$tmp/all")" -eq 11 ] || fail "-o all: footers"
[ "$(grep -c '^# Collective test concluded' "$tmp/all")" -eq 11 ] || fail "-o all: concluded"
awk -v d="$tmp" '/^# nccl-tests version/{n++} {print > (d "/blk" n)}' "$tmp/all"
i=1
for op in $ops; do
  cmp -s "$tmp/blk$i" "$tmp/$op" || fail "-o all: the $op block differs from -o $op"
  i=$((i + 1))
done
out=$("$FABRICSIM" coll "$T/dgx-h100.yaml" -o all --redop all -b 1K -e 1K)
# 1 row each, 5 for all_reduce, reduce_scatter and reduce: 8 + 15 rows.
[ "$(printf '%s\n' "$out" | grep -c '^ *[0-9]')" -eq 23 ] || fail "-o all --redop all: rows"
out=$("$FABRICSIM" coll "$T/dgx-h100.yaml" -o max -b 1K -e 1K)
contains "$out" "# Collective test starting: all_reduce_perf" "-o max is all_reduce"
contains "$out" "     float     max      -1" "-o max is the redop"
[ "$(printf '%s\n' "$out" | grep -c '^ *[0-9]')" -eq 1 ] || fail "-o max: rows"
# What cannot run on the communicator is left out, saying why.
out=$("$FABRICSIM" coll "$T/dgx-h100.yaml" -o all -g 3 -b 1K -e 1K)
contains "$out" "# Not run: hypercube on 3 ranks: needs a power-of-two number of ranks" "-o all -g 3"
[ "$(printf '%s\n' "$out" | grep -c '^ *[0-9]')" -eq 10 ] || fail "-o all -g 3: rows"
"$FABRICSIM" coll "$T/dgx-h100.yaml" -o all -g 3 -b 1K -e 4K -f 4 --json > "$tmp/all.json"
python3 - "$tmp/all.json" <<'PY' || fail "coll -o all --json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema_version"] == 2 and d["collective"] == "all" and d["nranks"] == 3
ops = [x["op"] for x in d["results"]]
assert ops == [o for o in ["all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce",
                           "alltoall", "sendrecv", "gather", "scatter", "barrier"] for _ in range(2)], ops
assert d["skipped"] == [{"op": "hypercube",
                         "reason": "hypercube on 3 ranks: needs a power-of-two number of ranks"}]
assert "hypercube" not in d["avg_busbw_by_op"] and len(d["avg_busbw_by_op"]) == 10
r = [x for x in d["results"] if x["op"] == "all_gather"]
assert abs(d["avg_busbw_by_op"]["all_gather"] - sum(x["busbw_GBps"] for x in r) / 2) < 1e-9
PY
"$FABRICSIM" coll "$T/dgx-h100.yaml" -o all -b 1K -e 1K --csv > "$tmp/all.csv"
[ "$(head -1 "$tmp/all.csv")" = "size_bytes,count,type,redop,root,time_us,algbw_GBps,busbw_GBps,algo,proto,channels,op" ] \
  || fail "-o all --csv header"
[ "$(tail -n +2 "$tmp/all.csv" | cut -d, -f12 | tr '\n' ' ')" = "$ops " ] || fail "-o all --csv ops"

# JSON per size.
"$FABRICSIM" coll "$T/dgx-h100.yaml" -o reduce_scatter -b 1M -e 16M -f 2 --json > "$tmp/rs.json"
python3 - "$tmp/rs.json" <<'PY' || fail "coll --json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["collective"] == "reduce_scatter" and d["nranks"] == 8 and d["schema_version"] == 2
r = d["results"]
assert [x["size_bytes"] for x in r] == [1 << 20, 2 << 20, 4 << 20, 8 << 20, 16 << 20]
for x in r:
    assert x["op"] == "reduce_scatter"
    for k in ("op", "size_bytes", "count", "type", "redop", "root", "time_us", "algbw_GBps",
              "busbw_GBps", "algo", "proto", "channels"):
        assert k in x, k
    assert abs(x["busbw_GBps"] - x["algbw_GBps"] * 7 / 8) < 1e-6 * x["algbw_GBps"]
    assert x["count"] * 4 * 8 == x["size_bytes"]
assert d["avg_busbw_GBps"] > 0
PY

# Forcing and restricting the choice.
out=$("$FABRICSIM" coll "$T/dgx-h100.yaml" -b 64M -e 64M --algo tree --proto LL128 --channels 4)
contains "$out" "# tree/LL128/4" "--algo/--proto/--channels"
out=$(NCCL_ALGO=Ring NCCL_PROTO=Simple "$FABRICSIM" coll "$T/dgx-h100.yaml" -b 8 -e 8)
contains "$out" "# ring/Simple/" "NCCL_ALGO/NCCL_PROTO"
out=$(NCCL_ALGO=^NVLS "$FABRICSIM" coll "$T/dgx-h100.yaml" -b 1G -e 1G)
case "$out" in *"# nvls/"*) fail "NCCL_ALGO=^NVLS still picked NVLS" ;; esac
# NCCL 2.24+ per-collective entries: tree for all_reduce, ring elsewhere.
out=$(NCCL_ALGO="ring;allreduce:tree" "$FABRICSIM" coll "$T/dgx-h100.yaml" -b 1G -e 1G)
contains "$out" "# tree/" "NCCL_ALGO=ring;allreduce:tree (all_reduce)"
out=$(NCCL_ALGO="ring;allreduce:tree" "$FABRICSIM" coll "$T/dgx-h100.yaml" -o all_gather -b 1G -e 1G)
contains "$out" "# ring/" "NCCL_ALGO=ring;allreduce:tree (all_gather)"
out=$("$FABRICSIM" coll "$T/dgx-h100.yaml" -o all_reduce -d half -o max -b 1M -e 1M -g 4)
contains "$out" "     1048576        524288      half     max      -1" "-d half -o max -g 4"
"$FABRICSIM" coll --list | grep -q "nvls_tree" || fail "--list lacks nvls_tree"
out=$("$FABRICSIM" coll "$T/dgx-h100.yaml" -b 1M -e 1M --algo ring --proto Simple --explain)
contains "$out" "# choice: ring / Simple" "--explain"
contains "$out" "# latency: base 8.40 us (Ring/Simple) + 14 steps" "--explain"

# Several hosts: all_reduce runs across the IB fabric.
out=$("$FABRICSIM" coll "$T/dgx-h100-ib-ndr.yaml" -D nodes=2 -b 1M -e 16M -f 16)
contains "$out" "nThread 1 nGpus 1 " "two hosts, one process per GPU"
contains "$out" "Rank 15 Group" "two hosts: 16 ranks"
case "$out" in *"# collnet"*) fail "CollNet chosen without NCCL_COLLNET_ENABLE=1" ;; esac
out=$("$FABRICSIM" coll "$T/dgx-h100-ib-ndr.yaml" -D nodes=2 -b 16M -e 16M --algo collnet_direct)
contains "$out" "# collnet_direct/Simple/" "--algo collnet_direct"
# CollNet all_gather / reduce_scatter (NCCL 2.20+): forced here; 2.19 and
# the tuner on a host with fewer NICs than GPUs never pick it.
for op in all_gather reduce_scatter; do
  out=$("$FABRICSIM" coll "$T/dgx-h100-ib-ndr.yaml" -D nodes=2 -o $op -b 1G -e 1G --algo collnet_direct)
  contains "$out" "# collnet_direct/Simple/" "--algo collnet_direct -o $op"
done
# NVLS across hosts (NVLS+SHARP): forced and by NCCL_ALGO with CollNet on;
# refused without SHARP switches (-D sharp=0), with the reason (below).
for op in all_reduce all_gather reduce_scatter; do
  out=$(NCCL_COLLNET_ENABLE=1 NCCL_ALGO=NVLS "$FABRICSIM" coll "$T/dgx-h100-ib-ndr.yaml" -D nodes=2 -o $op -b 1G -e 1G)
  contains "$out" "# nvls/Simple/" "NCCL_ALGO=NVLS -o $op on 2 hosts"
done
out=$(NCCL_COLLNET_ENABLE=1 NCCL_ALGO=CollNetDirect "$FABRICSIM" coll "$T/dgx-h100-ib-ndr.yaml" -D nodes=2 \
  -o all_gather -b 4G -e 4G)
contains "$out" "# collnet_direct/Simple/" "NCCL_ALGO=CollNetDirect all_gather"
set +e
out=$(NCCL_COLLNET_ENABLE=1 NCCL_ALGO=CollNetDirect "$FABRICSIM" coll "$T/dgx-h100-ib-ndr.yaml" -D nodes=2 \
  --nccl-version 2.19 -o all_gather -b 4G -e 4G 2>&1)
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "CollNet all_gather offered by NCCL 2.19: $rc $out"
set +e
out=$(NCCL_COLLNET_ENABLE=1 NCCL_ALGO=CollNetDirect "$FABRICSIM" coll "$T/cluster.yaml" -D node=hgx-a100 \
  -D nodes=2 -o all_gather -b 4G -e 4G 2>&1)
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "CollNet all_gather with 2 GPUs per NIC: $rc $out"

# The host launch (coll/launch.h): one thread driving -g 8 issues eight
# launches per iteration, a floor of 8 x 4.1 us over the 13-17 us of one
# process per GPU; -G 4 (CUDA graph) divides it by 4; --nprocs x -t x -g ranks.
t1=$("$FABRICSIM" coll "$T/dgx-h100.yaml" -b 8 -e 8 | grep '^ *8 ' | awk '{print $6}')
out=$("$FABRICSIM" coll "$T/dgx-h100.yaml" -g 8 -b 8 -e 8)
contains "$out" "# nThread 1 nGpus 8 minBytes 8" "-g 8 header"
t8=$(printf '%s\n' "$out" | grep '^ *8 ' | awk '{print $6}')
awk -v a="$t8" 'BEGIN { exit !(a > 32.7 && a < 32.9) }' || fail "-g 8 floor: $t8 us, expected 32.8"
awk -v a="$t1" -v b="$t8" 'BEGIN { exit !(a < b) }' || fail "-g 1 ($t1 us) not below -g 8 ($t8 us)"
out=$("$FABRICSIM" coll "$T/dgx-h100.yaml" -g 8 -G 4 -b 8 -e 8)
contains "$out" "graph: 4" "-G 4 header"
tg=$(printf '%s\n' "$out" | grep '^ *8 ' | awk '{print $6}')
awk -v a="$tg" -v b="$t1" 'BEGIN { exit !(a == b) }' || fail "-g 8 -G 4 ($tg us): the floor 8.2 us is below the GPU time ($t1 us)"
out=$("$FABRICSIM" coll "$T/dgx-h100-ib-ndr.yaml" -D nodes=2 --nprocs 2 -t 2 -g 4 -b 8 -e 8)
contains "$out" "# nThread 2 nGpus 4 " "--nprocs 2 -t 2 -g 4"
contains "$out" "Rank 15 Group" "--nprocs 2 -t 2 -g 4: 16 ranks"

# Bad input: exit 2, one line on stderr, nothing on stdout.
check_bad() {
  local want="$1"; shift
  refused "coll $*" "$FABRICSIM" coll "$@"
  one_line "$err" "coll $*"
  contains "$err" "$want" "coll $*"
}
check_bad "unknown collective or reduction op" "$T/dgx-h100.yaml" -o allreduced
check_bad "unknown algorithm" "$T/dgx-h100.yaml" --algo bogus
NCCL_ALGO=Ring,Bogus check_bad 'NCCL_ALGO "Ring,Bogus": unknown name "Bogus"' "$T/dgx-h100.yaml"
NCCL_ALGO="ring;tree" check_bad 'entry "tree" has no collective' "$T/dgx-h100.yaml"
NCCL_ALGO="allgaher:ring" check_bad 'unknown collective "allgaher"' "$T/dgx-h100.yaml"
check_bad "unknown datatype" "$T/dgx-h100.yaml" -d float17
check_bad "unknown reduction op \"bogus\"" "$T/dgx-h100.yaml" -o all --redop bogus
check_bad "unknown collective \"bogus\"" "$T/dgx-h100.yaml" -o bogus --redop max
check_bad "can run all_reduce on 8 ranks: the communicator has no CollNet" "$T/dgx-h100.yaml" -o all --algo collnet_direct
check_bad "NVLS across hosts needs CollNet (SHARP) switches" "$T/dgx-h100-ib-ndr.yaml" -D nodes=2 -D sharp=0 --algo nvls
check_bad "not a GPU of the topology" "$T/dgx-h100.yaml" --gpus dgx-h100/gpu0,nosuch
# An empty list (the CLI fuzzer's fifth-session finding: a crash).
check_bad "-g takes the GPUs per thread" "$T/dgx-h100.yaml" -g ""
check_bad "-g takes the GPUs per thread" "$T/dgx-h100.yaml" -g 0,1
check_bad "-t 3 x -g 1 = 3 GPUs per process does not divide the 4 GPUs" "$T/dgx-h100.yaml" -t 3 -b 8 -e 8 --gpus gpu0,gpu1,gpu2,gpu3
check_bad "-t takes a thread count" "$T/dgx-h100.yaml" -t -1
check_bad "are on different hosts" "$T/dgx-h100-ib-ndr.yaml" -D nodes=2 -g 16 -b 8 -e 8
check_bad "--nprocs counts the GPUs" "$T/dgx-h100.yaml" --nprocs 2 --gpus gpu0,gpu1
check_bad "the GPU list is empty" "$T/dgx-h100.yaml" --gpus ""
check_bad "asked for 9 GPUs" "$T/dgx-h100.yaml" -g 9
check_bad "larger than maxbytes" "$T/dgx-h100.yaml" -b 2M -e 1M
check_bad "can run alltoall on 8 ranks: the ring runs" "$T/dgx-h100.yaml" -o alltoall --algo ring
# Too many sizes: refused before anything runs, with the count and the way out.
check_bad "coll: -b 1 -e 17179869184 -i 1 is 17179869184 sizes; at most 10000 are allowed" \
  "$T/dgx-h100.yaml" -b 1 -e 16G -i 1
FABRICSIM_MAX_SIZES=3 check_bad "is 4 sizes; at most 3 are allowed" "$T/dgx-h100.yaml" -b 1K -e 8K -f 2
out=$(FABRICSIM_MAX_SIZES=4 "$FABRICSIM" coll "$T/dgx-h100.yaml" -b 1K -e 8K -f 2) \
  || fail "coll with 4 sizes under FABRICSIM_MAX_SIZES=4 exited $?"
rows=$(printf '%s\n' "$out" | grep -c '^ *[0-9]')
[ "$rows" -eq 4 ] || fail "expected 4 rows (1K .. 8K by 2), got $rows"
[ "$("$FABRICSIM" coll "$T/dgx-h100.yaml" -b 0 -e 16G -f 2 | grep -c '^ *[0-9]')" -eq 1 ] \
  || fail "-b 0 with a factor is one size"
# NCCL's point-to-point schedule across hosts (models/nccl/README.md,
# p2p_schedule, p2p_net_channel): 1 GiB sendrecv over NDR ports of 50 GB/s
# runs at the NIC on 2 nodes (4 channels of 17.9 GB/s), at two channels'
# 35.8 GB/s on 16 nodes (128 ranks halve them) and at 2 channels from 2 nodes
# with NCCL 2.27.
C="$T/dgx-h100-ib-ndr.yaml"
sr() { "$FABRICSIM" coll "$C" -o sendrecv -b 1G -e 1G "$@" | awk '/^ *[0-9]/ {print $8, $NF}'; }
[ "$(sr -D nodes=2)" = "49.63 direct/Simple/4" ] || fail "sendrecv on 2 nodes: $(sr -D nodes=2)"
[ "$(sr -D nodes=16)" = "35.77 direct/Simple/2" ] || fail "sendrecv on 16 nodes: $(sr -D nodes=16)"
[ "$(sr -D nodes=2 --nccl-version 2.27)" = "35.77 direct/Simple/2" ] \
  || fail "sendrecv on 2 nodes, NCCL 2.27: $(sr -D nodes=2 --nccl-version 2.27)"
# NCCL's variables, as NCCL reads them: one channel per network peer; NCCL's
# own per-channel estimate of 25 GB/s gives 2.30 divUp(49, 25) = 2 channels
# (each still moves p2p_net_channel's 17.9 GB/s: the variable sets NCCL's
# channel count, not the network); a bad value names the variable.
[ "$(NCCL_NCHANNELS_PER_NET_PEER=1 sr -D nodes=2)" = "17.89 direct/Simple/1" ] \
  || fail "NCCL_NCHANNELS_PER_NET_PEER=1: $(NCCL_NCHANNELS_PER_NET_PEER=1 sr -D nodes=2)"
[ "$(NCCL_P2P_PER_CHANNEL_NET_BW=25 sr -D nodes=2)" = "35.77 direct/Simple/2" ] \
  || fail "NCCL_P2P_PER_CHANNEL_NET_BW=25: $(NCCL_P2P_PER_CHANNEL_NET_BW=25 sr -D nodes=2)"
NCCL_NCHANNELS_PER_NET_PEER=x check_bad 'NCCL_NCHANNELS_PER_NET_PEER="x": expected a whole number' "$C"
# Collective channels across hosts (models/nccl coll_net_channel): NCCL's 16
# ring channels on 8 NICs, each network connection at most 23.9 GB/s and idle
# for NCCL's network step between ring steps, hold 8 nodes at ~320 GB/s busbw;
# NCCL_MIN_CTAS=24 gives 24 channels, 3 per NIC (issue 309 measured 391 GB/s;
# fabricsim's channels idle in step with each other, so 339, not the NICs'
# bound); NCCL_MAX_CTAS=8 halves the plateau.  2 GiB, one whole loop on 64
# ranks (4 GiB before the connections' slices were pipelined: 323.81, 337.92,
# 162.16 GB/s), costs 4 s of CPU where 4 GiB cost 18 (tests/README.md, "CI
# time").  Since a connection's next slice follows the previous one's drain
# (collrun/exec.h, 2026-11-28) a ring step's second slice no longer pays the
# route's latency: 322.73 -> 327.65, 334.13 -> 339.41, 161.90 -> 164.38.
ar() { "$FABRICSIM" coll "$C" -o all_reduce -b 2G -e 2G -D nodes=8 --nccl-version 2.26 | awk '/^ *[0-9]/ {print $8, $NF}'; }
[ "$(ar)" = "327.65 ring/Simple/16" ] || fail "all_reduce on 8 nodes: $(ar)"
[ "$(NCCL_MIN_CTAS=24 ar)" = "339.41 ring/Simple/24" ] || fail "NCCL_MIN_CTAS=24: $(NCCL_MIN_CTAS=24 ar)"
[ "$(NCCL_MAX_CTAS=8 ar)" = "164.38 ring/Simple/8" ] || fail "NCCL_MAX_CTAS=8: $(NCCL_MAX_CTAS=8 ar)"
# NCCL_MIN_NCHANNELS goes through the same code as NCCL_MIN_CTAS (the limits
# loop of coll/nccl-params.c, both minima applied in fs_nccl_params_channels):
# in reduced mode (FS_TEST_REDUCED, the sanitizer build; tests/README.md) its
# 24-channel run, 7 s of CPU under the sanitizers, is the plain build's only.
if [ -z "${FS_TEST_REDUCED:-}" ] || [ "$FS_TEST_REDUCED" = 0 ]; then
  [ "$(NCCL_MIN_NCHANNELS=24 ar)" = "339.41 ring/Simple/24" ] || fail "NCCL_MIN_NCHANNELS=24: $(NCCL_MIN_NCHANNELS=24 ar)"
fi
# NVLSTree on 2 DGX H100 nodes (issue 309: NCCL runs it there, 466-469 GB/s from
# 4 GiB on): the tuner prices NCCL's NVLS graph, 8 heads each on its own NIC, and
# picks it over the ring; its trees cross hosts between local rank j of each host,
# on rail j (explain coll), at the fitted NVLSTree kernel rate (models/nccl
# nvls_tree_kernel).  On 8 nodes it keeps the ring (half the network per head).
# 465.02 is the whole run, as --exact gives (463.78 before a connection's
# slices were pipelined, 2026-11-28; the removed loop extrapolation gave
# 464.34, the removed window extrapolation 464.15; collrun/alone.h).
ar2() { "$FABRICSIM" coll "$C" -o all_reduce -b 4G -e 4G -D nodes=2 --nccl-version 2.26 | awk '/^ *[0-9]/ {print $8, $NF}'; }
[ "$(ar2)" = "465.02 nvls_tree/Simple/16" ] || fail "all_reduce on 2 nodes: $(ar2)"
[ "$(NCCL_ALGO=ring ar2)" = "328.73 ring/Simple/16" ] || fail "ring all_reduce on 2 nodes: $(NCCL_ALGO=ring ar2)"
out=$("$FABRICSIM" explain coll "$C" -D nodes=2 -s 4G)
contains "$out" "choice: nvls_tree / Simple / 16 channels" "explain coll on 2 nodes: the choice"
contains "$out" "NVLS graph of 8 heads" "explain coll on 2 nodes: NCCL's NVLS graph"
contains "$out" "nvls_tree: shard j of every chunk crosses hosts between local rank j of each host: 8 shards on 8 NICs per host, 0 crossing rails" "explain coll: the NVLS trees' NICs"
contains "$out" "shard 7: node0/gpu7 -> node0/nic7 -> node1/nic7 -> node1/gpu7" "explain coll: shard 7 on rail 7"
# --exec defaults to auto: the ring all_reduce of 64 MiB over 2 whole DGX H100
# hosts runs as streams, 1.1e-5 us from the steps (--exec steps, still the
# reference).
ex() { "$FABRICSIM" coll "$C" -D nodes=2 -o all_reduce --algo ring -b 64M -e 64M --json "$@" |
       grep -o '"time_us": [0-9.]*'; }
[ "$(ex)" = '"time_us": 572.675305' ] && [ "$(ex --exec auto)" = "$(ex)" ] &&
  [ "$(ex --exec steps)" = '"time_us": 572.675316' ] ||
  fail "coll's default is not --exec auto: $(ex)"
check_bad '--exec takes steps, streams or auto' "$T/dgx-h100.yaml" --exec fast
NCCL_MIN_CTAS=0 check_bad 'NCCL_MIN_CTAS="0": expected a whole number from 1 to 64' "$C" -b 1M -e 1M
NCCL_MAX_CTAS=x check_bad 'NCCL_MAX_CTAS="x": expected a whole number from 1 to 64' "$C" -b 1M -e 1M
NCCL_MAX_NCHANNELS=65 check_bad 'NCCL_MAX_NCHANNELS="65": expected a whole number' "$C" -b 1M -e 1M
echo "coll: ok"
