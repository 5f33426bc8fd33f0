#!/usr/bin/env bash
# Issue 15, measured: every barrier and broadcast algorithm of libmstep's substitutes run for real
# on a two-cluster network made by the delay apparatus (MSTEP_DELAY_PAIRS: ranks 0..n/2-1 and
# n/2..n-1, INTER between the clusters, this machine's shared memory within), at 4 and 8 ranks
# on this 2-core machine under the test suite's yielding shim (blocking calls are the nonblocking
# call plus a sched_yield/nanosleep test loop, so more ranks than cores do not spin against each
# other). Per setting, `mstep advise --pairs` gives every algorithm's predicted time and the
# measured span of the one that ran (median over the instances; the median of ROUNDS rounds, the
# settings alternated within each round). Prints, per rank count, message size and collective,
# each algorithm's predicted and measured time per call, and whether the model orders every pair
# of algorithms whose measured times differ by more than 10% as measured.
#   tests/bench/collectives_grid.sh [BUILD_DIR] [PARAMS]     (about 3 minutes)
# Environment: RANKS ("4 8"), SIZES ("64 4096"), INTER (200us), ITER (200), ROUNDS (3).
# MPICH's own collectives are not run here: the apparatus delays only libmstep's messages, so on
# this network MPICH's default algorithms run as libmstep's copies (dissemination, binomial tree).
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
params=$(realpath "${2:-$HOME/.config/mstep/params.json}")
[ -r "$params" ] || { echo "collectives_grid: no parameter file $params (run mstep calibrate)" >&2; exit 2; }
shim="$build/tests/integration/progs/libyield_shim.so"
[ -r "$shim" ] || { echo "collectives_grid: $shim not built" >&2; exit 2; }
ranks_list=${RANKS:-4 8}
sizes=${SIZES:-64 4096}
inter=${INTER:-200us}
iter=${ITER:-200}
rounds=${ROUNDS:-3}
mpiexec=${MSTEP_MPIEXEC:-mpiexec.mpich}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# barrier/bcast pairs: each run measures one of each.
settings="dissemination/binomial central/flat tree:2/esssp tree:4/auto auto/flat"

for n in $ranks_list; do
  half=$((n / 2))
  a=$(seq -s, 0 $((half - 1)))
  b=$(seq -s, "$half" $((n - 1)))
  grid="$work/grid$n.json"
  echo "{\"clusters\": [[$a], [$b]], \"inter\": \"$inter\"}" > "$grid"
  for bytes in $sizes; do
    for round in $(seq 1 "$rounds"); do
      for s in $settings; do
        barrier=${s%%/*} bcast=${s#*/}
        tag="n$n-b$bytes-${barrier//:/}-$bcast-r$round"
        MSTEP_PARAMS="$params" MSTEP_DELAY_PAIRS="$grid" MSTEP_BARRIER="$barrier" MSTEP_BCAST="$bcast" \
          LD_PRELOAD="$shim" "$build/bin/mstep" record -f -o "$work/t" -- \
          "$mpiexec" -n "$n" "$build/examples/collectives" "$iter" "$bytes" 1 0 >"$work/$tag.log" 2>&1 ||
          { echo "collectives_grid: run $tag failed:" >&2; tail -5 "$work/$tag.log" >&2; exit 1; }
        "$build/bin/mstep" advise "$work/t" --params "$params" --pairs "$grid" --format json >"$work/$tag.json"
      done
    done
  done
done

PYTHONPATH="$(dirname "$0")${PYTHONPATH:+:$PYTHONPATH}" python3 - "$work" "$inter" "$iter" "$rounds" <<'EOF'
import glob, json, os, re, statistics, sys
from model_order import ordered_pairs
work, inter, iters, rounds = sys.argv[1:5]
rows = {}  # (n, bytes, call) -> algorithm -> {"pred": [..], "meas": [..]}
for f in sorted(glob.glob(os.path.join(work, "*.json"))):
    m = re.match(r"n(\d+)-b(\d+)-.*-r\d+\.json", os.path.basename(f))
    if not m:
        continue  # the grid files
    n, size = int(m.group(1)), int(m.group(2))
    for s in json.load(open(f))["sites"]:
        if s["comm_size"] != n or s["ran"] is None or not s["span"] or not s["span"]["instances"]:
            continue
        pred = {a["name"]: a["predicted_s"] for a in s["algorithms"]}
        # Broadcasts rotate their root: one site per root, pooled.
        cell = rows.setdefault((n, size, s["call"]), {}).setdefault(s["ran"], {"pred": [], "meas": []})
        cell["pred"].append(pred[s["ran"]])
        cell["meas"].append(s["span"]["median_s"])
print(f"two clusters, {inter} between them; {iters} iterations, {rounds} rounds; times in us per call")
agree_all = pairs_all = 0
for (n, size, call), algs in sorted(rows.items()):
    if call == "MPI_Barrier" and size != int(sorted({k[1] for k in rows})[0]):
        continue  # the barrier does not depend on the broadcast's size
    print(f"\n{call}, {n} ranks" + (f", {size} B" if call == "MPI_Bcast" else ""))
    print(f"  {'algorithm (ran)':34s} {'predicted':>10s} {'measured':>10s}")
    table = []
    for name, c in algs.items():
        p, meas = statistics.median(c["pred"]), statistics.median(c["meas"])
        table.append((meas, p, name))
    for meas, p, name in sorted(table):
        print(f"  {name:34s} {p * 1e6:10.1f} {meas * 1e6:10.1f}")
    agree, pairs = ordered_pairs(table)
    agree_all += agree
    pairs_all += pairs
    print(f"  order: the model agrees on {agree} of {pairs} pairs measured more than 10% apart")
print(f"\nin all: {agree_all} of {pairs_all} pairs ordered as measured")
EOF
