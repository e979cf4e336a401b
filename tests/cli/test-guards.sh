#!/usr/bin/env bash
# test-guards.sh — every resource guard has a FABRICSIM_MAX_* override
# (issue 19 item 4; the table in README.md "Resource guards"): each guard,
# triggered with a small value of its variable, stops the run with one line
# that names the guard's variable, exit 2 for a guard on an input (a file, a
# topology, a spec) and 1 for a guard on a run; the sampler guard warns and
# goes on.  The overrides that lift a guard are checked where it is cheap.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

T="$FS_SOURCE_ROOT/topologies/dgx-h100.yaml"
W="$FS_SOURCE_ROOT/workloads/gpt3-13b.yaml"

# guard VAR VALUE RC FRAGMENT CMD...: runs CMD with VAR=VALUE; checks the
# status, that stderr is one line holding FRAGMENT and naming VAR.
guard() {
  local var="$1" val="$2" want="$3" frag="$4" rc=0
  shift 4
  env "$var=$val" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
  [ "$rc" -eq "$want" ] || fail "$var=$val $*: exit $rc, want $want: $(cat "$tmp/err")"
  [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$var=$val: stderr is not one line: $(cat "$tmp/err")"
  grep -qF -- "$frag" "$tmp/err" || fail "$var=$val: '$(cat "$tmp/err")' lacks '$frag'"
  grep -qF -- "$var" "$tmp/err" || fail "$var=$val: '$(cat "$tmp/err")' does not name $var"
}

# Inputs: topology names, nodes, links; YAML size, nodes, depth; name
# expressions; NCCL XML; nvidia-smi devices; workload layers and presets;
# flow lists; sweep points; JSON and log files; Chakra messages.
guard FABRICSIM_MAX_NAMES 4 2 'expands to 8 names; the limit is 4' "$FABRICSIM" topo check "$T"
guard FABRICSIM_MAX_NODES 4 2 'more than 4 nodes' "$FABRICSIM" topo check "$T"
guard FABRICSIM_MAX_LINKS 4 2 'more than 4 links' "$FABRICSIM" topo check "$T"
guard FABRICSIM_MAX_FILE_BYTES 100 2 'the file is larger than 100 bytes' "$FABRICSIM" topo check "$T"
guard FABRICSIM_MAX_YAML_NODES 10 2 'the document has more than 10 nodes' "$FABRICSIM" topo check "$T"
guard FABRICSIM_MAX_YAML_DEPTH 2 2 'the document nests deeper than 2 levels' "$FABRICSIM" topo check "$T"
printf 'name: e\nparameters: {n: 2}\nnodes:\n  - {name: "gpu[0-${((n-1))}]", model: h100-sxm}\n' >"$tmp/expr.yaml"
guard FABRICSIM_MAX_EXPR_DEPTH 2 2 'nested more than 2 deep' "$FABRICSIM" topo check "$tmp/expr.yaml"
guard FABRICSIM_MAX_XML_DEPTH 2 2 'elements nested more than 2 deep' \
  "$FABRICSIM" topo import-nccl "$FS_TEST_DATA/nccl-xml/y_cloud-bare-pci.xml"
guard FABRICSIM_MAX_DEVICES 2 2 'more than 2 device columns' \
  "$FABRICSIM" topo import-smi "$FS_TEST_DATA/smi/y_dgx-a100-nics.txt"
guard FABRICSIM_MAX_LAYERS 2 2 'expands to more than 2 layers' \
  "$FABRICSIM" train "$T" "$FS_TEST_DATA/workload/i_many_layers.yaml"
mkdir "$tmp/pre"
printf 'model: b\n' >"$tmp/pre/a.yaml"
printf 'model: c\n' >"$tmp/pre/b.yaml"
cp "$W" "$tmp/pre/c.yaml"
printf 'name: w\nmodel: a\n' >"$tmp/pre/w.yaml"
guard FABRICSIM_MAX_PRESET_DEPTH 1 2 'presets nest deeper than 1' "$FABRICSIM" train "$T" "$tmp/pre/w.yaml"
printf 'id,start,src,dst,bytes\na,0 us,gpu0,gpu1,1M\nb,0 us,gpu1,gpu2,1M\n' >"$tmp/f.csv"
guard FABRICSIM_MAX_FLOWS 1 2 'more than 1 flows' "$FABRICSIM" flows "$T" "$tmp/f.csv"
guard FABRICSIM_MAX_POINTS 1 2 'expands past 1 points' "$FABRICSIM" sweep "$FS_TEST_DATA/sweep/y_coll_sizes.yaml"
# A 2 MiB JSON calibration and nccl-tests log under a 1 MiB guard (the
# models' YAML files are smaller).
python3 - "$FS_TEST_DATA/calibration/y_minimal.json" "$tmp/big.json" <<'PY'
import sys
text = open(sys.argv[1]).read()
open(sys.argv[2], "w").write(text + " " * (2 << 20))
PY
guard FABRICSIM_MAX_FILE_BYTES 1048576 2 'file is larger than 1 MiB' \
  "$FABRICSIM" coll "$T" -b 1M -e 1M --calibration "$tmp/big.json"
"$FABRICSIM" coll "$T" -b 1M -e 1M -J "$tmp/j.json" >"$tmp/log.txt"
python3 -c "import sys; open(sys.argv[1], 'a').write('#\n' * (1 << 20))" "$tmp/log.txt"
guard FABRICSIM_MAX_FILE_BYTES 1048576 2 'file is larger than 1 MiB' \
  "$FABRICSIM" calibrate nccl-tests "$tmp/log.txt" --topo "$T"
"$FABRICSIM" train "$T" "$W" --tp=1 --pp=8 --global-batch-size=16 --chakra-out "$tmp/et" >/dev/null
guard FABRICSIM_MAX_MESSAGE_BYTES 1 2 'is larger than 1 bytes' "$FABRICSIM" replay "$T" --chakra "$tmp/et"

# Runs: events, plan steps, communicator ranks, the path matrix, plan
# systems and designs, coll sizes.
guard FABRICSIM_MAX_EVENTS 10 1 'reached its limit of 10 events' "$FABRICSIM" coll "$T" -b 1M -e 1M
guard FABRICSIM_MAX_STEPS 100 1 'the plan-step guard' "$FABRICSIM" coll "$T" -b 64M -e 64M --algo ring
guard FABRICSIM_MAX_RANKS 4 1 'the communicator guard: 8 GPUs, at most 4' "$FABRICSIM" coll "$T" -b 1M -e 1M
guard FABRICSIM_MAX_MATRIX_GPUS 4 1 'the path matrix is printed for at most 4' "$FABRICSIM" topo paths "$T"
P=("$FABRICSIM" plan --workload "$W" --fabric "$FS_SOURCE_ROOT/topologies/dgx-h100-ib-ndr.yaml"
   --gpus 8-16 -q --target-step-time 100s)
guard FABRICSIM_MAX_SYSTEMS 1 1 'above the limit of 1' "${P[@]}"
guard FABRICSIM_MAX_CANDIDATES 1 1 'above the limit of 1' "${P[@]}"
guard FABRICSIM_MAX_SIZES 3 2 'is 4 sizes; at most 3 are allowed' "$FABRICSIM" coll "$T" -b 1K -e 8K -f 2

# The sampler guard warns in one line and writes the trace without link tracks.
FABRICSIM_MAX_SAMPLER_BYTES=1 "$FABRICSIM" flows "$T" "$tmp/f.csv" --trace "$tmp/t.json" \
  >/dev/null 2>"$tmp/err" || fail "flows under the sampler guard failed: $(cat "$tmp/err")"
[ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -qF "FABRICSIM_MAX_SAMPLER_BYTES" "$tmp/err" \
  || fail "sampler guard: $(cat "$tmp/err")"
[ -s "$tmp/t.json" ] || fail "no trace under the sampler guard"

# The overrides lift the guards.
FABRICSIM_MAX_RANKS=8 "$FABRICSIM" coll "$T" -b 1M -e 1M >/dev/null || fail "FABRICSIM_MAX_RANKS=8"
FABRICSIM_MAX_POINTS=100 "$FABRICSIM" sweep "$FS_TEST_DATA/sweep/y_coll_sizes.yaml" >/dev/null \
  || fail "FABRICSIM_MAX_POINTS=100"
# (the expression passes; the topology is then refused for its lone GPUs)
FABRICSIM_MAX_EXPR_DEPTH=8 "$FABRICSIM" topo check "$tmp/expr.yaml" >/dev/null 2>"$tmp/err" || true
grep -qF "is not connected to any other GPU" "$tmp/err" || fail "FABRICSIM_MAX_EXPR_DEPTH=8: $(cat "$tmp/err")"
echo "cli guards: ok"
