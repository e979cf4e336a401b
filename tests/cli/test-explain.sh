#!/usr/bin/env bash
# test-explain.sh — runs every ```sh block of workloads/teaching/README.md
# (with `fabricsim` as the built binary) and checks that each exits 0 and
# prints something; then `explain schedule`'s bubble against the formula
# and its usage errors; explain topo's transports per pair type, explain
# overlap's hidden/exposed arithmetic, and their usage errors.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
mkdir "$tmp/bin"
ln -s "$FABRICSIM" "$tmp/bin/fabricsim"
export PATH="$tmp/bin:$PATH"
cd "$FS_SOURCE_ROOT"

n=0
# Each sh block, and the output block after it when the command is an
# `explain schedule|topo|overlap` (deterministic, no paths): that output must
# be what the command prints today.
python3 - "$FS_SOURCE_ROOT/workloads/teaching/README.md" "$tmp" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
pairs = re.findall(r"```sh\n(.*?)```(?:\s*\n```\n(.*?)```)?", text, re.S)
for i, (b, shown) in enumerate(pairs):
    open(f"{sys.argv[2]}/block{i}.sh", "w").write("set -eo pipefail\n" + b)
    if re.match(r"fabricsim explain (schedule|topo|overlap)", b):
        open(f"{sys.argv[2]}/block{i}.want", "w").write(shown)
PY
for f in "$tmp"/block*.sh; do
  out=$(bash "$f") || fail "$(cat "$f"): exit $?"
  [ -n "$out" ] || fail "$(cat "$f"): no output"
  if [ -f "${f%.sh}.want" ]; then
    [ "$out" = "$(cat "${f%.sh}.want")" ] ||
      fail "$(tail -n +2 "$f"): the README shows another output; got:
$out"
  fi
  n=$((n + 1))
done
[ $n -ge 8 ] || fail "expected at least 8 sh blocks, found $n"

# GPipe and 1F1B: (p-1)/(m+p-1) = 3/11; interleaved v=2: 3/19.
out=$(fabricsim explain schedule --pp 4 --microbatches 8)
case "$out" in *"bubble 27.3%"*"bubble 27.3%"*"bubble 15.8%"*) ;; *) fail "bubbles: $out" ;; esac
# explain topo: the path type, the route and NCCL's transport per pair.
out=$(fabricsim explain topo topologies/pcie-gen3-8gpu.yaml gpu0 gpu4)
case "$out" in *"gpu0 -> gpu4: SYS"*"route: host-staged"*"cpu0 -> cpu1"*"NCCL: SHM"*"NCCL_P2P_LEVEL=PXB"*) ;;
  *) fail "topo SYS pair: $out" ;; esac
out=$(fabricsim explain topo topologies/pcie-gen3-8gpu.yaml gpu0 gpu4 --p2p-level SYS)
case "$out" in *"route: pcie-p2p"*"NCCL: P2P transport over PCIe"*) ;; *) fail "topo --p2p-level SYS: $out" ;; esac
out=$(fabricsim explain topo topologies/dgx-h100.yaml 0 1)
case "$out" in *"NV18"*"0 direct + 18"*"4 paths"*"370.8 GB/s"*"P2P transport over NVLink"*) ;;
  *) fail "topo NV18 pair: $out" ;; esac
out=$(fabricsim explain topo topologies/dgx-h100-ib-ndr.yaml -D nodes=2 node0/gpu0 node1/gpu0)
case "$out" in *": NET"*"ib-ndr"*"bottleneck 49.7 GB/s"*"NET transport with GPUDirect RDMA"*) ;;
  *) fail "topo NET pair: $out" ;; esac
out=$(fabricsim explain topo topologies/pcie-gen4-8gpu.yaml)
for t in PIX PXB SYS; do
  case "$out" in *": $t"*) ;; *) fail "topo examples: no $t pair: $out" ;; esac
done

# explain overlap: overlap hides DP gradients and never makes a kind worse
# than it was without overlap by more than rounding.
fabricsim explain overlap topologies/dgx-h100.yaml workloads/llama2-7b.yaml --tp=2 --pp=2 \
  --num-layers=8 --global-batch-size=16 >"$tmp/ov" || fail "explain overlap"
python3 - "$tmp/ov" <<'PY' || fail "explain overlap: $(cat "$tmp/ov")"
import re, sys
rows = {}
for line in open(sys.argv[1]):
    m = re.match(r"  (dp gradients|param all-gather|tp|pp|step time)\s+\|(.*)", line)
    if m:
        rows[m.group(1)] = [float(x) for x in re.findall(r"-?\d+\.\d+", m.group(2))]
off, on = rows["dp gradients"][:3], rows["dp gradients"][3:6]
assert abs(off[0] - off[1] - off[2]) < 2e-3 and abs(on[0] - on[1] - on[2]) < 2e-3, rows
assert on[2] < off[2], ("dp not hidden", rows)
assert rows["tp"][5] < rows["tp"][2], ("tp not hidden", rows)
assert rows["step time"][1] < rows["step time"][0], rows
PY

set +e
fabricsim explain topo topologies/dgx-h100.yaml gpu0 gpu99 >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] || fail "topo unknown GPU exit $rc"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "topo unknown GPU: not one line"
fabricsim explain topo topologies/dgx-h100.yaml gpu0 0 >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] || fail "topo same GPU exit $rc"
fabricsim explain topo topologies/dgx-h100.yaml gpu0 >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "topo one GPU exit $rc"
fabricsim explain overlap topologies/dgx-h100.yaml >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "overlap without a workload exit $rc"
fabricsim explain schedule --svg "$tmp/no/such/dir/x.svg" >/dev/null 2>&1; rc=$?
[ $rc -eq 1 ] || fail "schedule --svg into a missing folder exit $rc"
fabricsim explain schedule --pp 0 >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "--pp 0 exit $rc"
fabricsim explain nothing >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "unknown topic exit $rc"
set -e
echo "explain: $n README blocks ok"

# explain coll across hosts at a named release: a 2-node B200 alltoall at NCCL 2.28 runs the 8
# network peers of each GPU on their group's 2 channels (8 transfers each), half of the bytes
# across hosts: 2 × 17.9 / 0.5 = 71.6 GB/s, busbw 66.9 (what `coll` simulates: 66.90); an unknown
# release is a usage error naming the known ones (exit 2).
out=$(fabricsim explain coll topologies/cluster.yaml -D node=hgx-b200 -D nodes=2 --nccl-version 2.28 -o alltoall -s 1G)
case "$out" in *"NCCL 2.28.9 model"*"2 ch × 17.90 GB/s per network channel, 8 transfers sharing each"*"0.500 × the bytes across hosts: 71.60 GB/s"*"busbw = algbw × 0.9375 = 66.9"*) ;;
  *) fail "explain coll alltoall 2.28: $out" ;; esac
# A Simple ring across hosts: its connection across hosts idles NCCL's network step (14 us) before
# each ring step, and on AMD hosts also the host's share of NCCL's step (max(3.4, 2 × 3) - 3.4 =
# 2.6 us, coll_net_channel ring_step_host_excess); on the Intel default nothing more.
for cpu in epyc-9654 xeon-platinum-8570; do
  out=$(fabricsim explain coll topologies/cluster.yaml -D node=hgx-b200 -D nodes=2 -D cpu=$cpu --nccl-version 2.28 -o all_gather -s 64M)
  want="idles 16.60 us before each ring step (NCCL's network step 14.00 us × 1.0 + the host's share of a step 2.60 us"
  [ "$cpu" = epyc-9654 ] || want="idles 14.00 us before each ring step (NCCL's network step 14.00 us × 1.0 + the host's share of a step 0.00 us"
  contains "$out" "choice: ring / Simple / 16 channels" "explain coll ring step on $cpu"
  contains "$out" "$want" "explain coll ring step on $cpu"
done
# A tuner plugin (NCCL_TUNER_PLUGIN, models/nccl/tuners/): aws-ofi-nccl's p5 regions put a
# 64 MiB all_reduce on 4 nodes of 8 on Ring/LL128, and the explanation says who chose it; on 2
# nodes the plugin leaves the choice to NCCL's model.
out=$(NCCL_TUNER_PLUGIN=aws-ofi-nccl-p5 fabricsim explain coll topologies/dgx-h100-ib-ndr.yaml -D nodes=4 -s 64M)
case "$out" in *"choice: ring / LL128 /"*"chosen by the tuner plugin aws-ofi-nccl-p5"*"(67108864 B, 32 ranks)"*) ;;
  *) fail "explain coll tuner plugin: $out" ;; esac
out=$(NCCL_TUNER_PLUGIN=aws-ofi-nccl-p5 fabricsim explain coll topologies/dgx-h100-ib-ndr.yaml -D nodes=2 -s 64M)
case "$out" in *"chosen by the tuner plugin"*) fail "explain coll tuner plugin on 2 nodes: $out" ;; esac
refused "explain coll unknown tuner plugin" env NCCL_TUNER_PLUGIN=no-such-plugin fabricsim explain coll topologies/dgx-h100.yaml
contains "$err" "NCCL_TUNER_PLUGIN=\"no-such-plugin\"" "explain coll unknown tuner plugin"
refused "explain coll unknown release" fabricsim explain coll topologies/cluster.yaml --nccl-version 9.9
contains "$err" "no parameter file for this release" "explain coll unknown release"
