// Replay throughput: synthetic traces of R ranks and E records replayed under LogGPS on one core.
// Prints records per second of the replay loop (setup included) and the process's peak RSS.
// Usage: replay_bench [ranks] [records] [PATTERN of mstep synth] [cold] [window=N]
//        replay_bench --dir TRACE [window=N]     (a trace directory on disk, packed or not, read as the
//                                                 replay goes; default window: the streamed report's)
// `cold` adds this machine's cold start and fresh-buffer terms (as calibrated here), to time their checks.
// Records are taken by the replay in windows of N per rank (default model::kReplayWindow, the
// streaming path); window=0 hands it each rank whole.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>

#include "model/trace/matching.hpp"
#include "model/replay/replay.hpp"
#include "model/trace/synthetic.hpp"
#include "model/trace/timeline.hpp"
#include "model/trace/trace_dir.hpp"
#include "tools/allocator/large_pages.hpp"

namespace {

long peak_rss_kib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::atol(line.c_str() + 6);
  return 0;
}

// The LogGPS parameters of every run here (this machine's, rounded).
mstep::model::LogGPSParams bench_params(std::uint32_t ranks) {
  mstep::model::LogGPSParams p;
  p.L = 200e-9, p.o = 200e-9, p.g = 190e-9, p.Gs = 0, p.Gl = 60e-12, p.s = 128, p.S = 8256, p.P = ranks;
  return p;
}

// replay_bench --dir TRACE [window=N]: the replay of a trace directory read from disk a frame at a
// time (reading included: the rank files' definitions first, then their events as the replay
// needs them), as `mstep report` will read one.
int from_dir(const char* dir, std::optional<std::uint32_t> asked_window) {
  using namespace mstep;
  const auto t0 = std::chrono::steady_clock::now();
  // Packed directories too: the locators of a pack's streams come from load_trace_dir.
  TraceDir trace;
  try {
    trace = load_trace_dir(dir, std::nullopt, {}, /*metadata_only=*/true, /*with_steps=*/false);
  } catch (const TraceError& e) {
    std::fprintf(stderr, "replay_bench: %s\n", e.what());
    return 1;
  }
  if (!trace.ok()) {
    std::fprintf(stderr, "replay_bench: %s: %s\n", dir, trace.problems.front().c_str());
    return 1;
  }
  const RunMeta& meta = trace.meta;
  // As `mstep report` holds them (model/analysis/report_stream.cpp): the directory's definitions,
  // and each rank's file name beside them.
  std::vector<std::string> files;
  std::vector<const RankTrace*> ptrs;
  files.reserve(trace.ranks.size());
  ptrs.reserve(trace.ranks.size());
  std::size_t total = 0;
  for (const auto& t : trace.ranks) {
    files.push_back(t->path);
    total += t->events.size() + t->events_on_disk;
    ptrs.push_back(&*t);
  }
  const std::uint32_t window = asked_window.value_or(model::streamed_window(ptrs.size()));
  const Timeline timeline(ptrs);
  const Matching none;
  const model::ReplayResult r = model::replay_loggps(model::ReplayInput{ptrs, none, timeline, window, files},
                                                     bench_params(static_cast<std::uint32_t>(meta.ranks)));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("replay_from_disk ranks=%d records=%zu window=%u seconds=%.3f records_per_s=%.3e predicted_s=%.6f "
              "peak_rss_mib=%.1f\n",
              meta.ranks, total, window, seconds, static_cast<double>(total) / seconds, r.predicted_s,
              static_cast<double>(peak_rss_kib()) / 1024.0);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace mstep;
  use_large_pages(argv);  // as `mstep report` runs
  if (argc > 2 && std::strcmp(argv[1], "--dir") == 0) {
    std::optional<std::uint32_t> window;  // default: the streamed report's, model::streamed_window
    if (argc > 3 && std::strncmp(argv[3], "window=", 7) == 0)
      window = static_cast<std::uint32_t>(std::strtoul(argv[3] + 7, nullptr, 10));
    return from_dir(argv[2], window);
  }
  const int ranks = argc > 1 ? std::atoi(argv[1]) : 64;
  const std::size_t records = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 10'000'000;
  const char* name = argc > 3 ? argv[3] : "random";
  const auto known = model::pattern_from_name(name);
  if (!known) {
    std::fprintf(stderr, "replay_bench: unknown pattern '%s' (patterns: %s)\n", name, model::pattern_names().c_str());
    return 2;
  }
  const model::Pattern pattern = *known;
  const auto traces = model::synthetic_trace(ranks, pattern, records, 1);
  std::vector<const RankTrace*> ptrs;
  std::size_t total = 0;
  for (const auto& t : traces) {
    ptrs.push_back(&t);
    total += t.events.size();
  }
  const long rss_input = peak_rss_kib();
  const Matching matching = match_messages(ptrs);
  const Timeline timeline(ptrs);
  const model::LogGPSParams p = bench_params(static_cast<std::uint32_t>(ranks));
  const auto t0 = std::chrono::steady_clock::now();
  model::ColdStart cold;
  bool with_cold = false;
  std::uint32_t window = model::kReplayWindow;
  for (int i = 4; i < argc; ++i) {
    if (std::strcmp(argv[i], "cold") == 0) with_cold = true;
    else if (std::strncmp(argv[i], "window=", 7) == 0) window = static_cast<std::uint32_t>(std::strtoul(argv[i] + 7, nullptr, 10));
  }
  if (with_cold) {
    cold.messages = 64, cold.send = 25e-6, cold.recv = 17e-6, cold.from = 384, cold.to = 8256;
    cold.fresh_per_byte = 1.8e-9, cold.fresh_from = 8256;
  }
  const model::ReplayResult r = model::replay_loggps(model::ReplayInput{ptrs, matching, timeline, window}, p, cold);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("replay ranks=%d records=%zu pattern=%s%s window=%u seconds=%.3f records_per_s=%.3e predicted_s=%.6f "
              "peak_rss_mib=%.1f input_rss_mib=%.1f\n",
              ranks, total, name, with_cold ? "+cold" : "", window, seconds, static_cast<double>(total) / seconds, r.predicted_s,
              static_cast<double>(peak_rss_kib()) / 1024.0, static_cast<double>(rss_input) / 1024.0);
  return 0;
}
