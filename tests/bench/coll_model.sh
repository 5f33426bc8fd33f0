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
# size; the median per call is kept). Prints a table a transport and the median and worst |error|
# over the decomposed collectives (Scan and Exscan keep their recorded time and are shown apart).
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
transports=${TRANSPORTS:-shm tcp}
sizes=${SIZES:-8 1024 65536 1048576}
iter=${ITER:-400}
rounds=${ROUNDS:-3}
mpiexec=${MSTEP_MPIEXEC:-mpiexec.mpich}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for round in $(seq 1 "$rounds"); do
  for name in $transports; do
    envs=()
    [ "$name" = tcp ] && envs=(UCX_TLS=tcp,self)
    params="$work/params-$name-$round.json"
    env "${envs[@]}" "$build/bin/mstep" calibrate -q -o "$params" -- "$mpiexec" -n 2 >/dev/null 2>&1 ||
      { echo "coll_model: calibration on $name failed" >&2; exit 1; }
    for size in $sizes; do
      n=$iter
      ((size >= 65536)) && n=$((iter / 4))
      dir="$work/$name-$size-$round"
      env "${envs[@]}" "$build/bin/mstep" record -o "$dir" -- "$mpiexec" -n 2 "$build/bench/collbench" "$n" "$size" >/dev/null 2>&1 ||
        { echo "coll_model: the $name run of $size B failed" >&2; exit 1; }
      "$build/bin/mstep" report "$dir" --params "$params" --format json >"$dir.json"
      # The baseline in the same run: the same parameters without the calibrated collectives.
      python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); p.pop("collectives", None); json.dump(p, open(sys.argv[2], "w"))' \
        "$params" "$work/plain.json"
      "$build/bin/mstep" report "$dir" --params "$work/plain.json" --format json >"$dir.plain"
      rm -rf "$dir"
    done
  done
done

python3 - "$work" "$rounds" "$sizes" <<'PY'
import json, statistics, sys, glob, os
work, rounds, sizes = sys.argv[1], int(sys.argv[2]), [int(s) for s in sys.argv[3].split()]
ops = ["Barrier", "Bcast", "Reduce", "Allreduce", "Gather", "Gatherv", "Scatter", "Scatterv", "Allgather",
       "Allgatherv", "Alltoall", "Alltoallv", "Reduce_scatter_block", "Reduce_scatter", "Scan", "Exscan"]
for transport in ("shm", "tcp"):
    runs = sorted(glob.glob(f"{work}/{transport}-*.json"))
    if not runs:
        continue
    per = {}  # (op, size) -> [(measured us, predicted us)]
    for path in runs:
        size = int(os.path.basename(path).split("-")[1])
        fn = json.load(open(path))["mpi_time"]
        for op in ops:
            f = fn.get("MPI_" + op)
            if not f or f["loggps_s"] is None:
                continue
            per.setdefault((op, size), []).append((f["time_s"] / f["calls"] * 1e6, f["loggps_s"] / f["calls"] * 1e6))
    print(f"\n{transport}: us per call, measured / LogGPS (error %), median of {rounds} runs")
    print("| collective | " + " | ".join(f"{s} B" for s in sizes) + " |")
    print("| --- |" + " --- |" * len(sizes))
    errors = []
    for op in ops:
        cells = []
        for s in sizes:
            v = per.get((op, s))
            if not v:
                cells.append("-")
                continue
            meas = statistics.median(x for x, _ in v)
            pred = statistics.median(y for _, y in v)
            err = (pred - meas) / meas * 100 if meas > 0 else float("nan")
            if op not in ("Scan", "Exscan"):
                errors.append(abs(err))
            cells.append(f"{meas:.2f} / {pred:.2f} ({err:+.0f}%)")
        print(f"| {op} | " + " | ".join(cells) + " |")
    if errors:
        print(f"{transport}: decomposed collectives: median |error| {statistics.median(errors):.1f}%, "
              f"worst {max(errors):.1f}%, within 10%: {sum(e <= 10 for e in errors)} of {len(errors)}")
    # The same runs reported without the calibrated residuals (messages only).
    plain = {}
    for path in runs:
        size = int(os.path.basename(path).split("-")[1])
        fn = json.load(open(path[:-5] + ".plain"))["mpi_time"]
        for op in ops[:-2]:
            f = fn.get("MPI_" + op)
            if f and f["loggps_s"] is not None:
                plain.setdefault((op, size), []).append((f["time_s"] / f["calls"], f["loggps_s"] / f["calls"]))
    errs = [abs(statistics.median(y for _, y in v) - statistics.median(x for x, _ in v)) / statistics.median(x for x, _ in v) * 100
            for v in plain.values()]
    if errs:
        print(f"{transport}: without the calibrated residuals (messages only): median |error| {statistics.median(errs):.1f}%, "
              f"worst {max(errs):.1f}%, within 10%: {sum(e <= 10 for e in errs)} of {len(errs)}")
PY
