#!/usr/bin/env bash
# The long reliability run of issue 14: libFuzzer over the trace reader (format/) and over the
# analyses (model/: reader plus report, streamed report and GOAL export), both under ASan and UBSan,
# for a number of executions each. Builds both targets with clang into BUILD_DIR/fuzz-long (a few
# minutes: all of model/ is compiled again with the sanitizers); prints each target's executions,
# crashes and time; exits non-zero if a target found anything (the input is kept in
# BUILD_DIR/fuzz-long/, named crash-*, leak-*, timeout-* or oom-*).
#
# Usage: tests/fuzz/long_fuzz.sh [BUILD_DIR] [RUNS]     RUNS: executions per target (default 10000000)
# Environment: FUZZ_JOBS (parallel fuzzing processes per target, default 1), FUZZ_MAX_SECONDS (stop a
# target after this many seconds even below RUNS; default: no limit).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-build}
runs=${2:-10000000}
jobs=${FUZZ_JOBS:-1}
max_s=${FUZZ_MAX_SECONDS:-0}
clang=$(command -v clang++ || command -v clang++-14 || true)
[[ -n $clang ]] || { echo "long_fuzz.sh: no clang++ (apt-get install clang)" >&2; exit 2; }
mkdir -p "$build/fuzz-long"
out=$(cd "$build/fuzz-long" && pwd)
# No allocation stacks kept by ASan: a quarter more executions a second (replay an artifact found
# with the default options, `BINARY ARTIFACT`, to see where its memory came from).
export ASAN_OPTIONS=${ASAN_OPTIONS:-malloc_context_size=0}
flags=(-std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I"$root")

echo "# compiling format/ and model/ with the sanitizers (a few minutes the first time)"
nofuzz=("${flags[@]/-fsanitize=fuzzer,address,undefined/-fsanitize=fuzzer-no-link,address,undefined}")
# A header changed since the last build: every object again (a .cpp is also rebuilt when newer).
stamp="$out/obj/.built"
if [[ ! -f $stamp || -n $(find "$root/format" "$root/model" \( -name '*.hpp' -o -name '*.def' \) -newer "$stamp" | head -n 1) ]]; then
  rm -rf "$out/obj"
fi
# The stamp takes the time the build started: a header edited while it runs rebuilds next time
# (objects of two versions of a header in one binary crash in ways that look like findings).
mkdir -p "$out/obj"
touch "$stamp.new"
objs=()
for src in "$root"/format/*.cpp $(find "$root/model" -name '*.cpp' | sort); do
  case $src in */export/otf2.cpp | */import/*) continue ;; esac  # OTF2's library: not reached from a report
  obj="$out/obj/${src#"$root"/}.o"
  mkdir -p "$(dirname "$obj")"
  if [[ ! -f $obj || $src -nt $obj ]]; then
    "$clang" "${nofuzz[@]}" -c "$src" -o "$obj" &
    while (($(jobs -r | wc -l) >= $(nproc))); do wait -n; done
  fi
  objs+=("$obj")
done
wait
mv "$stamp.new" "$stamp"
for target in fuzz_reader fuzz_model; do
  "$clang" "${flags[@]}" "$root/tests/fuzz/$target.cpp" "${objs[@]}" -lfmt -lzstd -o "$out/$target"
done

status=0
for target in fuzz_reader fuzz_model; do
  corpus="$out/corpus-$target"
  mkdir -p "$corpus"
  seeds=()
  [[ $target == fuzz_reader ]] && seeds=("$root/tests/fuzz/seeds")
  args=(-runs="$runs" -rss_limit_mb=2048 -timeout=20 -print_final_stats=1 -artifact_prefix="$out/")
  ((max_s > 0)) && args+=(-max_total_time="$max_s")
  ((jobs > 1)) && args+=(-jobs="$jobs" -workers="$jobs")
  echo "# $target: up to $runs executions"
  start=$SECONDS
  if "$out/$target" "${args[@]}" "$corpus" "${seeds[@]}" >"$out/$target.log" 2>&1; then
    verdict="nothing found"
  else
    verdict="FOUND SOMETHING (see $out/$target.log)"
    status=1
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$out/$target.log" | awk '{ s += $1 } END { print s + 0 }')
  echo "$target: $execs executions in $((SECONDS - start)) s: $verdict"
done
exit $status
