// write_rank_trace (format/rank_trace.hpp): a RankTrace written as the recorder writes a rank file.
#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "format/rank_trace.hpp"
#include "format/step_tracker.hpp"

namespace mstep {

namespace {

void write_frame(TraceFileWriter& w, FrameKind kind, std::uint32_t count, const std::vector<std::uint8_t>& payload) {
  if (!w.write_frame(kind, 0, count, payload)) throw TraceError(fmt::format("{}: cannot write", w.path()));
}

}  // namespace

void write_rank_trace(const std::string& path, const RankTrace& t, std::size_t frame_events, bool append) {
  TraceFileWriter w(path, t.header, 1, append);
  std::vector<std::uint8_t> payload;
  encode_comms(t.comms, payload);
  write_frame(w, FrameKind::Comms, static_cast<std::uint32_t>(t.comms.size()), payload);
  for (const ClockSync& c : t.clocks) {
    if (c.when != ClockSync::AtInit) continue;
    payload.clear();
    encode_clocks(std::span<const ClockSync>(&c, 1), payload);
    write_frame(w, FrameKind::Clock, 1, payload);
  }
  // The members of each communicator by id, as the recorder's tracker has them (the last
  // definition of an id wins, as RankComms reads it).
  std::vector<const CommDef*> by_id;
  for (const CommDef& c : t.comms) {
    if (c.id >= by_id.size()) by_id.resize(c.id + std::size_t{1}, nullptr);
    by_id[c.id] = &c;
  }
  StepTracker tracker(t.header.rank, t.header.world_size, t.events.empty() ? 0 : t.events.front().t_enter);
  const std::span<const Event> events(t.events);
  for (std::size_t at = 0; at < events.size(); at += frame_events) {
    const auto chunk = events.subspan(at, std::min(frame_events, events.size() - at));
    for (const Event& e : chunk) {
      const CommDef* c = e.comm < by_id.size() ? by_id[e.comm] : nullptr;
      if (c) tracker.feed(e, c->world_ranks, c->inter);
      else tracker.feed(e, {});
    }
    if (at + chunk.size() == events.size()) tracker.finish(chunk.back().t_exit);
    if (!tracker.closed().empty()) {
      payload.clear();
      encode_steps(tracker.closed(), payload);
      write_frame(w, FrameKind::Steps, static_cast<std::uint32_t>(tracker.closed().size()), payload);
      tracker.clear_closed();
    }
    payload.clear();
    encode_events(chunk, payload);
    write_frame(w, FrameKind::Events, static_cast<std::uint32_t>(chunk.size()), payload);
  }
  for (const ClockSync& c : t.clocks) {
    if (c.when != ClockSync::AtFinalize) continue;
    payload.clear();
    encode_clocks(std::span<const ClockSync>(&c, 1), payload);
    write_frame(w, FrameKind::Clock, 1, payload);
  }
  write_frame(w, FrameKind::End, 0, {});
}


PackEntry append_rank_to_pack(const std::string& dir, std::uint32_t pack, const RankTrace& t, std::size_t frame_events) {
  namespace fs = std::filesystem;
  const fs::path file = fs::path(dir) / pack_file_name(pack);
  std::error_code ec;
  PackEntry e;
  e.pack = pack;
  e.offset = fs::exists(file, ec) ? fs::file_size(file) : 0;
  write_rank_trace(file.string(), t, frame_events, true);
  e.length = fs::file_size(file) - e.offset;
  return e;
}

}  // namespace mstep
