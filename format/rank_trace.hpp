// One rank's whole trace in memory: what `mstep stats`, `mstep dump` and the tests read.
#pragma once

#include <string>
#include <vector>

#include "format/trace_file.hpp"
#include "format/trace_format.hpp"

namespace mstep {

struct RankTrace {
  std::string path;
  FileHeader header;
  std::vector<Event> events;          // in file order; per thread in call order
  std::vector<std::uint16_t> event_thread;  // thread of each event (parallel to events)
  std::vector<StepRecord> steps;
  std::vector<CommDef> comms;
  std::vector<CallsiteDef> callsites;
  std::vector<ClockSync> clocks;
  std::uint64_t file_bytes = 0;
  std::size_t frames = 0;
  TraceEnd end = TraceEnd::Unfinished;
  std::string problem;  // one line when end is Truncated or Corrupt
};

// Reads every whole frame. Throws TraceError only when nothing can be read (no file, not a trace,
// another version); a damaged tail is reported in `end` and `problem`, keeping what came before.
RankTrace read_rank_trace(const std::string& path);

}  // namespace mstep
