#!/usr/bin/env bash
# test-help.sh — `fabricsim --help`, `help`, `--version` and unknown commands.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

out=$("$FABRICSIM" --help) || fail "--help exited $?"
case "$out" in *"Usage: fabricsim"*"units"*) ;; *) fail "--help does not list the commands: $out" ;; esac
out=$("$FABRICSIM" -h) || fail "-h exited $?"
case "$out" in *"Usage: fabricsim"*) ;; *) fail "-h: $out" ;; esac
out=$("$FABRICSIM" help) || fail "help exited $?"
case "$out" in *"Commands:"*"units"*"help"*) ;; *) fail "help does not list the commands: $out" ;; esac
[ "$out" = "$("$FABRICSIM" --help)" ] || fail "help and --help differ"

out=$("$FABRICSIM" --version) || fail "--version exited $?"
printf '%s\n' "$out" | grep -Eq '^fabricsim [0-9]+\.[0-9]+\.[0-9]+$' || fail "--version printed: $out"

# Every command in the table answers --help with an example.
for cmd in $("$FABRICSIM" help | sed -n '/^Commands:/,/^$/p' | awk 'NR>1 && NF {print $1}'); do
  [ "$cmd" = help ] && continue
  out=$("$FABRICSIM" "$cmd" --help) || fail "$cmd --help exited $?"
  case "$out" in *"Example"*) ;; *) fail "$cmd --help shows no example" ;; esac
done

# The command-line fuzzer's dictionary names every option of every command.
dict="${FS_SOURCE_ROOT:?set FS_SOURCE_ROOT}/tests/fuzz/cli.dict"
for cmd in units models topo p2p flows coll calibrate validate train replay sweep plan \
           "explain schedule" "explain coll" "explain topo" "explain overlap"; do
  # shellcheck disable=SC2086 # "explain TOPIC" is two words
  for opt in $("$FABRICSIM" $cmd --help | grep -oE '^ +(-[a-zA-Z], )?--[a-z0-9-]+' | tr -d ','); do
    grep -qxF "\"$opt\"" "$dict" || fail "tests/fuzz/cli.dict lacks \"$opt\" of $cmd"
  done
done

# Every file of the source tree that a --help text names (its examples) exists
# (train's named a workload that never did).
for cmd in units models topo p2p flows coll calibrate validate train replay sweep plan \
           "explain schedule" "explain coll" "explain topo" "explain overlap"; do
  # shellcheck disable=SC2086 # "explain TOPIC" is two words
  for path in $("$FABRICSIM" $cmd --help |
                grep -oE '(^|[ =])(models|topologies|workloads|validation|tests)/[^ ,;)]*[^ ,;).]' |
                sed 's/^[ =]//'); do
    case "$path" in *X.Y*) continue ;; esac  # a pattern (models/nccl/nccl-X.Y.yaml), not a file
    [ -e "$FS_SOURCE_ROOT/$path" ] || fail "$cmd --help names $path, which does not exist"
  done
done

out=$("$FABRICSIM" units --help) || fail "units --help exited $?"
case "$out" in *"Example:"*"fabricsim units "*) ;; *) fail "units --help shows no example: $out" ;; esac
out=$("$FABRICSIM" help units) || fail "help units exited $?"
case "$out" in *"fabricsim units "*) ;; *) fail "help units: $out" ;; esac

# Unknown command: exit 2, one line on stderr listing the commands.
status=0
err=$("$FABRICSIM" frobnicate 2>&1 >/dev/null) || status=$?
[ "$status" -eq 2 ] || fail "unknown command exited $status, expected 2"
[ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "unknown command: stderr is not one line: $err"
case "$err" in *"frobnicate"*"units"*"help"*) ;; *) fail "unknown command message: $err" ;; esac

status=0
err=$("$FABRICSIM" help frobnicate 2>&1 >/dev/null) || status=$?
[ "$status" -eq 2 ] || fail "help frobnicate exited $status, expected 2"

status=0
err=$("$FABRICSIM" --frobnicate 2>&1 >/dev/null) || status=$?
[ "$status" -eq 2 ] || fail "unknown option exited $status, expected 2"
[ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "unknown option: stderr is not one line: $err"

# No command at all: usage on stderr, exit 2.
status=0
"$FABRICSIM" >/dev/null 2>&1 || status=$?
[ "$status" -eq 2 ] || fail "no command exited $status, expected 2"

echo "cli help: ok"
