#!/bin/bash
# Added latency of two builds of libmstep.so side by side: each round runs the 8-byte ping-pong at
# 2 ranks natively, under OLD and under NEW, in that order, and prints the three medians; at the end
# the medians over the rounds of native, OLD - native, NEW - native and NEW - OLD (per round). This
# VM's native latency moves by a factor of four between periods: only the paired differences of
# one run compare.
#   tests/bench/latency_pair.sh BUILD OLD_LIB NEW_LIB [ROUNDS]   (BUILD: for bench/pingpong)
# PP=BUILD/bench/pingpong_f (or pingpong_f08): the same ping-pong from Fortran (`use mpi`, mpi_f08).
# OLD_ENV and NEW_ENV (space-separated VAR=VALUE) set for one side only, e.g. the same library twice:
#   OLD_ENV=MSTEP_COMPRESS=now NEW_ENV=MSTEP_COMPRESS=later tests/bench/latency_pair.sh build L L 12
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 BUILD_DIR OLD_LIBMSTEP NEW_LIBMSTEP [ROUNDS]" >&2
  exit 2
fi
build=$1 old=$2 new=$3 rounds=${4:-10}
pp=${PP:-$build/bench/pingpong}
for f in "$pp" "$old" "$new"; do
  [ -e "$f" ] || { echo "$0: $f: no such file" >&2; exit 2; }
done
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
median_ns() { grep -o "median_ns=[0-9.]*" | cut -d= -f2; }
run() {  # LIB [VAR=VALUE...] (LIB empty: native)
  rm -rf "$dir/t"
  local lib=$1
  shift
  if [ -z "$lib" ]; then mpiexec.mpich -n 2 "$pp" 8 40000 10 2000 | median_ns
  else env "$@" LD_PRELOAD="$lib" MSTEP_DIR="$dir/t" mpiexec.mpich -n 2 "$pp" 8 40000 10 2000 | median_ns; fi
}
read -r -a old_env <<<"${OLD_ENV:-}"
read -r -a new_env <<<"${NEW_ENV:-}"
for r in $(seq "$rounds"); do
  echo "$(run "") $(run "$old" "${old_env[@]}") $(run "$new" "${new_env[@]}")" | tee -a "$dir/rounds"
done
python3 - "$dir/rounds" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1])]
med = lambda xs: statistics.median(list(xs))
print(f"native {med(r[0] for r in rows):.1f} ns; added: old +{med(r[1]-r[0] for r in rows):.1f} ns, "
      f"new +{med(r[2]-r[0] for r in rows):.1f} ns; new - old {med(r[2]-r[1] for r in rows):+.1f} ns "
      f"(medians of {len(rows)} rounds)")
PY
