#!/usr/bin/env bash
# test-corpus.sh — every parser corpus under tests/data, through the command.
#
# For each format with a command (the table below), every file is run
# through `fabricsim`:
#   n_*  must exit exactly 2 with ONE line on stderr that starts with
#        FILE:LINE:COL: (after the "fabricsim <command>: " prefix; FILE is
#        the input or, for an error inside an include, a file beside or
#        below it) and contains the fragment in n_*.err;
#   y_*  must exit 0;
#   i_*  must exit 0, 1 (a run that passes a limit, one line) or 2 — never a signal, never more than 10 s.
# Formats without a command (yaml: the tree itself, units) are covered by
# their unit tests and the fuzz-replay suite, as are nccl-tests logs (whose
# y_ files need other topologies and --op) and efficiency curves (read from
# a models folder): tests/test-nccl-log.c, tests/test-corpus.c.
#
# Adding a format is one line: FORMAT|EXT|ARGS, where ARGS is the fabricsim
# command line with FILE standing for the input, or DIR for a fresh folder
# that holds only the input (for loaders that read a folder); ROOT/ at the
# start of a word is the source tree.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

formats=(
  "models|yaml|models --models DIR"
  "topo|yaml|topo check FILE"
  "flows|csv|flows ROOT/topologies/dgx-h100.yaml FILE"
  "flows|json|flows ROOT/topologies/dgx-h100.yaml FILE"
  "nccl-xml|xml|topo import-nccl FILE"
  "smi|txt|topo import-smi FILE"
  "replay|json|replay ROOT/topologies/dgx-h100.yaml FILE"
  "calibration|json|models --calibration FILE"
  "nccl-params|yaml|coll ROOT/topologies/dgx-h100.yaml --nccl-params FILE -b 1M -e 1M"
  "sweep|yaml|sweep -q -j 1 FILE"
)

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
failures=0
checked=0

# Reduced mode (FS_TEST_REDUCED, the sanitizer build; tests/README.md): every
# y_ and i_ file (the whole command runs on them), and every third n_ file of
# each format in name order (the command's error path still runs for every
# format).  The other n_ files' parsers run under the same sanitizers in
# process, corpus by corpus, in the fuzz-replay suite; their messages are
# checked here by the plain build.
reduced=0
[ -n "${FS_TEST_REDUCED:-}" ] && [ "$FS_TEST_REDUCED" != 0 ] && reduced=1

# run_case ARGS FILE: runs the command on FILE; sets status, err (its
# stderr, trailing newlines dropped) and shown (the path the command was
# given, which its messages name).  Bash builtins only, besides timeout and
# the command itself: with a thousand cases, every extra process (a
# subshell, mkdir, wc, grep) costs more than the run of the command.
run_case() {
  local spec="$1" file="$2" args=() word case_dir=""
  shown="$file"
  for word in $spec; do
    case "$word" in
      FILE) args+=("$file") ;;
      DIR)
        case_dir="$tmp/case.$checked"
        mkdir -p "$case_dir"
        cp "$file" "$case_dir/"; shown="$case_dir/${file##*/}"; args+=("$case_dir") ;;
      ROOT/*) args+=("$FS_SOURCE_ROOT/${word#ROOT/}") ;;
      *) args+=("$word") ;;
    esac
  done
  status=0
  timeout 10 "$FABRICSIM" "${args[@]}" >/dev/null 2>"$tmp/err" || status=$?
  err=""
  IFS= read -r -d '' err <"$tmp/err" || true
  while [[ "$err" == *$'\n' ]]; do err="${err%$'\n'}"; done
  [ -z "$case_dir" ] || rm -rf "$case_dir"
  checked=$((checked + 1))
}

# The start of an error line: the command's prefix, then FILE:LINE:COL: with
# FILE in the input's folder (quoted in the test below: matched literally).
err_start='^(fabricsim[a-z -]*: )?'
err_place='/[^:]+:[0-9]+:[0-9]+: '

for entry in "${formats[@]}"; do
  IFS='|' read -r format ext spec <<<"$entry"
  dir="$FS_TEST_DATA/$format"
  [ -d "$dir" ] || { fail "$format: no folder $dir"; continue; }
  n=0
  nth=0
  for file in "$dir"/[yni]_*."$ext"; do
    [ -e "$file" ] || continue
    base="${file##*/}"
    if [ "$reduced" -eq 1 ] && [[ "$base" == n_* ]]; then
      nth=$((nth + 1))
      [ $((nth % 3)) -eq 1 ] || continue
    fi
    n=$((n + 1))
    run_case "$spec" "$file"
    if [ "$status" -eq 124 ]; then
      fail "$format/$base: took more than 10 s"
      continue
    fi
    if [ "$status" -gt 128 ]; then
      fail "$format/$base: killed by signal $((status - 128)): $err"
      continue
    fi
    case "$base" in
      y_*)
        [ "$status" -eq 0 ] || fail "$format/$base: exit status $status, expected 0: $err" ;;
      i_*)
        [ "$status" -le 2 ] || fail "$format/$base: exit status $status, expected 0, 1 or 2: $err" ;;
      n_*)
        sidecar="${file%.*}.err"
        if [ "$status" -ne 2 ]; then
          fail "$format/$base: exit status $status, expected 2: $err"
        elif [[ "$err" == *$'\n'* ]]; then
          fail "$format/$base: stderr is not one line: $err"
        elif ! [[ "$err" =~ $err_start"${shown%/*}"$err_place ]]; then
          fail "$format/$base: stderr does not start with $shown:LINE:COL: (or an included file's): $err"
        elif [ ! -f "$sidecar" ]; then
          fail "$format/$base: no ${sidecar##*/}"
        else
          fragment=""
          IFS= read -r fragment <"$sidecar" || true
          case "$err" in
            *"$fragment"*) ;;
            *) fail "$format/$base: stderr does not contain '$fragment': $err" ;;
          esac
        fi ;;
    esac
  done
  [ "$n" -gt 0 ] || fail "$format: no cases in $dir"
done

[ "$failures" -eq 0 ] || { echo "corpus: $failures of $checked cases failed" >&2; exit 1; }
echo "corpus: $checked cases ok"
