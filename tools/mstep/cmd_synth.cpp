// mstep synth: a synthetic trace of a communication pattern as a real trace directory (meta.json
// and one rank file per rank, written with the recorder's own format code), so that stats, report
// and whatif run on it end to end at any scale (tests, benchmarks, the LogGOPSim comparison).
#include <sys/statvfs.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "format/pack_index.hpp"
#include "format/rank_trace.hpp"
#include "model/trace/synthetic.hpp"
#include "tools/mstep/commands.hpp"
#include "tools/mstep/output.hpp"
#include "tools/mstep/progress.hpp"

namespace mstep::cli {
namespace {

namespace fs = std::filesystem;

struct SynthOptions {
  std::string out;
  int ranks = 0;
  std::uint64_t events = 0;
  std::string pattern = "ring";
  unsigned seed = 1;
  std::uint64_t pack = 0;  // ranks per pack file; 0: a file per rank
  bool force = false;
};

// Events per Events frame: the recorder's default buffer holds about as many.
constexpr std::size_t kFrameEvents = 65536;
// What generating and writing cost, measured here on the three patterns (2 M events, 64 to 16384
// ranks): the whole trace is built in memory first (model/trace/synthetic.hpp), about 64 bytes a
// record and 2 KiB a rank, and takes 1.3 to 2.5 bytes a record on disk plus about 300 bytes a rank.
constexpr double kMemoryPerEvent = 64, kMemoryPerRank = 2048;
constexpr double kDiskPerEvent = 2.5, kDiskPerRank = 300;

std::uint64_t available_memory() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return 0;
}

std::string human_bytes(double bytes) {
  if (bytes >= 1 << 30) return fmt::format("{:.1f} GiB", bytes / (1 << 30));
  if (bytes >= 1 << 20) return fmt::format("{:.1f} MiB", bytes / (1 << 20));
  return fmt::format("{:.0f} KiB", bytes / 1024);
}

int run_synth(const SynthOptions& o, const std::vector<std::string>& argv) {
  const auto pattern = model::pattern_from_name(o.pattern);
  if (!pattern) {
    std::fprintf(stderr, "mstep: unknown pattern '%s' (patterns: %s)\n", o.pattern.c_str(),
                 model::pattern_names().c_str());
    return 2;
  }
  const double memory = static_cast<double>(o.events) * kMemoryPerEvent + o.ranks * kMemoryPerRank;
  const double disk = static_cast<double>(o.events) * kDiskPerEvent + o.ranks * kDiskPerRank;
  if (const std::uint64_t avail = available_memory(); avail && memory > 0.8 * static_cast<double>(avail)) {
    std::fprintf(stderr, "mstep: %llu events over %d ranks need about %s of memory to generate; %s is available\n",
                 static_cast<unsigned long long>(o.events), o.ranks, human_bytes(memory).c_str(),
                 human_bytes(static_cast<double>(avail)).c_str());
    return 1;
  }
  const fs::path dir(o.out);
  prepare_trace_dir(o.out, o.force);
  struct statvfs fsinfo {};
  if (::statvfs(dir.c_str(), &fsinfo) == 0) {
    const double free = static_cast<double>(fsinfo.f_bavail) * static_cast<double>(fsinfo.f_frsize);
    if (disk > 0.9 * free) {
      std::fprintf(stderr, "mstep: %llu events over %d ranks need about %s on disk; %s has %s free\n",
                   static_cast<unsigned long long>(o.events), o.ranks, human_bytes(disk).c_str(), o.out.c_str(),
                   human_bytes(free).c_str());
      return 1;
    }
  }

  std::vector<RankTrace> traces = model::synthetic_trace(o.ranks, *pattern, o.events, o.seed);
  std::uint64_t written = 0;
  std::vector<PackEntry> packs;
  {
    Progress progress("writing", traces.size());  // erased before the result is printed
    for (RankTrace& t : traces) {
      progress.update(static_cast<std::uint64_t>(t.header.rank));
      if (o.pack == 0) {
        write_rank_trace((dir / rank_file_name(t.header.rank)).string(), t, kFrameEvents);
      } else {
        // Ranks in order, each stream appended to its pack file.
        const auto pack = static_cast<std::uint32_t>(static_cast<std::uint64_t>(t.header.rank) / o.pack);
        packs.push_back(append_rank_to_pack(o.out, pack, t, kFrameEvents));
      }
      written += t.events.size();
      std::vector<Event>().swap(t.events);  // what is on disk leaves memory
    }
  }
  if (o.pack) write_pack_index((dir / kPackIndexName).string(), packs);
  nlohmann::json meta = {
      {"format_version", kTraceVersion},
      {"ranks", o.ranks},
      {"command", argv},
      {"mpi_library", "none (mstep synth)"},
      {"hosts", std::vector<std::string>{"synthetic"}},
      {"clock", "clock_gettime"},
      {"ticks_per_second", 1e9},
      {"stack_depth", 1},
      {"synthetic", {{"pattern", o.pattern}, {"seed", o.seed}, {"events", written}}},
      {"complete", true},
      {"write_failed_ranks", 0},
  };
  if (o.pack) meta["packed"] = {{"ranks_per_file", o.pack}, {"index", kPackIndexName}};
  std::ofstream(dir / kMetaFileName) << meta.dump(2) << "\n";
  std::printf("mstep: wrote %s: %s pattern, %d ranks, %llu events\n", o.out.c_str(), o.pattern.c_str(), o.ranks,
              static_cast<unsigned long long>(written));
  return 0;
}

}  // namespace

void add_synth(CLI::App& app) {
  auto o = std::make_shared<SynthOptions>();
  auto* cmd = app.add_subcommand("synth", "Write a synthetic trace of a communication pattern (for tests and benchmarks)");
  cmd->add_option("-o,--output", o->out, "Trace directory to write")->required();
  cmd->add_option("--ranks", o->ranks, "Number of ranks")->required()->check(CLI::Range(1, 1 << 24));
  cmd->add_option("--events", o->events, "About this many records in all (whole iterations)")
      ->required()
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40));
  cmd->add_option("--pattern", o->pattern, model::pattern_names() + " (model/trace/synthetic.hpp)");
  cmd->add_option("--seed", o->seed, "Random seed (message sizes, computation, partners)");
  cmd->add_option("--pack", o->pack,
                  "Ranks per file: pack files ranks-NNNNNN.msp and an index instead of a file per rank (for "
                  "hundreds of thousands of ranks; share/trace-format.md)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 24));
  cmd->add_flag("-f,--force", o->force, "Overwrite an existing trace directory");
  cmd->callback([o] {
    std::vector<std::string> argv{"mstep", "synth", "-o", o->out, "--ranks", std::to_string(o->ranks), "--events", std::to_string(o->events),
                                        "--pattern", o->pattern, "--seed", std::to_string(o->seed)};
    if (o->pack) argv.insert(argv.end(), {"--pack", std::to_string(o->pack)});
    if (const int code = run_synth(*o, argv)) throw CLI::RuntimeError(code);
  });
}

}  // namespace mstep::cli
