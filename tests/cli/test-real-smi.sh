#!/usr/bin/env bash
# test-real-smi.sh — real `nvidia-smi topo -m` outputs (tests/data/real/smi,
# sources in SOURCES.md): each imports; the GPU, CPU and NIC models are those
# of the table below, and a model the matrix cannot decide is a "guess:" line
# on stderr; `topo paths` on the output prints the input's GPU x GPU classes
# (after the documented repair of cells run together); and a p2p simulation
# of GPU0 -> GPU1 lies between bounds derived from the chosen GPU's catalog
# link rates (at most its NVLink aggregate or PCIe rate, whichever the pair
# uses, and at least a tenth of its PCIe rate).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

dir="$FS_TEST_DATA/real/smi"

# file | gpu | cpu | nic ("-": no NIC in the matrix) | lines that must be on stderr
# (comma separated fragments).  Only the NVLink counts, affinities and
# device names are in these matrices; the GPU is a guess unless NV# and
# the catalog decide it, and then the stderr line lists the alternatives.
table='
go-gpuallocator-17-8x4090.txt|h100-pcie|xeon-platinum-8480c|connectx-7|guess: GPU h100-pcie,also fits rtx-4090,NUMA Affinity column is ignored
unsloth-3872-b200.txt|h100-sxm|xeon-platinum-8480c|connectx-7|guess: GPU h100-sxm,h200-sxm, b200
nccl-1453-h100.txt|h100-sxm|xeon-platinum-8480c|connectx-7|guess: GPU h100-sxm
club3090-46-5x4090.txt|h100-pcie|xeon-platinum-8480c|-|guess: GPU h100-pcie
club3090-1133-2x5090-threadripper.txt|h100-pcie|epyc-7742|-|guess: CPU epyc-7742 (64 logical CPUs on 1 socket)
club3090-1229-2x5090.txt|h100-pcie|epyc-7742|-|guess: GPU h100-pcie
club3090-1125-2gpu-markdown.txt|h100-pcie|xeon-platinum-8480c|-|guess: GPU h100-pcie
vllm-13855-h100-glued.txt|h100-sxm|xeon-platinum-8480c|connectx-7|repaired: split 5 words,NIC8NIC9,guess: GPU h100-sxm
ucx-py-749-dgx-a100-numa.txt|h100-pcie|epyc-7742|connectx-7|NUMA Affinity column is ignored,256 logical CPUs
thunderkittens-167-h100.txt|h100-sxm|xeon-platinum-8468|-|guess: GPU h100-sxm,also fits h200-sxm, b200
oneflow-dlperf-dgx1-v100.txt|v100-sxm2-16gb|xeon-platinum-8168|connectx-5|guess: GPU v100-sxm2-16gb,up to 6 direct NVLinks,also fits v100-sxm2-32gb
'

# GPU x GPU classes of an nvidia-smi matrix, cells run together split as
# the importer does (SYSSYS -> SYS SYS; NIC8NIC9 -> NIC8 NIC9).
smi_gpu_matrix() {
  sed -E -e 's/\r//g' -e 's/^[[:space:]]*\|//' -e 's/\|/ /g' \
      -e ':a' -e 's/(NV[0-9]+|NODE|PIX|PXB|PHB|SYS)(NV[0-9]|NODE|PIX|PXB|PHB|SYS)/\1 \2/' -e 'ta' \
      -e ':b' -e 's/((GPU|NIC)[0-9]+)((GPU|NIC)[0-9])/\1 \3/' -e 'tb' "$1" | awk '
    !h && $1 == "GPU0" && $2 != "X" { h = 1; n = 0; for (i = 1; i <= NF; i++) if ($i ~ /^GPU[0-9]+$/) n++; next }
    h && $1 ~ /^GPU[0-9]+$/ { line = ""; for (i = 2; i <= n + 1; i++) line = line (i > 2 ? " " : "") $i; print line }'
}
paths_gpu_matrix() {
  awk '/^GPU[0-9]+ / && $2 != "=" { line = ""; for (i = 2; i < NF; i++) line = line (i > 2 ? " " : "") $i; print line }' "$1"
}

n=0
while IFS='|' read -r file gpu cpu nic want; do
  [ -n "$file" ] || continue
  f="$dir/$file"
  [ -f "$f" ] || fail "$file: missing"
  b=${file%.txt}
  "$FABRICSIM" topo import-smi "$f" -o "$tmp/$b.yaml" 2> "$tmp/$b.err" || fail "$file: import exited $?: $(cat "$tmp/$b.err")"
  grep -q "{name: gpu0, model: $gpu}" "$tmp/$b.yaml" || fail "$file: GPU is not $gpu: $(grep -m1 'name: gpu0' "$tmp/$b.yaml")"
  grep -q "{name: cpu0, model: $cpu," "$tmp/$b.yaml" || fail "$file: CPU is not $cpu: $(grep -m1 'name: cpu0' "$tmp/$b.yaml")"
  if [ "$nic" != "-" ]; then
    grep -q "{name: nic0, model: $nic}" "$tmp/$b.yaml" || fail "$file: NIC is not $nic"
  fi
  IFS=',' read -r -a frags <<< "$want"
  for frag in "${frags[@]}"; do
    grep -qF -- "$frag" "$tmp/$b.err" || fail "$file: stderr lacks '$frag': $(cat "$tmp/$b.err")"
  done
  # Guess lines name the input and are one line each.
  ! grep -v "^fabricsim topo: " "$tmp/$b.err" > /dev/null || fail "$file: stray stderr: $(cat "$tmp/$b.err")"
  # Round trip through topo paths.
  "$FABRICSIM" topo paths "$tmp/$b.yaml" > "$tmp/$b.paths"
  smi_gpu_matrix "$f" > "$tmp/$b.want"
  paths_gpu_matrix "$tmp/$b.paths" > "$tmp/$b.got"
  [ -s "$tmp/$b.want" ] || fail "$file: could not read the input matrix"
  diff "$tmp/$b.want" "$tmp/$b.got" > /dev/null || fail "$file: topo paths differs from the input:
$(diff "$tmp/$b.want" "$tmp/$b.got")"
  # Simulate GPU0 -> GPU1; bounds from the GPU's catalog links.
  "$FABRICSIM" p2p --json -s 64M "$tmp/$b.yaml" > "$tmp/$b.p2p.json"
  "$FABRICSIM" models --json > "$tmp/models.json"
  python3 - "$tmp/$b.p2p.json" "$tmp/models.json" "$gpu" "$(head -1 "$tmp/$b.want" | cut -d' ' -f2)" "$file" <<'PY'
import json, sys
p2p = json.load(open(sys.argv[1])); models = {m["name"]: m for m in json.load(open(sys.argv[2]))}
gpu, cell, name = models[sys.argv[3]], sys.argv[4], sys.argv[5]
got = p2p["unidirectional_gbps"][0][1] * 1e9
pcie = models[gpu["pcie"]]["raw_bandwidth"]
if cell.startswith("NV"):
    upper = gpu["nvlinks"] * models[gpu["nvlink"]]["raw_bandwidth"]
else:
    upper = pcie
lower = 0.1 * pcie
if not (lower <= got <= upper * 1.000001):
    sys.exit(f"FAIL: {name}: GPU0->GPU1 ({cell}) {got/1e9:.1f} GB/s outside [{lower/1e9:.1f}, {upper/1e9:.1f}] GB/s")
PY
  n=$((n + 1))
done <<< "$table"
[ "$n" -ge 10 ] || fail "expected at least 10 real matrices, found $n"
[ "$(ls "$dir"/*.txt | wc -l)" -eq "$n" ] || fail "a file of $dir is not in the table"
echo "cli real-smi: ok ($n real matrices)"
