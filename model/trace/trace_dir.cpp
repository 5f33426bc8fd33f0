#include "model/trace/trace_dir.hpp"

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "format/pack_index.hpp"
#include "format/trace_file.hpp"

namespace mstep {
namespace fs = std::filesystem;

namespace {

RunMeta read_meta(const fs::path& file, std::vector<std::string>& problems) {
  RunMeta m;
  std::ifstream in(file);
  if (!in) return m;
  try {
    const auto j = nlohmann::json::parse(in);
    m.ranks = j.at("ranks").get<int>();
    m.command = j.value("command", std::vector<std::string>{});
    m.mpi_library = j.value("mpi_library", "");
    m.hosts = j.value("hosts", std::vector<std::string>{});
    m.clock = j.value("clock", "");
    m.ticks_per_second = j.value("ticks_per_second", 0.0);
    m.stack_depth = j.value("stack_depth", 1);
    m.writer = j.value("writer", "");
    m.compress = j.value("compress", "");
    m.complete = j.value("complete", false);
    m.write_failed_ranks = j.value("write_failed_ranks", 0);
    if (m.write_failed_ranks > 0)
      problems.push_back(fmt::format("{}: {} rank{} could not write all of the trace (disk full or I/O error); "
                                     "their files end early", file.string(), m.write_failed_ranks,
                                     m.write_failed_ranks == 1 ? "" : "s"));
    if (j.contains("environment")) m.environment = j.at("environment").get<MpiEnvironment>();
    m.delayed = j.contains("delay");
    if (m.delayed && j.at("delay").is_object() && j.at("delay").contains("pairs") && !j.at("delay").at("pairs").is_null())
      m.delay_pairs_json = j.at("delay").at("pairs").dump();
    if (j.contains("collectives")) {
      const auto& c = j.at("collectives");
      // A substitute's name, empty for MPICH's own ("mpi").
      const auto substitute = [&](const char* key) {
        std::string name = c.value(key, "");
        return name == "mpi" ? std::string() : name;
      };
      m.barrier_substitute = substitute("barrier");
      m.bcast_substitute = substitute("bcast");
      m.allreduce_substitute = substitute("allreduce");
      m.alltoall_substitute = substitute("alltoall");
      m.allgather_substitute = substitute("allgather");
      m.reduce_substitute = substitute("reduce");
      m.gather_substitute = substitute("gather");
      m.scatter_substitute = substitute("scatter");
      m.reduce_scatter_substitute = substitute("reduce_scatter");
      m.scan_substitute = substitute("scan");
      if (c.contains("logp")) {
        const auto& l = c.at("logp");
        m.auto_L = l.value("L", 0.0), m.auto_o = l.value("o", 0.0), m.auto_g = l.value("g", 0.0);
        m.auto_native_mpich = l.value("native_mpich", false);
      }
      if (c.contains("loggps") && c.at("loggps").is_object()) m.bcast_loggps_json = c.at("loggps").dump();
      m.auto_bcast_binomial_on_tie = c.contains("bcast_tie") && c.at("bcast_tie") == "binomial";
      if (c.contains("mpich") && c.at("mpich").is_object()) {
        // Damaged: auto's choices are then recomputed from the messages alone.
        try {
          m.auto_mpich = model::read_collective_times(c.at("mpich"), "meta.json collectives.mpich");
        } catch (const std::exception&) {
          m.auto_mpich.clear();
        }
      }
    }
    if (j.contains("packed")) m.ranks_per_pack = j.at("packed").value("ranks_per_file", std::uint64_t{0});
    const int v = j.value("format_version", 0);
    if (v < kOldestTraceVersion || v > kTraceVersion)
      problems.push_back(fmt::format("{}: format version {}, this mstep reads versions {} to {}", file.string(), v,
                                     kOldestTraceVersion, kTraceVersion));
    else if (j.contains("packed") && (v < kPackedTraceVersion || m.ranks_per_pack == 0))
      problems.push_back(fmt::format("{}: \"packed\" needs format version {} or later and {{\"ranks_per_file\": N}} with N > 0",
                                     file.string(), kPackedTraceVersion));
    if (v < kPackedTraceVersion) m.ranks_per_pack = 0;  // read as rank files, the line above says why
    m.present = m.ranks > 0;
    if (!m.present) problems.push_back(fmt::format("{}: ranks must be positive", file.string()));
  } catch (const std::exception& e) {
    problems.push_back(fmt::format("{}: unreadable: {}", file.string(), e.what()));
  }
  return m;
}

RankState state_of(TraceEnd e) {
  switch (e) {
    case TraceEnd::Complete: return RankState::Complete;
    case TraceEnd::Unfinished: return RankState::Unfinished;
    case TraceEnd::Truncated: return RankState::Truncated;
    case TraceEnd::Corrupt: return RankState::Corrupt;
  }
  return RankState::Corrupt;
}

}  // namespace

const char* rank_state_name(RankState s) {
  switch (s) {
    case RankState::NotLoaded: return "not loaded";
    case RankState::Complete: return trace_end_name(TraceEnd::Complete);
    case RankState::Unfinished: return trace_end_name(TraceEnd::Unfinished);
    case RankState::Truncated: return trace_end_name(TraceEnd::Truncated);
    case RankState::Corrupt: return trace_end_name(TraceEnd::Corrupt);
    case RankState::Missing: return "missing";
    case RankState::Unreadable: return "unreadable";
  }
  return "?";
}

RunMeta read_run_meta(const std::string& dir) {
  std::vector<std::string> ignored;
  return read_meta(fs::path(dir) / kMetaFileName, ignored);
}

bool damage_is_new(const TraceDir& d, std::size_t rank) {
  const RankState s = rank < d.states.size() ? d.states[rank] : RankState::Missing;
  return s == RankState::Complete || s == RankState::Unfinished;
}

TraceCompleteness trace_completeness(const TraceDir& d) { return trace_completeness(d, {}); }

TraceCompleteness trace_completeness(const TraceDir& d, std::span<const int> damaged) {
  std::vector<RankState> states = d.states;
  for (const int r : damaged)
    if (r >= 0 && static_cast<std::size_t>(r) < states.size()) states[static_cast<std::size_t>(r)] = RankState::Corrupt;
  TraceCompleteness c;
  for (const RankState s : states) {
    if (s == RankState::Complete) ++c.complete_ranks;
    else if (s == RankState::Unfinished) ++c.unfinished_ranks;
    else if (s != RankState::NotLoaded) ++c.damaged_ranks;
  }
  c.complete = d.meta.present && d.meta.complete && d.meta.write_failed_ranks == 0 &&
               c.complete_ranks == static_cast<int>(d.states.size());
  return c;
}

std::uint64_t trace_records(const TraceDir& d) {
  std::uint64_t n = 0;
  for (const auto& r : d.ranks)
    if (r) n += r->events.size() + r->events_on_disk;
  return n;
}

TraceDir load_trace_dir(const std::string& path, std::optional<int> only_rank,
                        const std::function<void(std::size_t)>& on_rank, bool metadata_only, bool with_steps) {
  TraceDir d;
  d.path = path;
  std::error_code ec;
  if (!fs::is_directory(path, ec))
    throw TraceError(fmt::format("{}: {}", path, fs::exists(path, ec) ? "not a directory" : "no such directory"));
  const fs::path dir(path);
  d.meta = read_meta(dir / kMetaFileName, d.problems);
  int ranks = d.meta.present ? d.meta.ranks : 0;
  if (!d.meta.present) {
    // No metadata: the rank files still say how many ranks there were.
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      if (is_rank_file_name(entry.path().filename().string())) ++ranks;
    }
    if (ranks == 0) throw TraceError(fmt::format("{}: not an mstep trace directory (no {} and no rank files)", path, kMetaFileName));
    if (!fs::exists(dir / kMetaFileName))
      d.problems.push_back(fmt::format("{}: missing (using the {} rank files found)", (dir / kMetaFileName).string(), ranks));
  }
  if (only_rank && (*only_rank < 0 || *only_rank >= ranks))
    throw TraceError(fmt::format("{}: no rank {} (the run has ranks 0 to {})", path, *only_rank, ranks - 1));
  d.ranks.resize(static_cast<std::size_t>(ranks));
  d.states.assign(static_cast<std::size_t>(ranks), RankState::NotLoaded);
  // A packed directory: where each rank's stream is (a bad index makes the whole trace unreadable).
  std::vector<PackEntry> packs;
  if (d.meta.present && d.meta.ranks_per_pack > 0)
    packs = read_pack_index((dir / kPackIndexName).string(), static_cast<std::uint64_t>(ranks));
  PackHolder pack;  // the pack of the ranks being read, open for all of them
  for (int r = 0; r < ranks; ++r) {
    if (only_rank && r != *only_rank) continue;
    if (on_rank) on_rank(static_cast<std::size_t>(r));
    const auto ur = static_cast<std::size_t>(r);
    const auto container = packs.empty() ? dir / rank_file_name(r) : dir / pack_file_name(packs[ur].pack);
    const auto file = packs.empty() ? container.string()
                                    : pack_locator(container.string(), packs[ur].offset, packs[ur].length);
    pack.hold(file);
    auto& state = d.states[ur];
    state = RankState::Unreadable;
    try {
      RankTrace t = metadata_only ? read_rank_metadata(file) : read_rank_trace(file, with_steps);
      if (t.header.rank != r || (d.meta.present && t.header.world_size != ranks))
        d.problems.push_back(fmt::format("{}: header says rank {} of {}", file, t.header.rank, t.header.world_size));
      if (t.end == TraceEnd::Truncated || t.end == TraceEnd::Corrupt)
        d.problems.push_back(t.problem + " (the events before it are kept)");
      else if (t.end == TraceEnd::Unfinished)
        d.problems.push_back(fmt::format("{}: unfinished: the rank did not reach MPI_Finalize", file));
      state = state_of(t.end);
      if (!t.events.empty() && t.events_on_disk == 0 && t.events.back().op == Op::Abort)
        d.problems.push_back(fmt::format("{}: the rank called MPI_Abort (error code {}): the run was aborted", file,
                                         t.events.back().tag));
      d.ranks[static_cast<std::size_t>(r)] = std::move(t);
    } catch (const TraceError& e) {
      // Asked only now: a stat a rank was a tenth of the metadata read at 16 384 ranks.
      if (!fs::exists(container, ec)) {
        state = RankState::Missing;
        d.problems.push_back(fmt::format("{}: missing", file));
      } else {
        d.problems.push_back(e.what());
      }
    }
  }
  return d;
}

ClockSamples clock_samples(const RankTrace& t) {
  ClockSamples s;
  for (const auto& c : t.clocks) {
    if (c.when == ClockSync::AtInit && !s.init) s.init = &c;
    if (c.when == ClockSync::AtFinalize) s.fin = &c;
  }
  return s;
}

double seconds_per_tick(const RankTrace& t) {
  const auto [init, fin] = clock_samples(t);
  // Over 10 ms the pair beats the start-up measurement (2 ms of spinning).
  if (init && fin && fin->ticks > init->ticks && fin->ns - init->ns > 10'000'000)
    return static_cast<double>(fin->ns - init->ns) * 1e-9 / static_cast<double>(fin->ticks - init->ticks);
  if (t.header.ticks_per_second > 0) return 1.0 / t.header.ticks_per_second;
  return 1e-9;
}

}  // namespace mstep
