#!/usr/bin/env python3
"""The tables of tests/bench/coll_model.sh: per collective and message size, the measured time per
call (all ranks' mean) against the LogGPS replay's charge, from the reports WORK/T@R-SIZE-ROUND.json
(with the calibrated collective times) and .plain (without them).
  coll_table.py WORK ROUNDS "SIZES" "RANKS"
"""
import json, statistics, sys, glob, os
work, rounds, sizes = sys.argv[1], int(sys.argv[2]), [int(s) for s in sys.argv[3].split()]
rank_counts = sys.argv[4].split()
ops = ["Barrier", "Bcast", "Reduce", "Allreduce", "Gather", "Gatherv", "Scatter", "Scatterv", "Allgather",
       "Allgatherv", "Alltoall", "Alltoallv", "Reduce_scatter_block", "Reduce_scatter", "Scan", "Exscan"]
for transport in [f"{t}@{r}" for t in ("shm", "tcp") for r in rank_counts]:
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
    print(f"\n{transport.replace('@', ' at ')} ranks: us per call, measured / LogGPS (error %), median of {rounds} runs")
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
            errors.append(abs(err))
            cells.append(f"{meas:.2f} / {pred:.2f} ({err:+.0f}%)")
        print(f"| {op} | " + " | ".join(cells) + " |")
    if errors:
        print(f"{transport}: every collective: median |error| {statistics.median(errors):.1f}%, "
              f"worst {max(errors):.1f}%, within 10%: {sum(e <= 10 for e in errors)} of {len(errors)}")
    # The same runs reported without the calibrated residuals (messages only).
    plain = {}
    for path in runs:
        size = int(os.path.basename(path).split("-")[1])
        fn = json.load(open(path[:-5] + ".plain"))["mpi_time"]
        for op in ops:
            f = fn.get("MPI_" + op)
            if f and f["loggps_s"] is not None:
                plain.setdefault((op, size), []).append((f["time_s"] / f["calls"], f["loggps_s"] / f["calls"]))
    errs = [abs(statistics.median(y for _, y in v) - statistics.median(x for x, _ in v)) / statistics.median(x for x, _ in v) * 100
            for v in plain.values()]
    if errs:
        print(f"{transport}: without the calibrated residuals (messages only): median |error| {statistics.median(errs):.1f}%, "
              f"worst {max(errs):.1f}%, within 10%: {sum(e <= 10 for e in errs)} of {len(errs)}")
