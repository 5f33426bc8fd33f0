#!/usr/bin/env bash
# Issue 15: MPICH's own collective tests (test/mpi/coll of its source) with libmstep's substitute
# barriers, broadcasts, allreduces, alltoalls, gathers, scatters, allgathers, reduces,
# reduce-scatters and scans. Builds the
# tests of its testlist that call MPI_Barrier, MPI_Bcast, MPI_Allreduce, MPI_Alltoall(v),
# MPI_Gather(v), MPI_Scatter(v), MPI_Allgather(v), MPI_Reduce, MPI_Reduce_scatter(_block) or
# MPI_Scan / MPI_Exscan
# (on intracommunicators, and two on intercommunicators, where MPICH's own run), and runs each at the
# rank counts (and with the arguments) the testlist gives: natively, under mstep record with MPICH's
# collectives, and under mstep record with each set of substitutes
# (barrier/bcast/allreduce/alltoall/gather/scatter/allgather/reduce/reduce_scatter/scan). A run
# passes when it exits 0 and prints " No Errors" (MPICH's convention). Blocking calls yield (the
# test suite's shim), so 10 ranks on 2 cores finish.
#   MPICH_TEST_SRC=DIR tests/bench/mpich_coll_tests.sh [BUILD_DIR] [PARAMS]     (about 5 minutes)
# TESTS: the tests to run (default: every one named below).
# DIR is test/mpi of MPICH's source; this script fetches nothing. On Debian, with a deb-src line for
# bookworm: `apt-get source --download-only mpich`, then
# `tar -xJf mpich_4.0.2.orig.tar.xz mpich-4.0.2/test/mpi` gives mpich-4.0.2/test/mpi.
# PARAMS (for the auto substitutes) defaults to ~/.config/mstep/params.json.
# Exit 1 when a test that passes natively fails under mstep.
set -euo pipefail
src=${MPICH_TEST_SRC:-}
if [ -z "$src" ]; then
  echo "mpich_coll_tests: skipped: set MPICH_TEST_SRC to MPICH's test/mpi directory (see the header)" >&2
  exit 0
fi
[ -r "$src/coll/testlist.in" ] && [ -r "$src/util/mtest.c" ] ||
  { echo "mpich_coll_tests: $src is not MPICH's test/mpi (no coll/testlist.in or util/mtest.c)" >&2; exit 2; }
build=$(cd "${1:-build}" && pwd)
params=$(realpath "${2:-$HOME/.config/mstep/params.json}")
[ -r "$params" ] || { echo "mpich_coll_tests: no parameter file $params (run mstep calibrate)" >&2; exit 2; }
shim="$build/tests/integration/progs/libyield_shim.so"
[ -r "$shim" ] || { echo "mpich_coll_tests: $shim not built" >&2; exit 2; }
mpiexec=${MSTEP_MPIEXEC:-mpiexec.mpich}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# What configure would have found on this machine (MPICH's tests include mpitestconf.h).
cat >"$work/mpitestconf.h" <<'EOF'
#define HAVE_STDLIB_H 1
#define HAVE_STRING_H 1
#define HAVE_STDARG_H 1
#define HAVE_UNISTD_H 1
#define HAVE_STDINT_H 1
#define HAVE_INTTYPES_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_GETRUSAGE 1
#define HAVE_STRDUP 1
#define HAVE_USLEEP 1
#define HAVE_LONG_LONG 1
#define HAVE_LONG_DOUBLE 1
#define HAVE_MPI_WIN_CREATE 1
#define HAVE_MPI_IO 1
#define HAVE_PTHREAD_H 1
#define THREAD_PACKAGE_NAME THREAD_PACKAGE_POSIX
EOF

# (allred, allred2 and reduce need MPICH's dtpools library, which this script does not build.)
tests=${TESTS:-"allgatherv2 allgatherv3 allgatherv4 coll6 bcasttest bcastzerotype coll8 coll9 coll10 coll12 allred3 allred4 allred5 allred6 allredmany alltoall1 coll13 alltoallv gather gather2 gatherv scatter2 scatter3 scattern scatterv coll4 coll5 icgather icscatter allgather2 allgather3 allgather_struct red3 red4 redscat redscat2 redscat3 redscatinter red_scat_block red_scat_block2 redscatblk3 redscatbkinter opband opprod opsum opminloc opmaxloc uoplong scantst exscan exscan2"}
# Barrier/broadcast/allreduce/alltoall/gather/scatter/allgather/reduce/reduce_scatter/scan: "mpi/.../mpi" is MPICH's own
# under mstep; the others are libmstep's.
settings="mpi/mpi/mpi/mpi/mpi/mpi/mpi/mpi/mpi/mpi central/flat/recursive_doubling/bruck/pt2pt/pt2pt/bruck/binomial/recursive_halving/pt2pt tree:4/binomial/reduce_scatter_allgather/scattered/mpi/pt2pt/ring/reduce_scatter_gather/pairwise/mpi dissemination/esssp/pt2pt/pairwise/pt2pt/mpi/recursive_doubling/pt2pt/pt2pt/pt2pt auto/auto/pt2pt/pt2pt/pt2pt/pt2pt/pt2pt/pt2pt/pt2pt/pt2pt"
failed=0
printf "%-22s %5s %8s" test ranks native
for s in $settings; do printf " %92s" "$s"; done
echo
for t in $tests; do
  mpicc.mpich -O1 -w -I"$work" -I"$src/include" -o "$work/$t" "$src/coll/$t.c" "$src/util/mtest.c" \
    "$src/util/mtest_common.c" "$src/util/mtest_single.c" -lpthread -lm ||
    { echo "mpich_coll_tests: $t does not build" >&2; exit 2; }
  # The testlist's lines for the test: ranks, then key=value fields; those with arguments only
  # (arg=...) or none, as "RANKS ARG...".
  while read -r n args <&3; do  # fd 3: mpiexec reads its standard input
    read -r -a argv <<<"$args"
    passed() { [ "$1" -eq 0 ] && grep -q " No Errors" "$2"; }
    rc=0
    (cd "$work" && LD_PRELOAD="$shim" timeout 120 "$mpiexec" -n "$n" "./$t" "${argv[@]}") >"$work/out" 2>&1 || rc=$?
    native=FAIL
    passed "$rc" "$work/out" && native=ok
    printf "%-22s %5s %8s" "$t${args:+ $args}" "$n" "$native"
    for s in $settings; do
      rc=0
      IFS=/ read -r barrier bcast allreduce alltoall gather scatter allgather reduce reduce_scatter scan <<<"$s"
      (cd "$work" && MSTEP_PARAMS="$params" MSTEP_BARRIER="$barrier" MSTEP_BCAST="$bcast" MSTEP_ALLREDUCE="$allreduce" \
        MSTEP_ALLTOALL="$alltoall" MSTEP_GATHER="$gather" MSTEP_SCATTER="$scatter" \
        MSTEP_ALLGATHER="$allgather" MSTEP_REDUCE="$reduce" MSTEP_REDUCE_SCATTER="$reduce_scatter" MSTEP_SCAN="$scan" \
        LD_PRELOAD="$shim" timeout 120 "$build/bin/mstep" record -f -o "$work/trace" -- "$mpiexec" -n "$n" "./$t" \
        "${argv[@]}") >"$work/out" 2>&1 || rc=$?
      result=FAIL
      passed "$rc" "$work/out" && result=ok
      if [ "$native" = ok ] && [ "$result" != ok ]; then
        failed=1
        cp "$work/out" "$work/failed-$t-$n-${s//[:\/]/_}.log"
      fi
      printf " %92s" "$result"
    done
    echo
  done 3< <(awk -v t="$t" '$1 == t {
      ok = 1; line = $2
      for (i = 3; i <= NF; ++i) { if ($i ~ /^arg=/) line = line " " substr($i, 5); else ok = 0 }
      if (ok) print line }' "$src/coll/testlist.in")
done
if [ "$failed" -ne 0 ]; then
  for f in "$work"/failed-*.log; do echo "--- $(basename "$f"):" >&2; tail -5 "$f" >&2; done
  exit 1
fi
echo "every test that passes natively passes under mstep with every substitute"
