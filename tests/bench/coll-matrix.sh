#!/usr/bin/env bash
# coll-matrix.sh — issue #18's done-when as a benchmark: `fabricsim coll` on
# clusters of H100 and B200 nodes, every algorithm for every operation, at one
# large size, one process per cell, with CollNet/SHARP enabled
# (NCCL_COLLNET_ENABLE=1, -D sharp=1) so that every algorithm NCCL could run
# is offered.  Prints per cell: node template, nodes, operation, algorithm,
# outcome (ok: the run's algorithm/protocol/channels and busbw; refused: the
# algorithm does not run that operation or shape, with fabricsim's reason;
# FAIL: any other error; cap: over the CPU cap), user CPU seconds and peak RSS.
#
#   tests/bench/coll-matrix.sh [-b BUILD] [-c CPU_CAP_S] [-s SIZE] [-n "NODES…"]
#                              [-N "TEMPLATES…"] [-o "OPS…"] [-a "ALGOS…"]
#
# Defaults: build-rel, cap 60 s (the bar: under 60 s CPU per size), size 16G,
# nodes "1 2 8 64", templates "dgx-h100 hgx-b200" (topologies/cluster.yaml
# node=…), every operation, algorithms "default ring tree nvls nvls_tree
# collnet_direct collnet_chain pat" (default: the tuner's choice).  Run from
# the source root.  Exit status 1 when a cell failed or passed the cap (a
# refusal is not a failure), 2 on a usage error.
set -u
build=build-rel
cap=60
size=16G
nodes_list="1 2 8 64"
templates="dgx-h100 hgx-b200"
ops="all_reduce all_gather reduce_scatter broadcast reduce alltoall gather scatter sendrecv"
algos="default ring tree nvls nvls_tree collnet_direct collnet_chain pat"
while getopts b:c:s:n:N:o:a: o; do
  case $o in
    b) build=$OPTARG ;;
    c) cap=$OPTARG ;;
    s) size=$OPTARG ;;
    n) nodes_list=$OPTARG ;;
    N) templates=$OPTARG ;;
    o) ops=$OPTARG ;;
    a) algos=$OPTARG ;;
    *) echo "usage: $0 [-b BUILD] [-c CPU_CAP_S] [-s SIZE] [-n NODES] [-N TEMPLATES] [-o OPS] [-a ALGOS]" >&2
       exit 2 ;;
  esac
done
bin=$build/src/cli/fabricsim
if [ ! -x "$bin" ] || [ ! -f topologies/cluster.yaml ]; then
  echo "$0: run from the source root after building $bin" >&2
  exit 2
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
status=0
printf 'node\tnodes\top\talgo\toutcome\tuser_s\tpeak_kib\tdetail\n'
for tpl in $templates; do
  for n in $nodes_list; do
    for op in $ops; do
      for a in $algos; do
        set -- "$bin" coll topologies/cluster.yaml -D node="$tpl" -D nodes="$n" -D sharp=1 \
          -o "$op" -b "$size" -e "$size" --csv -q
        [ "$a" = default ] || set -- "$@" --algo "$a"
        ( ulimit -t "$cap"; NCCL_COLLNET_ENABLE=1 /usr/bin/time -f '%U %M' -o "$tmp/time" \
            "$@" < /dev/null > "$tmp/out" 2> "$tmp/err" )
        st=$?
        read -r user kib < <(tail -1 "$tmp/time" 2>/dev/null || echo "- -")
        if [ "$st" -eq 0 ]; then
          outcome=ok
          detail=$(tail -1 "$tmp/out")
        elif [ "$st" -eq 2 ] && grep -q "no allowed algorithm and protocol can run" "$tmp/err"; then
          outcome=refused
          detail=$(head -1 "$tmp/err")
        elif [ "$st" -gt 128 ]; then
          outcome=cap
          detail="killed after ${cap} s CPU"
          status=1
        else
          outcome=FAIL
          detail=$(head -1 "$tmp/err")
          status=1
        fi
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$tpl" "$n" "$op" "$a" "$outcome" "$user" "$kib" "$detail"
      done
    done
  done
done
exit $status
