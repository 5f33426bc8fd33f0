#!/usr/bin/env bash
# The delay apparatus calibrated as in Martin's Figure 2.4: `mstep calibrate` at 2 ranks under each
# added parameter (L, o, g, G) at several values measures the parameter back. Prints, per
# parameter, the requested and the measured increase over the same parameter at delay 0 (runs of
# one parameter in a row, its delay-0 run first), and the least-squares slope through the origin
# of measured against requested: 1 means the apparatus adds what it is asked to. A calibration
# without the apparatus comes first: it is the native network the added L adds to
# (MSTEP_DELAY_NATIVE; NATIVE=0 leaves it out, and the added L then replaces the native latency).
#   tests/bench/delay_calibration.sh [BUILD_DIR]      (about 3 minutes)
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpiexec=${MSTEP_MPIEXEC:-mpiexec.mpich}

native=""
if [[ ${NATIVE:-1} != 0 ]]; then
  "$build/bin/mstep" calibrate -f -o "$work/native.json" >/dev/null 2>&1
  native="MSTEP_DELAY_NATIVE=$work/native.json"
fi

measure() {  # VAR VALUE FIELD -> the calibrated FIELD in seconds (per byte for G)
  local out="$work/p.json"
  "$build/bin/mstep" calibrate -f -o "$out" -- env "$1=$2" ${native:+"$native"} MSTEP_DIR="$work/trace" \
    LD_PRELOAD="$build/lib/libmstep.so" "$mpiexec" -n 2 >/dev/null 2>&1
  rm -rf "$work/trace"
  python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$out" "$3"
}

sweep() {  # VAR FIELD UNIT SCALE VALUES...   (VALUES as the apparatus reads them; SCALE: to UNIT)
  local var=$1 field=$2 unit=$3 scale=$4; shift 4
  local base
  base=$(measure "$var" 0 "$field")
  printf '%-22s %-6s %14s %14s\n' "$var" "field" "requested $unit" "measured $unit"
  local pairs=""
  for v in "$@"; do
    local m
    m=$(measure "$var" "$v" "$field")
    local req
    req=$(python3 -c "
import re,sys
v=sys.argv[1]; n=float(re.match(r'[0-9.]+',v).group()); u=v[len(re.match(r'[0-9.]+',v).group()):]
f={'us':1e-6,'ns':1e-9,'ms':1e-3,'s':1,'ns/B':1e-9,'ps/B':1e-12,'us/B':1e-6}[u]
print(n*f)" "$v")
    python3 -c "import sys; r,m,b,s=map(float,sys.argv[1:5]); print(f'{\"\":22s} {sys.argv[5]:6s} {r*s:14.3f} {(m-b)*s:14.3f}')" "$req" "$m" "$base" "$scale" "$field"
    pairs+="$req,$m "
  done
  python3 -c "
import sys
b=float(sys.argv[1]); pts=[tuple(map(float,p.split(','))) for p in sys.argv[2].split()]
slope=sum(r*(m-b) for r,m in pts)/sum(r*r for r,m in pts)
print(f'{\"\":22s} slope {slope:.3f} (delay-0 value {b*float(sys.argv[3]):.3f} {sys.argv[4]})')" "$base" "$pairs" "$scale" "$unit"
}

echo "delay_calibration: $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg), native network: ${native:-none}"
sweep MSTEP_DELAY_L L us 1e6 5us 10us 20us
sweep MSTEP_DELAY_O o us 1e6 2us 5us 10us
sweep MSTEP_DELAY_GAP g us 1e6 5us 10us 20us
sweep MSTEP_DELAY_PER_BYTE Gl ns/B 1e9 0.5ns/B 1ns/B 2ns/B
