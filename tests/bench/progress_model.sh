#!/usr/bin/env bash
# Issue 13, where the time of a rendezvous goes when a side computes outside MPI: tests/bench/progress.c
# (Isend / Irecv, computation on the sender, the receiver or both, Wait) recorded by mstep on each
# transport and reported with parameters calibrated just before on that transport; per case the
# measured Waits, the actual run time and the LogGPS prediction with its error.
#   tests/bench/progress_model.sh [BUILD_DIR]      (about 40 s)
# Environment: TRANSPORTS ("shm tcp": tcp is UCX_TLS=tcp,self), SIZES ("65536 1048576"), ITER (200),
# BUSY (200: microseconds of computation).
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
transports=${TRANSPORTS:-shm tcp}
sizes=${SIZES:-65536 1048576}
iter=${ITER:-200}
busy=${BUSY:-200}
mpiexec=${MSTEP_MPIEXEC:-mpiexec.mpich}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

printf '%-6s %9s %-9s %12s %12s %10s %10s %8s\n' transport bytes computes "Wait send" "Wait recv" "actual s" "LogGPS s" "err %"
for name in $transports; do
  envs=()
  [ "$name" = tcp ] && envs=(UCX_TLS=tcp,self)
  params="$work/params-$name.json"
  env "${envs[@]}" "$build/bin/mstep" calibrate -q -o "$params" -- "$mpiexec" -n 2 >/dev/null 2>&1 ||
    { echo "progress_model: calibration on $name failed" >&2; exit 1; }
  for size in $sizes; do
    for who in sender receiver both; do
      s=0 r=0
      [ "$who" != receiver ] && s=$busy
      [ "$who" != sender ] && r=$busy
      dir="$work/$name-$size-$who"
      line=$(env "${envs[@]}" "$build/bin/mstep" record -o "$dir" -- "$mpiexec" -n 2 "$build/bench/progress" "$iter" "$size" "$s" "$r" 2>/dev/null | grep '^progress:') ||
        { echo "progress_model: the $name run of $size B ($who) failed" >&2; exit 1; }
      waits=$(sed -E 's/.*Wait ([0-9.]+) us \(sender\), ([0-9.]+) us.*/\1 \2/' <<<"$line")
      "$build/bin/mstep" report "$dir" --params "$params" --format json >"$dir.json"
      python3 - "$dir.json" "$name" "$size" "$who" $waits <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
a = r["actual_s"]
p = r["models"]["LogGPS"]["predicted_s"]
print(f"{sys.argv[2]:<6} {sys.argv[3]:>9} {sys.argv[4]:<9} {float(sys.argv[5]):12.2f} {float(sys.argv[6]):12.2f} {a:10.6f} {p:10.6f} {100 * (a - p) / a:+8.1f}")
PY
    done
  done
done
