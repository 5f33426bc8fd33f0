#!/usr/bin/env bash
# Issue 13's sensitivity floor, Martin's experiment over the validation suite: every 2-rank case of
# share/validate/suite.json under `mstep sensitivity` with a sweep of each of L, o, g and G (the
# delay apparatus), and each point's measured slowdown against LogGPS's predicted one from the
# baseline trace. Prints a line per point and a summary: points within 10%, the median and the
# largest |error|.
#   tests/bench/sensitivity_suite.sh [BUILD_DIR]
# Settings (environment): PARAMS (a parameter file; default: a quick calibration made first),
# REPEAT (runs of every point, alternating; default 3), ONLY (case names, comma-separated),
# KEEP (a folder for the runs; default a temporary one), SWEEPS (the parameters swept; default
# "L o g G"), the sweeps SWEEP_L, SWEEP_O, SWEEP_G, SWEEP_BIG_G (as `--sweep` takes them after
# the '='), and MIN_RUN_S (default 0.4; 0: off): a case with a `length_arg` in the suite (an
# iteration count) whose baseline, timed once first, runs shorter has that argument multiplied so
# that it runs about this long. The suite's sizes last 10 to 500 ms here, where one slow period
# of this machine moves a run by more than the 10% of the floor (cg 2k: 13 ms).
# At 2 ranks on 2 cores; about 15 minutes for the whole suite here.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
mstep="$build/bin/mstep"
examples="$build/examples"
suite="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/share/validate/suite.json"
mpiexec=${MSTEP_MPIEXEC:-mpiexec.mpich}
repeat=${REPEAT:-3}
work=${KEEP:-$(mktemp -d)}
mkdir -p "$work"
[[ -n ${KEEP:-} ]] || trap 'rm -rf "$work"' EXIT
[[ -x $mstep ]] || { echo "sensitivity_suite: build mstep first ($build)" >&2; exit 1; }

params=${PARAMS:-}
if [[ -z $params ]]; then
  params="$work/params.json"
  "$mstep" calibrate --quick -f -o "$params" >"$work/calibrate.log" 2>&1 ||
    { echo "sensitivity_suite: calibration failed (log $work/calibrate.log)" >&2; exit 1; }
fi

# "name label arg..." for every 2-rank size of the suite (ONLY: those cases).
mapfile -t runs < <(python3 - "$suite" "${ONLY:-}" <<'PY'
import json, sys
suite, only = json.load(open(sys.argv[1])), [c for c in sys.argv[2].split(",") if c]
for case in suite["cases"]:
    if only and case["name"] not in only:
        continue
    for size in case["sizes"]:
        if 2 in size["ranks"]:
            print(" ".join([case["name"], case["program"], size["label"], str(case.get("length_arg", -1))] + size["args"]))
PY
)

all_sweeps=("L=${SWEEP_L:-0,5us,20us}" "o=${SWEEP_O:-0,2us,5us}" "g=${SWEEP_G:-0,5us,20us}" "G=${SWEEP_BIG_G:-0,0.5ns/B,2ns/B}")
sweeps=()
for s in "${all_sweeps[@]}"; do
  [[ " ${SWEEPS:-L o g G} " == *" ${s%%=*} "* ]] && sweeps+=("$s")
done
echo "# $(date -u +%F), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); parameters $params; repeat $repeat"
printf '%-14s %-9s %-4s %-9s %10s %10s %9s\n' case size par point measured LogGPS "error %"
results="$work/results.txt"
: >"$results"
min_run_s=${MIN_RUN_S:-0.4}
for run in "${runs[@]}"; do
  read -r name program label length_arg args <<<"$run"
  if [[ $length_arg -ge 0 ]] && python3 -c "import sys; sys.exit(not float(sys.argv[1]) > 0)" "$min_run_s"; then
    # shellcheck disable=SC2086  # the suite's arguments, one word each
    if "$mstep" record -f -o "$work/probe" -- "$mpiexec" -n 2 "$examples/$program" $args >"$work/probe.out" 2>&1 </dev/null &&
      probe_s=$("$mstep" report "$work/probe" --params "$params" --format json 2>/dev/null </dev/null |
        python3 -c "import json, sys; print(json.load(sys.stdin)['actual_s'])"); then
      args=$(python3 - "$min_run_s" "$probe_s" "$length_arg" $args <<'PY'
import math, sys
want, took, index, args = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
factor = max(1, math.ceil(want / took)) if took > 0 else 1
args[index] = str(int(args[index]) * factor)
print(" ".join(args))
PY
)
      echo "# $name $label: baseline $probe_s s once, runs with: $args"
    else
      echo "sensitivity_suite: $name $label: the timing run failed (log $work/probe.out); its arguments unscaled" >&2
    fi
  fi
  for sweep in "${sweeps[@]}"; do
    par=${sweep%%=*}
    out="$work/$name-$label-$par"
    # shellcheck disable=SC2086  # the suite's arguments, one word each
    if ! "$mstep" sensitivity -f -o "$out" --params "$params" --repeat "$repeat" --sweep "$sweep" --format json \
      -- "$mpiexec" -n 2 "$examples/$program" $args >"$out.json" 2>"$out.err"; then
      echo "sensitivity_suite: $name $label $par failed: $(tail -1 "$out.err")" >&2
      continue
    fi
    python3 - "$out.json" "$name" "$label" "$par" "$results" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
name, label, par, results = sys.argv[2:6]
with open(results, "a") as f:
    for p in d["points"]:
        if p["added"] == 0:
            continue
        m = p["models"]["LogGPS"]
        print(f"{name:<14} {label:<9} {par:<4} {p['label']:<9} {p['slowdown']:10.3f} {m['slowdown']:10.3f} {m['error_pct']:+9.1f}")
        f.write(f"{m['error_pct']}\n")
PY
  done
done
python3 - "$results" <<'PY'
import statistics, sys
errors = [abs(float(x)) for x in open(sys.argv[1]) if x.strip()]
if not errors:
    sys.exit("sensitivity_suite: no point was measured")
within = sum(e <= 10 for e in errors)
print(f"LogGPS slowdown within 10% of the measured one: {within} of {len(errors)} points; "
      f"median |error| {statistics.median(errors):.1f}%, largest {max(errors):.1f}%")
PY
