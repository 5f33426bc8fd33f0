#!/usr/bin/env bash
# Issue 13, collectives as MPICH runs them, measured: every wrapped blocking collective at 2 ranks
# (tests/bench/collbench.c: back-to-back calls, one run per message size), recorded by mstep and
# reported with parameters calibrated just before on the same transport (this machine's latency
# moves from one period to the next: a calibration minutes old can be off by a factor of 3); per
# collective and size, the measured time per call (both ranks' mean) beside the LogGPS replay's
# charge for the same calls (`mstep report`'s per-function table), and the error.
#   tests/bench/coll_model.sh [BUILD_DIR]      (about 30 s a transport and round)
# Environment: TRANSPORTS ("shm tcp": tcp is UCX_TLS=tcp,self), SIZES ("8 1024 65536 1048576"),
# ITER (400; a quarter of it from 64 KiB), ROUNDS (3: each round calibrates, then records every
# size; the median per call is kept), RANKS ("2": the rank counts of the collbench runs; the
# calibration is always of a pair, so more ranks check how the replay carries the pair's collective
# times to larger communicators; more ranks than cores do not time, MPICH busy-polls), KEEP (a
# folder: the traces and parameter files are moved there instead of removed), AGAIN (a KEEP folder
# of an earlier run: its traces are reported again with this build, and nothing is recorded; give
# the same SIZES, RANKS and ROUNDS), SUBSTITUTES (1: the collectives are recorded as libmstep's
# substitutes, MPICH's choice over point-to-point, as `mstep sensitivity` runs them, and charged
# their own calibrated cost, `substitute_s`), GAP (microseconds of computation before every call,
# 0: back to back; collbench's third argument). Prints a table a transport and the median and worst |error|
# over every collective (MPI_Scan and MPI_Exscan too since stop 48).
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
transports=${TRANSPORTS:-shm tcp}
sizes=${SIZES:-8 1024 65536 1048576}
iter=${ITER:-400}
gap=${GAP:-0}
rounds=${ROUNDS:-3}
rank_counts=${RANKS:-2}
mpiexec=${MSTEP_MPIEXEC:-mpiexec.mpich}
substitutes=()
[[ ${SUBSTITUTES:-0} == 1 ]] &&
  substitutes=(MSTEP_BARRIER=dissemination MSTEP_BCAST=binomial MSTEP_ALLREDUCE=pt2pt MSTEP_ALLTOALL=pt2pt
    MSTEP_ALLGATHER=pt2pt MSTEP_REDUCE=pt2pt MSTEP_GATHER=pt2pt MSTEP_SCATTER=pt2pt MSTEP_REDUCE_SCATTER=pt2pt
    MSTEP_SCAN=pt2pt)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One kept or fresh recording DIR reported with PARAMS, with and without the calibrated collectives.
report() {
  local dir=$1 params=$2
  "$build/bin/mstep" report "$dir" --params "$params" --format json >"$work/$(basename "$dir").json"
  # The baseline in the same run: the same parameters without the calibrated collectives (written
  # once a parameter file).
  local plain="$work/$(basename "${params%.json}").plain.json"
  [[ -f $plain ]] ||
    python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); p.pop("collectives", None); json.dump(p, open(sys.argv[2], "w"))' \
      "$params" "$plain"
  "$build/bin/mstep" report "$dir" --params "$plain" --format json >"$work/$(basename "$dir").plain"
}

if [[ -n ${AGAIN:-} ]]; then
  # Report a KEEP folder of an earlier run again, with this build; nothing is recorded.
  again=$(cd "$AGAIN" && pwd)
  for dir in "$again"/*@*-*-*; do
    [[ -d $dir ]] || continue
    b=$(basename "$dir")
    report "$dir" "$again/params-${b%%@*}-${b##*-}.json"
  done
else
for round in $(seq 1 "$rounds"); do
  for name in $transports; do
    envs=()
    [ "$name" = tcp ] && envs=(UCX_TLS=tcp,self)
    params="$work/params-$name-$round.json"
    env "${envs[@]}" "$build/bin/mstep" calibrate -q -o "$params" -- "$mpiexec" -n 2 >/dev/null 2>&1 ||
      { echo "coll_model: calibration on $name failed" >&2; exit 1; }
    for ranks in $rank_counts; do
      for size in $sizes; do
        n=$iter
        ((size >= 65536)) && n=$((iter / 4))
        dir="$work/$name@$ranks-$size-$round"
        env "${envs[@]}" "${substitutes[@]}" "$build/bin/mstep" record -o "$dir" -- "$mpiexec" -n "$ranks" "$build/bench/collbench" "$n" "$size" "$gap" >/dev/null 2>&1 ||
          { echo "coll_model: the $name run of $size B at $ranks ranks failed" >&2; exit 1; }
        report "$dir" "$params"
        if [[ -n ${KEEP:-} ]]; then mkdir -p "$KEEP" && mv "$dir" "$KEEP/" && cp "$params" "$KEEP/"; else rm -rf "$dir"; fi
      done
    done
  done
done
fi

python3 "$(dirname "$0")/coll_table.py" "$work" "$rounds" "$sizes" "$rank_counts"
