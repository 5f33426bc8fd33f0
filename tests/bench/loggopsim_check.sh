#!/usr/bin/env bash
# mstep's LogGP/LogGPS replay against LogGOPSim on the same schedules: synthetic traces written by
# `mstep synth`, exported with `mstep export --goal --time-unit ps`, simulated by LogGOPSim with the
# same L, o, g, G, S, and predicted by `mstep report` with those parameters and no machine terms.
# Prints both end times and their difference per case. Fetches nothing: give it a LogGOPSim source
# tree (github spcl/LogGOPSim) in LOGGOPSIM_SRC; it needs g++, gengetopt, re2c and libgraphviz-dev.
#
# Usage: LOGGOPSIM_SRC=DIR bash tests/bench/loggopsim_check.sh BUILD_DIR
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/loggopsim_build.sh"
build=${1:-build}
mstep="$build/bin/mstep"
if [[ -z ${LOGGOPSIM_SRC:-} ]]; then
  echo "loggopsim_check: skipped (set LOGGOPSIM_SRC to a LogGOPSim source tree to run it)"
  exit 0
fi
for tool in g++ gengetopt re2c python3; do
  command -v "$tool" >/dev/null || { echo "loggopsim_check: needs $tool" >&2; exit 1; }
done
src="$LOGGOPSIM_SRC/src/LogGOPSim"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

build_loggopsim loggopsim_check "$src" "$work"

# Parameters in picoseconds for LogGOPSim (its parameters are integers), seconds for mstep.
L=200000 o=200000 g=190000
echo "# LogGOPSim -L $L -o $o -g $g (ps) against mstep LogGP/LogGPS, Os = Or = 0, no machine terms"
printf "%-28s %8s %14s %14s %9s\n" case G_ps_per_B loggopsim_ms mstep_ms diff_pct
run_case() {  # name ranks events pattern G S
  local name=$1 ranks=$2 events=$3 pattern=$4 G=$5 S=$6
  "$mstep" synth -f -o "$work/$name" --ranks "$ranks" --events "$events" --pattern "$pattern" --seed 1 >/dev/null
  "$mstep" export "$work/$name" --goal "$work/$name.goal" --time-unit ps >/dev/null
  "$work/txt2bin" -i "$work/$name.goal" -o "$work/$name.bin" >/dev/null 2>&1
  local sim
  sim=$("$work/LogGOPSim" -f "$work/$name.bin" -L $L -o $o -g $g -G "$G" -S "$S" -b 2>&1 |
        sed -n 's/^Maximum finishing time at host [0-9]*: \([0-9]*\).*/\1/p')
  python3 - "$work/$name" "$G" "$S" >"$work/$name.params.json" <<PY
import json, sys
G, S = float(sys.argv[2]) * 1e-12, int(sys.argv[3])
print(json.dumps({"L": $L * 1e-12, "o": $o * 1e-12, "Os": 0, "Or": 0, "g": $g * 1e-12,
                  "Gs": G, "Gl": G, "s": 0, "S": S}))
PY
  local ours
  ours=$("$mstep" report "$work/$name" --params "$work/$name.params.json" --format json |
         python3 -c "import json,sys; print(json.load(sys.stdin)['models']['LogGPS']['predicted_s'])")
  python3 -c "
sim, ours = $sim * 1e-12, $ours
print('%-28s %8s %14.6f %14.6f %9.3f' % ('$name', '$G', sim * 1e3, ours * 1e3, 100 * (ours - sim) / sim))"
}
for G in 0 60; do
  run_case "pingpong-2-G$G" 2 2000 pingpong "$G" 1000000000
  run_case "random-2-G$G" 2 2000 random "$G" 1000000000
  run_case "ring-8-G$G" 8 20000 ring "$G" 1000000000
  run_case "random-16-G$G" 16 20000 random "$G" 1000000000
done
run_case "pingpong-2-rendezvous" 2 2000 pingpong 60 8256
