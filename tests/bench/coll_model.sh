#!/usr/bin/env bash
# Issue 13, collectives as MPICH runs them, measured: every wrapped blocking collective at 2 ranks
# (tests/bench/collbench.c: ITER calls back to back each, one run per message size), recorded
# by mstep and reported with PARAMS; per collective and size, the measured time per call (both
# ranks' mean) beside the LogGPS replay's charge for the same calls (`mstep report`'s per-function
# table), and the error. With PARAMS_TCP, the same over UCX's TCP transport (UCX_TLS=tcp,self),
# reported with those parameters.
#   tests/bench/coll_model.sh [BUILD_DIR] [PARAMS] [PARAMS_TCP]      (about a minute a transport)
# Environment: SIZES ("8 1024 65536 1048576"), ITER (400; a quarter of it from 64 KiB), ROUNDS (3:
# each size recorded that often, the median per call kept). Prints a table a transport and the
# median and worst |error| over the decomposed collectives (Scan and Exscan keep their recorded
# time and are shown apart).
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
params=$(realpath "${2:-$HOME/.config/mstep/params.json}")
params_tcp=${3:-}
[ -r "$params" ] || { echo "coll_model: no parameter file $params (run mstep calibrate)" >&2; exit 2; }
[ -z "$params_tcp" ] || params_tcp=$(realpath "$params_tcp")
sizes=${SIZES:-8 1024 65536 1048576}
iter=${ITER:-400}
rounds=${ROUNDS:-3}
mpiexec=${MSTEP_MPIEXEC:-mpiexec.mpich}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

run_transport() {  # name params env...
  local name=$1 p=$2
  shift 2
  for size in $sizes; do
    local n=$iter
    ((size >= 65536)) && n=$((iter / 4))
    for round in $(seq 1 "$rounds"); do
      local dir="$work/$name-$size-$round"
      env "$@" "$build/bin/mstep" record -o "$dir" -- "$mpiexec" -n 2 "$build/bench/collbench" "$n" "$size" >/dev/null 2>&1 ||
        { echo "coll_model: the $name run of $size B failed" >&2; exit 1; }
      "$build/bin/mstep" report "$dir" --params "$p" --format json >"$dir.json"
      rm -rf "$dir"
    done
  done
}

run_transport shm "$params"
[ -z "$params_tcp" ] || run_transport tcp "$params_tcp" UCX_TLS=tcp,self

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
PY
