#!/usr/bin/env bash
# Benchmarks of the recording half of mstep (libmstep.so), at 2 ranks:
#   - added latency: 8-byte ping-pong with libmstep.so preloaded (default settings: call sites on,
#     default depth) and without, alternately, several rounds; medians and their ratio;
#   - trace size: bytes on disk per recorded event (mstep stats: trace_bytes / events) of a long
#     ping-pong (>= 1M events) and of ring exchanges (Isend/Irecv/Waitall, and Sendrecv);
#   - memory: a rank's VmRSS growth over 10 million recorded events, with minus without the library;
#   - and, as a diagnostic without a goal, the recorder's cost per recorded call on a single rank.
#
# Usage: tests/bench/run_benchmarks.sh [BUILD_DIR] [--quick]
#   BUILD_DIR  the CMake build tree (default: build): uses BUILD_DIR/bin/mstep,
#              BUILD_DIR/lib/libmstep.so and BUILD_DIR/bench/{pingpong,ring,memory,callcost}.
#              Builds nothing (cmake --build BUILD_DIR builds them all).
#   --quick    tiny runs (< 20 s) that only check that everything runs and the figures parse; the
#              figures are then meaningless (the CTest "bench: smoke" test).
# Environment: MSTEP_MPIEXEC (default mpiexec.mpich); BENCH_ROUNDS (latency rounds per variant,
# default 10); TMPDIR (scratch for traces, removed at exit).
#
# Prints progress lines starting with '#', then a table, one figure a line, each with its goal:
#   latency_ratio 1.08 (goal <= 1.20) ok
# Exits 0 whether or not the goals are met (these are figures, not tests); non-zero only when
# something failed to run or a figure could not be read. The machine may be shared and busy: the
# latency variants alternate round by round and only medians are reported, with their spread.
set -euo pipefail

build_arg=build
quick=0
for a in "$@"; do
  case "$a" in
    --quick) quick=1 ;;
    -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "run_benchmarks.sh: unknown option $a" >&2; exit 2 ;;
    *) build_arg=$a ;;
  esac
done

die() { echo "run_benchmarks.sh: $*" >&2; exit 1; }

build=$(cd "$build_arg" 2>/dev/null && pwd) || die "no build directory '$build_arg'"
mstep=$build/bin/mstep
lib=$build/lib/libmstep.so
benchdir=$build/bench
mpiexec=${MSTEP_MPIEXEC:-mpiexec.mpich}
for f in "$mstep" "$lib" "$benchdir"/{pingpong,ring,memory,callcost}; do
  [[ -e $f ]] || die "missing $f (build it first: cmake --build $build)"
done
command -v "$mpiexec" >/dev/null || die "no $mpiexec"

# Nothing preloaded or configured from the caller's environment: default settings only.
unset LD_PRELOAD MSTEP_DIR MSTEP_ENABLE MSTEP_BUFFER MSTEP_STACK_DEPTH MSTEP_ZSTD_LEVEL MSTEP_CLOCK MSTEP_WRITER MSTEP_COMPRESS

work=$(mktemp -d "${TMPDIR:-/tmp}/mstep-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

if ((quick)); then
  # Tiny: on a busy machine two busy-polling ranks can need a scheduler time slice (several ms)
  # per message, so the two-rank jobs make only a few hundred messages each.
  rounds=1
  pp_args=(8 50 3 10)           # bytes iterations batches warmup
  size_pp_args=(8 200 1 0)
  ring_iters=100
  mem_args=(200 6 10)
  cc_rounds=1
  cc_args=(1000 3)              # records per batch, batches
  run_timeout=60
else
  rounds=${BENCH_ROUNDS:-10}
  # A batch of 40,000 round trips makes 80,000 records per rank, about 4 trace buffers (1 MiB,
  # ~18,700 records each): each batch pays its share of buffer flushes.
  pp_args=(8 40000 10 2000)     # bytes iterations batches warmup
  size_pp_args=(8 50000 6 1000)  # 2 x 301,000 records per rank: 1.2M events
  ring_iters=150000              # nonblocking: 1.2M records per rank; sendrecv: 0.6M
  mem_args=(1000000 6 100)       # 10 events per iteration: 10M per rank
  cc_rounds=5
  cc_args=(75000 15)             # records per batch (4 trace buffers), batches
  run_timeout=300
fi

# run [-n RANKS] NAME TRACE_DIR|- PROGRAM ARGS...: one job (2 ranks unless -n), its stdout in
# $work/NAME.out. With a trace directory, libmstep.so is preloaded and writes there (frames written
# on the ranks' own thread are stored during the run and compressed by each rank in MPI_Finalize;
# `mstep compress` after the job finds nothing left, or what a rank left).
run() {
  local np=2
  if [[ $1 == -n ]]; then np=$2; shift 2; fi
  local name=$1 trace=$2
  shift 2
  local -a envs=()
  if [[ $trace != - ]]; then
    rm -rf "$trace"
    envs=(LD_PRELOAD="$lib" MSTEP_DIR="$trace")
  fi
  if ! env "${envs[@]}" timeout "$run_timeout" "$mpiexec" -n "$np" "$@" >"$work/$name.out" 2>"$work/$name.err"; then
    echo "run_benchmarks.sh: '$mpiexec -n $np $*' ${trace:+(trace $trace) }failed:" >&2
    tail -n 20 "$work/$name.err" >&2
    exit 1
  fi
  if [[ $trace != - ]] && ! "$mstep" compress "$trace" >"$work/$name.compress" 2>&1; then
    die "mstep compress $trace failed: $(cat "$work/$name.compress")"
  fi
}

# field FILE KEY: the number after KEY= in the program's result line.
field() {
  local v
  v=$(sed -n "s/.*[ ]$2=\([-0-9.e+]*\).*/\1/p" "$1" | head -n 1)
  [[ -n $v ]] || die "no $2= in $(cat "$1")"
  echo "$v"
}

# stat_field DIR KEY: a top-level number of `mstep stats --format json` (no jq needed: the JSON is
# indented by two spaces per level, so top-level keys are the lines with exactly two).
stat_field() {
  local v
  v=$(sed -n "s/^  \"$2\": \([0-9.]*\),\{0,1\}$/\1/p" "$work/stats.json" | head -n 1)
  [[ -n $v ]] || die "no top-level \"$2\" in mstep stats of $1"
  echo "$v"
}

# median / min / max of numbers on stdin.
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) exit 1; printf "%.1f\n", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
minimum() { sort -g | head -n 1; }
maximum() { sort -g | tail -n 1; }
div() { awk -v a="$1" -v b="$2" -v f="${3:-%.2f}" 'BEGIN { if (b == 0) exit 1; printf f "\n", a / b }'; }

declare -a table=()
# figure NAME VALUE OP GOAL NOTE: one table line; OP is <= (a ceiling).
figure() {
  local verdict
  verdict=$(awk -v v="$2" -v g="$4" 'BEGIN { print (v <= g) ? "ok" : "MISSED" }')
  table+=("$(printf '%-26s %10s  (goal %s %s) %-6s %s' "$1" "$2" "$3" "$4" "$verdict" "$5")")
}
info() { table+=("$(printf '%-26s %10s  %s' "$1" "$2" "$3")"); }

exec 3>&1  # progress lines from inside command substitutions
start=$SECONDS
echo "# mstep benchmarks: $build, $mpiexec, 2 ranks$( ((quick)) && echo ', QUICK (figures meaningless)')"
echo "# $(uname -n), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- Added latency -------------------------------------------------------------------------------
# The peer: EZTrace 2 (Debian's eztrace, `eztrace -t mpich`), when installed, in the same rounds.
peer=()
if command -v eztrace >/dev/null && ((!quick)); then peer=(eztrace); fi
echo "# latency: pingpong ${pp_args[*]} (bytes iterations batches warmup), $rounds rounds, alternating${peer:+, with EZTrace}"
: >"$work/lat_plain" ; : >"$work/lat_traced" ; : >"$work/lat_pairs" ; : >"$work/lat_eztrace" ; : >"$work/ez_bytes"
for ((r = 1; r <= rounds; ++r)); do
  # Alternate which variant goes first, so that a drift in the machine's load favours neither.
  if ((r % 2)); then order=(plain traced "${peer[@]}"); else order=("${peer[@]}" traced plain); fi
  for v in "${order[@]}"; do
    case $v in
      plain) run "lat_$v" - "$benchdir/pingpong" "${pp_args[@]}" ;;
      traced) run "lat_$v" "$work/lat_trace" "$benchdir/pingpong" "${pp_args[@]}" ;;
      eztrace)
        # EZTrace writes its OTF2 archive (pingpong_trace/) into the working directory.
        mkdir -p "$work/ez"
        (cd "$work/ez" && run "lat_$v" - eztrace -t mpich "$benchdir/pingpong" "${pp_args[@]}")
        du -sb "$work/ez" | cut -f1 >>"$work/ez_bytes"
        rm -rf "$work/ez" ;;
    esac
    field "$work/lat_$v.out" median_ns >>"$work/lat_$v"
  done
  p=$(tail -n 1 "$work/lat_plain"); t=$(tail -n 1 "$work/lat_traced")
  div "$t" "$p" %.3f >>"$work/lat_pairs"
  echo "# round $r: without ${p} ns, with ${t} ns${peer:+, with EZTrace $(tail -n 1 "$work/lat_eztrace") ns}"
done
[[ -f $work/lat_trace/meta.json ]] || die "the traced ping-pong wrote no trace"
lat_trace_bytes=$(du -sb "$work/lat_trace" | cut -f1)
rm -rf "$work/lat_trace"
lat_events=$(( 2 * $(field "$work/lat_traced.out" events_per_rank) ))
lat_plain=$(median <"$work/lat_plain")
lat_traced=$(median <"$work/lat_traced")
lat_ratio=$(div "$lat_traced" "$lat_plain" %.3f)
info latency_without_ns "$lat_plain" "median of $rounds runs (each: median of batches), range $(minimum <"$work/lat_plain")-$(maximum <"$work/lat_plain")"
info latency_with_ns "$lat_traced" "median of $rounds runs, range $(minimum <"$work/lat_traced")-$(maximum <"$work/lat_traced")"
info latency_added_ns "$(awk -v a="$lat_traced" -v b="$lat_plain" 'BEGIN { printf "%.1f", a - b }')" "with minus without, medians (issue 14's goal: 40 ns)"
figure latency_ratio "$lat_ratio" "<=" 1.20 "with/without; per-round ratios: median $(sort -g "$work/lat_pairs" | awk '{ v[NR] = $1 } END { printf "%.3f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'), range $(minimum <"$work/lat_pairs")-$(maximum <"$work/lat_pairs")"
info trace_bytes_pingpong "$lat_trace_bytes" "libmstep's trace of one latency run, $lat_events events (both ranks)"
if ((${#peer[@]})); then
  lat_ez=$(median <"$work/lat_eztrace")
  info latency_eztrace_ns "$lat_ez" "the same ping-pong under EZTrace (eztrace -t mpich), median of $rounds, range $(minimum <"$work/lat_eztrace")-$(maximum <"$work/lat_eztrace"); added $(awk -v a="$lat_ez" -v b="$lat_plain" 'BEGIN { printf "%.1f", a - b }') ns"
  info trace_bytes_eztrace "$(median <"$work/ez_bytes" | cut -d. -f1)" "EZTrace's OTF2 archive of one latency run, median"
fi

# ---- Cost per recorded call, one rank ------------------------------------------------------------
# Not a goal: the with-minus-without time of single-rank loops (see callcost.c), which no partner
# process can disturb, so it stays readable when the two-rank latency above drowns in noise.
echo "# call cost ($((SECONDS - start)) s): callcost ${cc_args[*]} (records batches), 1 rank, $cc_rounds rounds, alternating"
: >"$work/cc_procnull" ; : >"$work/cc_pair" ; : >"$work/cc_self" ; : >"$work/cc_iprobe"
# One rank leaves the other core free, so the default (MSTEP_WRITER=auto) runs libmstep's writer
# thread there; the "inline" variant makes the application's thread do that work, as on a full node
# (where `mstep record` leaves compression until after the job), "inline_now" compresses as well.
: >"$work/cc_pair_inline" ; : >"$work/cc_pair_inline_now"
for ((r = 1; r <= cc_rounds; ++r)); do
  if ((r % 2)); then order=(plain traced inline inline_now); else order=(inline_now inline traced plain); fi
  for v in "${order[@]}"; do
    case $v in
      plain) run -n 1 "cc_$v" - "$benchdir/callcost" "${cc_args[@]}" ;;
      traced) run -n 1 "cc_$v" "$work/cc_trace" "$benchdir/callcost" "${cc_args[@]}" ;;
      inline) MSTEP_WRITER=inline run -n 1 "cc_$v" "$work/cc_trace" "$benchdir/callcost" "${cc_args[@]}" ;;
      inline_now) MSTEP_WRITER=inline MSTEP_COMPRESS=now run -n 1 "cc_$v" "$work/cc_trace" "$benchdir/callcost" "${cc_args[@]}" ;;
    esac
  done
  for k in procnull pair self iprobe; do
    a=$(field "$work/cc_traced.out" "${k}_ns")
    b=$(field "$work/cc_plain.out" "${k}_ns")
    case $k in pair) n=2 ;; self) n=3 ;; *) n=1 ;; esac  # records per iteration
    awk -v a="$a" -v b="$b" -v n="$n" 'BEGIN { printf "%.1f\n", (a - b) / n }' >>"$work/cc_$k"
  done
  a=$(field "$work/cc_inline.out" pair_ns)
  b=$(field "$work/cc_plain.out" pair_ns)
  awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f\n", (a - b) / 2 }' >>"$work/cc_pair_inline"
  a=$(field "$work/cc_inline_now.out" pair_ns)
  awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f\n", (a - b) / 2 }' >>"$work/cc_pair_inline_now"
done
rm -rf "$work/cc_trace"
info record_cost_procnull_ns "$(median <"$work/cc_procnull")" "CPU ns added per MPI_Send to MPI_PROC_NULL (1 record), median of $cc_rounds"
info record_cost_pair_ns "$(median <"$work/cc_pair")" "CPU ns added per record of Bsend+Recv to self (2 records, 1 M-step: a ping-pong rank's round trip), median of $cc_rounds"
info record_cost_self_ns "$(median <"$work/cc_self")" "CPU ns added per record of Irecv/Send/Wait to self (3 records, real peer, M-steps), median of $cc_rounds"
info record_cost_iprobe_ns "$(median <"$work/cc_iprobe")" "CPU ns added per MPI_Iprobe finding nothing, median of $cc_rounds"
info record_cost_pair_inline_ns "$(median <"$work/cc_pair_inline")" "the same as record_cost_pair_ns with MSTEP_WRITER=inline (M-step marks, encoding and a stored frame's write on the application's thread, as on a full node; compressed in MPI_Finalize), median of $cc_rounds"
info record_cost_inline_zstd_ns "$(median <"$work/cc_pair_inline_now")" "the same with MSTEP_COMPRESS=now (zstd on the application's thread too), median of $cc_rounds"

# ---- Trace size ----------------------------------------------------------------------------------
# bytes_per_event NAME PROGRAM ARGS...: records the program and prints trace_bytes / events.
bytes_per_event() {
  local name=$1
  shift
  run "$name" "$work/$name" "$@"
  "$mstep" stats "$work/$name" --format json >"$work/stats.json" 2>"$work/stats.err" ||
    { cat "$work/stats.err" >&2; die "mstep stats $work/$name failed"; }
  local events bytes
  events=$(stat_field "$work/$name" events)
  bytes=$(stat_field "$work/$name" trace_bytes)
  ((events > 0)) || die "$name: no events recorded"
  echo "# $name: $events events, $bytes bytes" >&3
  rm -rf "${work:?}/$name"
  echo "$events $(div "$bytes" "$events")"
}
echo "# trace size ($((SECONDS - start)) s)"
read -r pp_events pp_bpe < <(bytes_per_event size_pingpong "$benchdir/pingpong" "${size_pp_args[@]}")
read -r rn_events rn_bpe < <(bytes_per_event size_ring "$benchdir/ring" "$ring_iters" 8 nonblocking)
read -r rs_events rs_bpe < <(bytes_per_event size_ring_sr "$benchdir/ring" "$ring_iters" 8 sendrecv)
[[ -n ${pp_bpe:-} && -n ${rn_bpe:-} && -n ${rs_bpe:-} ]] || die "a trace-size run failed"
if ((!quick && pp_events < 1000000)); then die "the size ping-pong made only $pp_events events"; fi
figure bytes_per_event_pingpong "$pp_bpe" "<=" 4 "8-byte Send/Recv ping-pong, $pp_events events"
figure bytes_per_event_ring "$rn_bpe" "<=" 4 "ring Irecv x2/Isend x2/Waitall, $rn_events events"
figure bytes_per_event_ring_sr "$rs_bpe" "<=" 4 "ring Sendrecv x2, $rs_events events"

# ---- Memory --------------------------------------------------------------------------------------
echo "# memory ($((SECONDS - start)) s): memory ${mem_args[*]} (iterations probes samples)"
run mem_plain - "$benchdir/memory" "${mem_args[@]}"
run mem_traced "$work/mem_trace" "$benchdir/memory" "${mem_args[@]}"
grep -q '"complete": *true' "$work/mem_trace/meta.json" 2>/dev/null || die "the traced memory run left no complete trace"
rm -rf "$work/mem_trace"
mem_events=$(field "$work/mem_traced.out" events_per_rank)
g_plain=$(field "$work/mem_plain.out" growth_kib)
g_traced=$(field "$work/mem_traced.out" growth_kib)
l_plain=$(field "$work/mem_plain.out" late_growth_kib)
l_traced=$(field "$work/mem_traced.out" late_growth_kib)
s_plain=$(field "$work/mem_plain.out" rss_start_kib)
s_traced=$(field "$work/mem_traced.out" rss_start_kib)
mem_delta=$(awk -v a="$g_traced" -v b="$g_plain" 'BEGIN { printf "%.2f\n", (a - b) / 1024 }')
late_delta=$(awk -v a="$l_traced" -v b="$l_plain" 'BEGIN { printf "%.2f\n", (a - b) / 1024 }')
echo "# memory: without: start ${s_plain} KiB, growth ${g_plain} KiB; with: start ${s_traced} KiB, growth ${g_traced} KiB"
figure memory_growth_mib "$mem_delta" "<=" 16 "RSS growth over $mem_events events/rank, with minus without (max over ranks)"
info memory_late_growth_mib "$late_delta" "same, from 10% of the run to its end, with minus without (flat: ~0)"
info memory_start_delta_mib "$(awk -v a="$s_traced" -v b="$s_plain" 'BEGIN { printf "%.2f\n", (a - b) / 1024 }')" "RSS right after MPI_Init, with minus without (fixed cost, not a goal)"

# ---- Table ---------------------------------------------------------------------------------------
echo
echo "mstep recording benchmarks ($((SECONDS - start)) s$( ((quick)) && echo ', quick mode: figures meaningless'))"
printf '%s\n' "${table[@]}"
