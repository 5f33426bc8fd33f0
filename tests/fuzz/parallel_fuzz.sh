#!/usr/bin/env bash
# The model fuzzer (tests/fuzz/long_fuzz.sh builds build/fuzz-long/fuzz_model) on every core of a
# bigger machine: one independent libFuzzer process a core, each with its own new-input folder and
# the shared corpus read, for SECONDS each; the executions summed, and any crash, leak or timeout
# input kept under OUT_DIR.
#   tests/fuzz/parallel_fuzz.sh FUZZ_BINARY CORPUS_DIR OUT_DIR [SECONDS] [JOBS]
set -uo pipefail
bin=${1:?usage: parallel_fuzz.sh FUZZ_BINARY CORPUS_DIR OUT_DIR [SECONDS] [JOBS]}
corpus=${2:?usage}
out=${3:?usage}
seconds=${4:-240}
jobs=${5:-$(nproc)}
mkdir -p "$out"
# No allocation stacks kept by ASan: a quarter more executions a second here (an artifact found is
# replayed with the default options, `FUZZ_BINARY ARTIFACT`, to see where its memory came from).
export ASAN_OPTIONS=${ASAN_OPTIONS:-malloc_context_size=0}
out=$(cd "$out" && pwd)
work=$(mktemp -d)
for j in $(seq 1 "$jobs"); do
  mkdir -p "$work/new-$j"
  # SIGINT past the time (the corpus is read first, which max_total_time may not bound): libFuzzer
  # then prints its final statistics and exits.
  timeout -s INT $((seconds + 30)) "$bin" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=20 -print_final_stats=1 -seed="$j" \
    -artifact_prefix="$out/job$j-" "$work/new-$j" "$corpus" >"$work/log-$j" 2>&1 &
done
wait
# What a job found is an artifact (crash-, leak-, timeout-, oom-, slow-unit-) under OUT_DIR.
failed=$(find "$out" -maxdepth 1 -name 'job*-*-*' -type f | wc -l)
execs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$work"/log-* | awk '{ s += $1 } END { print s + 0 }')
new=$(find "$work"/new-* -type f | wc -l)
echo "parallel_fuzz: $jobs jobs x $seconds s: $execs executions, $new new corpus inputs, $failed inputs found (artifacts)"
for j in $(seq 1 "$jobs"); do grep -q "ERROR\|==ERROR\|deadly signal\|Timeout\|timeout" "$work/log-$j" && tail -40 "$work/log-$j" >"$out/log-job$j"; done
tar -C "$work" -czf "$out/new-corpus.tar.gz" $(cd "$work" && ls -d new-*) 2>/dev/null
rm -rf "$work"
exit $((failed > 0))
