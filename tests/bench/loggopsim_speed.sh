#!/usr/bin/env bash
# Issue 12's side-by-side: the same schedules replayed by mstep and by LogGOPSim, one core each.
# Per case (`mstep synth` trace of RANKS ranks, EVENTS records, PATTERN), exported once with
# `mstep export --goal --time-unit ps`:
#   - LogGOPSim: `txt2bin` (its parser, timed apart) then `LogGOPSim -b` on the binary schedule;
#   - mstep, replay alone: `replay_bench --dir TRACE` (the LogGPS replay reading the rank files);
#   - mstep, end to end: `mstep report TRACE --stream yes --jobs 1` with the same L, o, g, G, S
#     (reading, matching, waits, M-steps, MPM, BSPWB and the LogGP, LogGPS and linear replays).
# Wall seconds and peak RSS of each (/usr/bin/time), and records per second over the trace's
# records (the GOAL schedule holds the same operations; its line count is printed too). Fetches
# nothing: give a LogGOPSim source tree (github spcl/LogGOPSim) in LOGGOPSIM_SRC; needs g++,
# gengetopt, re2c and libgraphviz-dev, as tests/bench/loggopsim_check.sh.
#
# Usage: LOGGOPSIM_SRC=DIR bash tests/bench/loggopsim_speed.sh BUILD_DIR
# Environment: CASES ("64:ring 64:random 1024:ring 1024:random 16384:ring 16384:random"; a case
# RANKS:PATTERN or RANKS:PATTERN:EVENTS), EVENTS (2000000), CPU (1: the core everything is pinned
# to), KEEP (a folder for the traces), PACK (N: traces written N ranks a pack file, `mstep synth
# --pack N`, as runs of hundreds of thousands of ranks are; default a file per rank). An alltoall record is n - 1 messages in GOAL (MPICH's
# algorithm decomposed): 64 ranks and 2 M records make a 13 GB text schedule, so give it fewer,
# e.g. CASES="64:alltoall:100000".
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/loggopsim_build.sh"
build=$(cd "${1:-build}" && pwd)
mstep="$build/bin/mstep"
bench="$build/bench/replay_bench"
if [[ -z ${LOGGOPSIM_SRC:-} ]]; then
  echo "loggopsim_speed: skipped (set LOGGOPSIM_SRC to a LogGOPSim source tree to run it)"
  exit 0
fi
for tool in g++ gengetopt re2c python3 /usr/bin/time taskset; do
  command -v "$tool" >/dev/null || { echo "loggopsim_speed: needs $tool" >&2; exit 1; }
done
[[ -x $mstep && -x $bench ]] || { echo "loggopsim_speed: build mstep and replay_bench first ($build)" >&2; exit 1; }
src="$LOGGOPSIM_SRC/src/LogGOPSim"
cases=${CASES:-64:ring 64:random 1024:ring 1024:random 16384:ring 16384:random}
events=${EVENTS:-2000000}
cpu=${CPU:-1}
work=${KEEP:-$(mktemp -d)}
mkdir -p "$work"
[[ -n ${KEEP:-} ]] || trap 'rm -rf "$work"' EXIT

build_loggopsim loggopsim_speed "$src" "$work"

# The same parameters for both (picoseconds for LogGOPSim, seconds for mstep), eager throughout.
L=200000 o=200000 g=190000 G=60 S=1000000000
python3 - "$work/params.json" <<PY
import json, sys
json.dump({"L": $L * 1e-12, "o": $o * 1e-12, "Os": 0, "Or": 0, "g": $g * 1e-12, "Gs": $G * 1e-12,
           "Gl": $G * 1e-12, "s": 0, "S": $S}, open(sys.argv[1], "w"))
PY

# timed OUT CMD...: runs CMD pinned, stdout to OUT; prints "wall_s peak_mib".
timed() {
  local out=$1
  shift
  /usr/bin/time -f "%e %M" -o "$work/time.txt" taskset -c "$cpu" "$@" >"$out" 2>"$work/err.txt" ||
    { echo "loggopsim_speed: '$*' failed:" >&2; tail -5 "$work/err.txt" >&2; exit 1; }
  awk '{ printf "%s %.0f\n", $1, $2 / 1024 }' "$work/time.txt"
}
rate() { python3 -c "import sys; r, s = float(sys.argv[1]), float(sys.argv[2]); print('%.2f' % (r / s / 1e6 if s > 0 else float('inf')))" "$1" "$2"; }

echo "# $(date -u +%F), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); one core each (taskset -c $cpu); L=$L o=$o g=$g G=$G S=$S ps"
printf "%-16s %9s %9s | %18s %18s | %18s | %18s\n" case records goal_ops "LogGOPSim s,MiB,M/s" "txt2bin s,MiB" \
  "mstep replay s,MiB,M/s" "mstep report s,MiB,M/s"
for c in $cases; do
  IFS=: read -r ranks pattern case_events <<<"$c"
  case_events=${case_events:-$events}
  t="$work/t-$ranks-$pattern"
  "$mstep" synth -f -o "$t" --ranks "$ranks" --events "$case_events" --pattern "$pattern" --seed 1 \
    ${PACK:+--pack "$PACK"} >/dev/null
  "$mstep" export "$t" --goal "$t.goal" --time-unit ps >/dev/null
  records=$("$mstep" stats "$t" --format json | python3 -c "import json,sys; print(json.load(sys.stdin)['events'])")
  goal_ops=$(grep -cE '^ *l[0-9]+: (send|recv|calc)' "$t.goal" || true)
  read -r tb_s tb_mib < <(timed "$work/txt2bin.out" "$work/txt2bin" -i "$t.goal" -o "$t.bin")
  rm -f "$t.goal"
  read -r sim_s sim_mib < <(timed "$work/sim.out" "$work/LogGOPSim" -f "$t.bin" -L $L -o $o -g $g -G $G -S $S -b)
  rm -f "$t.bin"
  read -r rb_s rb_mib < <(timed "$work/rb.out" "$bench" --dir "$t")
  rb_replay_s=$(sed -n 's/.* seconds=\([0-9.e+-]*\).*/\1/p' "$work/rb.out")
  read -r rep_s rep_mib < <(timed "$work/rep.out" "$mstep" report "$t" --stream yes --jobs 1 --params "$work/params.json" --format json)
  printf "%-16s %9s %9s | %6s %5s %5s | %6s %5s | %6s %5s %5s | %6s %5s %5s\n" "$ranks-$pattern" "$records" "$goal_ops" \
    "$sim_s" "$sim_mib" "$(rate "$records" "$sim_s")" "$tb_s" "$tb_mib" \
    "$rb_replay_s" "$rb_mib" "$(rate "$records" "$rb_replay_s")" "$rep_s" "$rep_mib" "$(rate "$records" "$rep_s")"
  [[ -n ${KEEP:-} ]] || rm -rf "$t"
done
