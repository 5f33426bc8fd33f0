// mstep compress: compress the frames a run left uncompressed (MSTEP_COMPRESS=later): those of ranks
// that ended without MPI_Finalize (where the others compress their own). `mstep record` does it
// after the job; this is for runs started with LD_PRELOAD, and for a record that was stopped.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "format/trace_compact.hpp"
#include "format/trace_format.hpp"
#include "tools/mstep/commands.hpp"
#include "tools/mstep/output.hpp"

namespace mstep::cli {
namespace fs = std::filesystem;

int zstd_level_setting() {
  const char* v = std::getenv("MSTEP_ZSTD_LEVEL");
  if (!v) return 1;
  char* end = nullptr;
  const long level = std::strtol(v, &end, 10);
  if (end == v || *end != '\0' || level < 1 || level > 19)
    fail(2, fmt::format("MSTEP_ZSTD_LEVEL='{}' is not a number from 1 to 19", v));
  return static_cast<int>(level);
}

CompressSummary compress_trace_dir(const std::string& dir, int level, int jobs) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (is_rank_file_name(entry.path().filename().string())) files.push_back(entry.path().string());
  }
  if (ec) throw TraceError(fmt::format("{}: cannot list: {}", dir, ec.message()));
  std::sort(files.begin(), files.end());
  CompressSummary sum;
  sum.files = files.size();
  const auto start = std::chrono::steady_clock::now();
  std::atomic<std::size_t> next{0};
  std::mutex mutex;
  auto work = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < files.size();) {
      CompressOutcome o;
      std::string problem;
      try {
        o = compress_stored_frames(files[i], level);
      } catch (const TraceError& e) {
        problem = e.what();
      }
      std::lock_guard lock(mutex);
      if (!problem.empty()) sum.problems.push_back(std::move(problem));
      sum.frames += o.frames;
      sum.files_changed += o.frames > 0;
      sum.bytes_before += o.bytes_before;
      sum.bytes_after += o.bytes_after;
    }
  };
  const auto n = static_cast<std::size_t>(std::max(1, jobs));
  std::vector<std::jthread> pool;
  for (std::size_t t = 1; t < std::min(n, files.size()); ++t) pool.emplace_back(work);
  work();
  pool.clear();
  std::sort(sum.problems.begin(), sum.problems.end());
  sum.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return sum;
}

int default_jobs() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

void add_compress(CLI::App& app) {
  struct Options {
    std::string dir;
    int jobs = 0;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "compress", "Compress the frames a run left uncompressed (MSTEP_COMPRESS=later; mstep record does it itself)");
  cmd->add_option("trace", o->dir, "Trace directory")->required();
  cmd->add_option("-j,--jobs", o->jobs, "Rank files compressed at once (default: one per core)")
      ->check(CLI::Range(1, 1024));
  cmd->footer("The level is MSTEP_ZSTD_LEVEL's (default 1), as the recorder's.");
  cmd->callback([o] {
    std::error_code ec;
    if (!fs::is_directory(o->dir, ec)) fail(2, fmt::format("{}: no such trace directory", o->dir));
    const CompressSummary s = compress_trace_dir(o->dir, zstd_level_setting(), o->jobs ? o->jobs : default_jobs());
    for (const auto& p : s.problems) std::fprintf(stderr, "mstep: %s\n", p.c_str());
    if (s.files == 0) fail(1, fmt::format("{}: no rank files (rank-*.mst)", o->dir));
    std::printf("%s\n", describe(s).c_str());
    if (!s.problems.empty()) throw CLI::RuntimeError(1);
  });
}

std::string describe(const CompressSummary& s) {
  if (s.frames == 0) return fmt::format("nothing to compress in {} rank file{}", s.files, s.files == 1 ? "" : "s");
  return fmt::format("compressed {} frame{} of {} rank file{}: {:.1f} MB -> {:.1f} MB in {:.2f} s", s.frames,
                     s.frames == 1 ? "" : "s", s.files_changed, s.files_changed == 1 ? "" : "s",
                     static_cast<double>(s.bytes_before) / 1e6, static_cast<double>(s.bytes_after) / 1e6, s.seconds);
}

}  // namespace mstep::cli
