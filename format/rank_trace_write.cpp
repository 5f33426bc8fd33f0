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
  // Written in this version whatever `t` was read from (its marks are set here, not copied).
  FileHeader header = t.header;
  header.version = kTraceVersion;
  TraceFileWriter w(path, header, 1, append);
  std::vector<std::uint8_t> payload;
  encode_comms(t.comms, payload);
  write_frame(w, FrameKind::Comms, static_cast<std::uint32_t>(t.comms.size()), payload);
  for (const ClockSync& c : t.clocks) {
    if (c.when != ClockSync::AtInit) continue;
    payload.clear();
    encode_clocks(std::span<const ClockSync>(&c, 1), payload);
    write_frame(w, FrameKind::Clock, 1, payload);
  }
  StepMarker marker;
  std::vector<Event> chunk;
  for (std::size_t at = 0; at < t.events.size(); at += frame_events) {
    const auto n = std::min(frame_events, t.events.size() - at);
    chunk.assign(t.events.begin() + static_cast<std::ptrdiff_t>(at), t.events.begin() + static_cast<std::ptrdiff_t>(at + n));
    for (Event& e : chunk) {
      e.flags &= static_cast<std::uint8_t>(~kClosesStep);
      if (marker.closes(e)) e.flags |= kClosesStep;
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
