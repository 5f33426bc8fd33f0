// A recorded run on disk: meta.json and one rank file per rank, loaded with every problem named.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "format/environment.hpp"
#include "format/rank_trace.hpp"
#include "model/params/collective_times.hpp"

namespace mstep {

struct RunMeta {
  bool present = false;  // meta.json was there and readable
  int ranks = 0;
  std::vector<std::string> command;
  std::string mpi_library;
  std::vector<std::string> hosts;
  std::string clock;
  double ticks_per_second = 0;
  int stack_depth = 1;
  std::string writer;  // "thread" or "inline": who wrote rank 0's frames (absent before 2026-11-25: "")
  std::string compress;  // "now" or "later": rank 0's frames compressed as written or after the run ("" before 2026-11-27)
  bool complete = false;
  int write_failed_ranks = 0;  // ranks whose trace writes failed (disk full, I/O error)
  // Rank 0's UCX_*, MPIR_CVAR_*, MPICH_* variables; absent in traces of mstep before 2026-11-24.
  std::optional<MpiEnvironment> environment;
  // The substitute collectives libmstep ran (meta.json "collectives"), "" where MPICH's ran:
  // "central", "tree:4", "dissemination"; "flat", "binomial".
  std::string barrier_substitute, bcast_substitute, allreduce_substitute, alltoall_substitute;
  std::string gather_substitute, scatter_substitute;  // "pt2pt" or empty (MPICH's own)
  std::string allgather_substitute, reduce_substitute, reduce_scatter_substitute;
  std::string scan_substitute;  // MPI_Scan and MPI_Exscan: "pt2pt" or empty (absent before stop 48)
  double auto_L = 0, auto_o = 0, auto_g = 0;  // barrier "auto": the LogP parameters it chose by
  // "auto": MPICH's own collective ran where auto saw no gain (meta.json collectives.logp.native_mpich;
  // false in traces of older libmstep, whose auto barrier ran the adaptive choice in every case),
  // and MPICH's collectives as calibrated, which it weighed (collectives.mpich: the parameter
  // file's "collectives" entries for MPI_Barrier and MPI_Bcast; empty where none or damaged).
  bool auto_native_mpich = false;
  model::CollectiveTable auto_mpich;
  // Broadcast "auto": on a tie of E-SSSP with libmstep's copy of the binomial tree, the copy ran
  // (meta.json collectives.bcast_tie "binomial"); false (E-SSSP) in traces of older libmstep.
  bool auto_bcast_binomial_on_tie = false;
  bool delayed = false;  // the delay apparatus was on (meta.json "delay")
  // A packed directory (format_version 3): ranks per pack file; 0 for a file per rank.
  std::uint64_t ranks_per_pack = 0;
  // MSTEP_BCAST=esssp|auto: the LogGPS parameters libmstep planned with (meta.json
  // "collectives.loggps") and the delay apparatus's per-pair latencies ("delay.pairs"), as JSON
  // text; empty when absent.
  std::string bcast_loggps_json, delay_pairs_json;
};

// How much of one rank's file was read.
enum class RankState {
  NotLoaded,   // not asked for (load_trace_dir with only_rank)
  Complete,    // read to its End frame: the rank reached MPI_Finalize
  Unfinished,  // whole frames, no End frame: the rank stopped before MPI_Finalize
  Truncated,   // its last frame is cut short (killed while writing, or a failed write)
  Corrupt,     // a damaged frame; nothing after it was read
  Missing,     // no file
  Unreadable,  // not a trace of this version: nothing of it was read
};
const char* rank_state_name(RankState s);

struct TraceDir {
  std::string path;
  RunMeta meta;
  std::vector<std::optional<RankTrace>> ranks;  // index = rank; nullopt where unreadable
  std::vector<RankState> states;                // index = rank
  std::vector<std::string> problems;            // one line each: file, frame, reason
  bool ok() const { return problems.empty(); }
};

// Loads the run in `path` (all ranks, or only `only_rank`). Throws TraceError when `path` is not
// a trace directory at all; anything less is a line in `problems`.
// `on_rank`: called with the number of rank files read so far, after each (progress display).
// `metadata_only`: each rank as read_rank_metadata reads it (definitions, clock samples, the first
// record; the records left on disk, for a streaming reader). A damaged Events frame is then found
// only by the reader that decodes it. `with_steps` false: the records without the M-steps (what the
// models read: they derive their own; read_rank_trace).
TraceDir load_trace_dir(const std::string& path, std::optional<int> only_rank = std::nullopt,
                        const std::function<void(std::size_t)>& on_rank = {}, bool metadata_only = false,
                        bool with_steps = true);

// The records of every rank read (held in memory plus those left on disk).
std::uint64_t trace_records(const TraceDir& d);

// meta.json of the trace in `dir` alone (present false when it is missing or unreadable).
RunMeta read_run_meta(const std::string& dir);

// The one notion of completeness of `mstep stats`, `report`, `whatif` and `record`: a trace is
// complete only when meta.json says the run finished with every write done AND every rank file
// was read to its End frame.
struct TraceCompleteness {
  bool complete = false;
  int complete_ranks = 0;
  int unfinished_ranks = 0;  // ended before MPI_Finalize, whole frames
  int damaged_ranks = 0;     // truncated, corrupt, missing or unreadable
};
TraceCompleteness trace_completeness(const TraceDir& d);
// The same, with `damaged` (ranks whose file a reader of the records found broken off in a frame
// the metadata read skipped) counted as corrupt.
TraceCompleteness trace_completeness(const TraceDir& d, std::span<const int> damaged);

// A damaged frame that a reader of the records (RankEventReader, the streaming pass) met in rank
// `rank`'s file is news only where the metadata read found the file whole (Complete or
// Unfinished): a truncation or corruption it already named is not named twice.
bool damage_is_new(const TraceDir& d, std::size_t rank);

// A rank's clock samples taken at MPI_Init and at MPI_Finalize (null where missing).
struct ClockSamples {
  const ClockSync* init = nullptr;
  const ClockSync* fin = nullptr;
};
ClockSamples clock_samples(const RankTrace& t);

// Seconds per clock tick of one rank: from its Init and Finalize clock samples when both exist
// and lie far enough apart, else from the rate measured at start-up.
double seconds_per_tick(const RankTrace& t);

}  // namespace mstep
