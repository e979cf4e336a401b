#!/usr/bin/env bash
# train-rows.sh — runs each row of the training reference tables
# (validation/reference/training/training-*.csv) as one `fabricsim train`
# process, the way src/scenario/train-ref.c runs it (topology of the table's
# `# topology:` line with nodes = GPUs / gpus_per_node, the row's workload and
# overrides), and prints per row: the table, the row's name, user CPU
# seconds, peak RSS (KiB), the simulated step time (ps) and the command.
#
#   tests/bench/train-rows.sh [-b BUILD] [-c CPU_CAP_S] [-t TABLE] [-r REGEX] [-- TRAIN_OPTIONS…]
#
# -b: build folder (default build-rel); -c: CPU cap per row in seconds
# (ulimit -t; default 60; a row past it prints "cap"); -t: one table
# (file name, default every table); -r: only rows whose name matches the
# extended regular expression.  Options after -- go to `fabricsim train`
# (e.g. --dp-isolated, which is what `fabricsim validate` runs; without it the
# default, full-contention mode runs).  Run from the source root, one row at
# a time (the rows are timed by /usr/bin/time).  Exit status 1 when a row
# failed (not a cap), 2 on a usage error.
set -u
build="build-rel"
cap=60
table=
regex=.
while getopts b:c:t:r: o; do
  case $o in
    b) build=$OPTARG ;;
    c) cap=$OPTARG ;;
    t) table=$OPTARG ;;
    r) regex=$OPTARG ;;
    *) echo "usage: $0 [-b BUILD] [-c CPU_CAP_S] [-t TABLE] [-r REGEX] [-- TRAIN_OPTIONS...]" >&2
       exit 2 ;;
  esac
done
shift $((OPTIND - 1))
bin=$build/src/cli/fabricsim
dir=validation/reference/training
if [ ! -x "$bin" ] || [ ! -d "$dir" ]; then
  echo "$0: run from the source root after building $bin" >&2
  exit 2
fi
if [ -n "$table" ]; then files=$dir/$table; else files=$(ls $dir/training-*.csv); fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
extra="$*"
: > "$tmp/failed"
printf 'table\trow\tuser_s\tpeak_kib\tstep_ps\tcommand\n'
for f in $files; do
  topo=$(sed -n 's/^# topology: *//p' "$f")
  gpn=$(sed -n 's/^# gpus_per_node: *//p' "$f")
  gpn=${gpn:-8}
  tfile=${topo%% *}
  tdefs=
  case $topo in *" "*) for d in ${topo#* }; do tdefs="$tdefs -D $d"; done ;; esac
  grep -v '^#' "$f" | tail -n +2 | while IFS=, read -r name _ workload gpus overrides _; do
    [ -n "$name" ] || continue
    echo "$name" | grep -Eq -- "$regex" || continue
    nodes=$(( (gpus + gpn - 1) / gpn ))
    cmd="$bin train $tfile -D nodes=$nodes$tdefs workloads/$workload --json -q $extra $overrides"
    # shellcheck disable=SC2086
    ( ulimit -t "$cap"; /usr/bin/time -f '%U %M' -o "$tmp/time" $cmd < /dev/null > "$tmp/out" 2> "$tmp/err" )
    rc=$?
    tail -n 1 "$tmp/time" > "$tmp/time.last"
    read -r user rss < "$tmp/time.last" 2>/dev/null || true
    step=$(sed -n 's/.*"step_time_ps": *\([0-9]*\).*/\1/p' "$tmp/out" | head -n 1)
    if [ $rc -ne 0 ]; then
      if grep -q 'Command terminated by signal \(9\|24\)' "$tmp/time"; then step=cap; else
        step="failed($rc): $(head -n 1 "$tmp/err")"; echo "$name" >> "$tmp/failed"; fi
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "${f##*/}" "$name" "$user" "$rss" "$step" "$cmd"
  done
done
[ -s "$tmp/failed" ] && exit 1
exit 0
