#!/usr/bin/env bash
# The timing checks that need more cores than ranks, for a node of 16 cores or more (this project's
# own machine has 2: more ranks than cores busy-poll and do not time):
#   1. the recorder's added latency when a core is free for libmstep's writer thread
#      (run_benchmarks.sh, whose default MSTEP_WRITER=auto then writes off the application's thread),
#      and the 8-byte ping-pong alternating plain / writer thread / MSTEP_WRITER=inline;
#   2. `mstep validate` of share/validate/suite-multicore.json at 2, 4, 8 and 16 ranks (shared memory);
#   3. tests/bench/coll_model.sh at 2, 4, 8 and 16 ranks: how the pair's calibrated collective times
#      carry to larger communicators.
#   tests/bench/multicore.sh BUILD_DIR OUT_DIR [STEPS]
# BUILD_DIR is a build tree or the build/ of tests/bench/bundle.sh's folder (then source its env.sh
# first). STEPS: any of "latency validate coll" (default all). Writes OUT_DIR/{log,bench.txt,
# pingpong.txt,validation.md,validation.json,coll.txt} and the traces with their parameter files
# (validate.tar.gz, coll.tar.gz: to report them again elsewhere); about 5 minutes.
# COLL_ROUNDS: rounds of coll_model.sh (default 1).
set -uo pipefail
build=$(cd "${1:?usage: multicore.sh BUILD_DIR OUT_DIR [STEPS]}" && pwd)
out=${2:?usage: multicore.sh BUILD_DIR OUT_DIR [STEPS]}
steps=${3:-latency validate coll}
src=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out" && out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log() { echo "== $(date +%T) $*" | tee -a "$out/log"; }

log "cores $(nproc), $(uname -r), $(grep -m1 PRETTY_NAME /etc/os-release 2>/dev/null)"
if ldd "$build/bin/mstep" "$build/lib/libmstep.so" | grep -q "not found"; then
  ldd "$build/bin/mstep" "$build/lib/libmstep.so" | grep "not found" >>"$out/log"
  log "missing libraries"; exit 1
fi
if ! timeout 60 mpiexec.mpich -n 2 "$build/examples/ring" 10 8 >>"$out/log" 2>&1; then
  log "mpiexec.mpich -n 2 failed"; exit 1
fi

if [[ $steps == *latency* ]]; then
  log "run_benchmarks.sh"
  timeout 120 bash "$src/tests/bench/run_benchmarks.sh" "$build" >"$out/bench.txt" 2>&1 || log "run_benchmarks.sh failed ($?)"
  log "ping-pong: plain / writer thread / inline, 7 rounds alternating"
  for round in 1 2 3 4 5 6 7; do
    for v in plain thread inline; do
      pp=(mpiexec.mpich -n 2 "$build/bench/pingpong" 8 20000 15 2000)
      [[ $v == plain ]] || pp=(env MSTEP_WRITER="$v" mstep record -o "$work/t" -f -- "${pp[@]}")
      line=$("${pp[@]}" 2>&1 | grep '^pingpong')
      echo "$round $v $line" >>"$out/pingpong.txt"
    done
  done
fi

if [[ $steps == *validate* ]]; then
  log "mstep validate (suite-multicore, shared memory)"
  timeout 320 mstep validate --suite "$src/share/validate/suite-multicore.json" --transport shm --no-s-moved \
    -o "$work/validate" -f >"$out/validate.log" 2>&1 || log "validate exited $?"
  cp "$work/validate/validation.md" "$work/validate/validation.json" "$out/" 2>/dev/null
  tar -C "$work" -czf "$out/validate.tar.gz" validate 2>/dev/null
fi

if [[ $steps == *coll* ]]; then
  log "coll_model.sh at 2 4 8 16 ranks"
  KEEP="$work/coll" RANKS="2 4 8 16" ROUNDS=${COLL_ROUNDS:-1} ITER=200 TRANSPORTS=shm timeout 150 bash "$src/tests/bench/coll_model.sh" "$build" \
    >"$out/coll.txt" 2>&1 || log "coll_model.sh exited $?"
  tar -C "$work" -czf "$out/coll.tar.gz" coll 2>/dev/null
fi
log "done"
