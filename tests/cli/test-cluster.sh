#!/usr/bin/env bash
# test-cluster.sh — topologies/cluster.yaml on the command line: every node
# template at 2 nodes simulates a ring all_reduce whose bus bandwidth lies
# between 70 % and 100 % of the two nodes' NIC bandwidth (the ring's bound:
# all of a node's traffic to the other crosses its NICs), taken from the
# catalog (`fabricsim models LINK --json`); GB200 trays of one rack run over NVLink
# instead; bad -D values exit 2 with file:line:col on one stderr line; the
# README's B200 examples run (ring busbw flat from 2 to 64 nodes under
# adaptive routing); -D routing works on the file and its wrappers; the
# wrappers keep their node.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

C="$FS_SOURCE_ROOT/topologies/cluster.yaml"

# The per-direction bandwidth of a link model, in bytes/s, from the catalog.
link_bw() {
  "$FABRICSIM" models "$1" --json | python3 -c '
import json, sys
print(json.load(sys.stdin)["bandwidth"])'
}

# node, NICs per node, NIC link, extra -D
while read -r node nics link extra; do
  bw=$(link_bw "$link")
  args=(-D "node=$node" -D nodes=2)
  [ -n "$extra" ] && args+=(-D "$extra")
  "$FABRICSIM" coll "$C" "${args[@]}" --algo ring -o all_reduce -b 1G -e 1G --json \
    >"$tmp/$node.json" || fail "coll on 2 x $node exited $?"
  python3 - "$tmp/$node.json" "$nics" "$bw" "$node" <<'PY' || fail "all_reduce on 2 x $node"
import json, sys
d = json.load(open(sys.argv[1]))
nics, bw, node = int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
row = d["results"][-1]
assert row["algo"] == "ring", row
busbw = row["busbw_GBps"] * 1e9
bound = nics * bw
assert 0.70 * bound <= busbw <= bound * 1.0001, (node, busbw, bound)
PY
done <<'LIST'
dgx-a100 8 ib-hdr
hgx-a100 4 ib-hdr
dgx-h100 8 ib-ndr
dgx-h200 8 ib-ndr
hgx-b200 8 ib-ndr
gb200-nvl72 4 ib-ndr rack_trays=1
LIST

# Two GB200 trays of one rack: NVLink, faster than their 8 NICs could be.
out=$("$FABRICSIM" coll "$C" -D node=gb200-nvl72 -D nodes=2 -o all_reduce -b 1G -e 1G)
echo "$out" | grep -q "nvls" || fail "GB200 trays of one rack should use NVLS: $out"

# The README's B200 example.
"$FABRICSIM" coll "$C" -D node=hgx-b200 -D nodes=4 -D nic=connectx-8 -o all_reduce -b 64M -e 1G -f 4 \
  >/dev/null || fail "README B200 example"

# The README's routing example (issue 18's done-when): rail-aligned ring
# busbw under adaptive routing stays flat (within 3 %) from 2 to 64 B200 nodes,
# at 16 GiB, one whole loop of NCCL's ring on 512 ranks (a partial loop pays
# NCCL's network step per ring step on less data: models/nccl/README.md).
for n in 2 64; do
  "$FABRICSIM" coll "$C" -D node=hgx-b200 -D nodes=$n -D routing=adaptive -o all_reduce \
    --algo ring -b 16G -e 16G --exec auto --json >"$tmp/b200-$n.json" || fail "B200 x $n adaptive"
done
python3 - "$tmp/b200-2.json" "$tmp/b200-64.json" <<'PY' || fail "ring busbw not flat from 2 to 64 nodes"
import json, sys
a, b = (json.load(open(f))["results"][-1]["busbw_GBps"] for f in sys.argv[1:3])
assert 0.97 * a <= b <= 1.001 * a, (a, b)
PY

# Bad values: exit 2, one line, located.
check_bad() {
  local want=$1; shift
  refused "topo check $*" "$FABRICSIM" topo check "$@"
  one_line "$err" "topo check $*"
  [[ $err =~ \.yaml:[0-9]+:[0-9]+:\  ]] || fail "topo check $*: not located: $err"
  contains "$err" "$want" "topo check $*"
}
check_bad 'cluster.yaml:32:3: -D node=dgx-h300' "$C" -D node=dgx-h300
check_bad 'dgx-h100-node.yaml:19:3: -D nics=5' "$C" -D nics=5
check_bad 'nodes/gb200-nvl72-node.yaml' "$C" -D node=gb200-nvl72 -D nics=8
check_bad 'the least allowed is 1' "$C" -D nodes=0
check_bad 'expected one of 0, 1' "$C" -D sharp=2
check_bad 'expected one of static, adaptive' "$C" -D routing=ecmp
check_bad 'expected one of static, adaptive' "$FS_SOURCE_ROOT/topologies/dgx-h100-ib-ndr.yaml" -D routing=spray
check_bad 'oversubscription must be a ratio' "$C" -D oversubscription=half
check_bad 'expected one of dgx-a100' "$FS_SOURCE_ROOT/topologies/dgx-a100-ib-hdr.yaml" -D node=dgx-h100

# sharp=0: CollNet has no switch to reduce in.
set +e
"$FABRICSIM" coll "$C" -D nodes=2 -D sharp=0 --algo collnet_direct -o all_reduce -b 1G -e 1G \
  >/dev/null 2>"$tmp/err"
rc=$?
set -e
[ "$rc" -ne 0 ] && grep -q "no CollNet (SHARP) switch" "$tmp/err" || fail "sharp=0 CollNet: $rc $(cat "$tmp/err")"
"$FABRICSIM" coll "$C" -D nodes=2 -D sharp=1 --algo collnet_direct -o all_reduce -b 1G -e 1G \
  >/dev/null || fail "sharp=1 CollNet"
# routing: the cluster file's parameter, inherited by the wrappers; a file
# without it refuses -D routing like any parameter it does not declare.
"$FABRICSIM" topo check "$C" -D routing=adaptive >/dev/null || fail "cluster -D routing=adaptive"
"$FABRICSIM" topo check "$FS_SOURCE_ROOT/topologies/dgx-h100-ib-ndr-oversub.yaml" \
  -D routing=static >/dev/null || fail "oversub wrapper -D routing=static"
set +e
"$FABRICSIM" topo check "$FS_SOURCE_ROOT/topologies/dgx-h100.yaml" -D routing=adaptive \
  >/dev/null 2>"$tmp/err"
rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q "routing" "$tmp/err" || fail "dgx-h100.yaml -D routing: $rc $(cat "$tmp/err")"
echo "cluster: ok"
