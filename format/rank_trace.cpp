#include "format/rank_trace.hpp"

#include <fmt/format.h>

namespace mstep {

RankTrace read_rank_trace(const std::string& path) {
  TraceFileReader reader(path);
  RankTrace t;
  t.path = path;
  t.header = reader.header();
  t.file_bytes = reader.file_bytes();
  Frame f;
  while (reader.next(f)) {
    try {
      switch (f.kind) {
        case FrameKind::Events: {
          const auto before = t.events.size();
          decode_events(f.payload, t.events);
          t.event_thread.resize(t.events.size(), f.thread);
          if (t.events.size() - before != f.count) throw TraceError("event count differs from its header");
          break;
        }
        case FrameKind::Steps: decode_steps(f.payload, t.steps); break;
        case FrameKind::Comms: decode_comms(f.payload, t.comms); break;
        case FrameKind::Callsites: decode_callsites(f.payload, t.callsites); break;
        case FrameKind::Clock: decode_clocks(f.payload, t.clocks); break;
        case FrameKind::End: break;
        default: break;  // a kind from a later minor revision: skip it
      }
    } catch (const TraceError& e) {
      // Checksummed but undecodable: a writer bug or a crafted file. Keep what came before.
      t.events.resize(t.event_thread.size());
      t.end = TraceEnd::Corrupt;
      t.problem = fmt::format("{}: frame {} at byte {}: {}", path, f.index, f.offset, e.what());
      t.frames = f.index;
      return t;
    }
    ++t.frames;
  }
  t.end = reader.end_state();
  t.problem = reader.problem();
  return t;
}

}  // namespace mstep
