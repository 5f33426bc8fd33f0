#include "format/rank_trace.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "format/rank_steps.hpp"

namespace mstep {

namespace {

template <typename Record, typename Decode>
void decode_counted(const Frame& f, std::vector<Record>& out, Decode decode) {
  const auto before = out.size();
  decode(f.payload, out);
  if (const auto n = out.size() - before; n != f.count) {
    out.resize(before);
    throw TraceError(fmt::format("{} records where its header says {}", n, f.count));
  }
}

// Version 4: each record's mark checked against the rule that set it (StepMarker) and taken off.
// A record whose mark disagrees (a writer's bug: the marks are inside the checksummed payload)
// ends the rank there, as a damaged frame would.
void check_step_marks(RankTrace& t) {
  StepMarker marker;
  for (std::size_t i = 0; i < t.events.size(); ++i) {
    Event& e = t.events[i];
    const bool marked = e.flags & kClosesStep;
    e.flags &= static_cast<std::uint8_t>(~kClosesStep);
    if (marker.closes(e) != marked) {
      t.end = TraceEnd::Corrupt;
      t.problem = fmt::format("{}: record {} ({}) is {} as closing an M-step, which the records before it say it {}",
                              t.path, i, mpi_name(e.op), marked ? "marked" : "not marked",
                              marked ? "does not" : "does");
      t.events.resize(i);
      t.event_thread.resize(i);
      return;
    }
  }
}

}  // namespace

namespace {

RankTrace read_rank(const std::string& path, bool metadata_only, bool with_steps) {
  TraceFileReader reader(path);
  reader.skip_step_payloads(metadata_only);
  // Versions 1-3 without their M-steps: the Steps frames checked (a damaged one ends the rank, as
  // for every reader), not decoded.
  reader.check_step_payloads_only(!metadata_only && !with_steps);
  RankTrace t;
  t.path = path;
  t.header = reader.header();
  t.file_bytes = reader.file_bytes();
  Frame f;
  std::uint16_t first_thread = 0;
  bool any_events = false, first_events_read = false;
  std::vector<bool> comm_defined;  // by local id, for the steps that name one
  const bool marks = marks_steps(t.header.version);
  const auto done = [&t, metadata_only, with_steps, marks]() -> RankTrace {
    if (marks && !metadata_only) check_step_marks(t);
    if (marks && with_steps) t.steps = rank_steps(t);
    return std::move(t);
  };
  while (reader.next(f)) {
    try {
      if (f.kind == FrameKind::Steps && marks) throw TraceError("a Steps frame in a version 4 trace");
      if (f.kind == FrameKind::Events) {
        if (!any_events) first_thread = f.thread, any_events = true;
        t.several_threads = t.several_threads || f.thread != first_thread;
        // After the first Events frame a metadata read skips their payloads.
        if (metadata_only && first_events_read) {
          t.events_on_disk += f.count;
          ++t.frames;
          continue;
        }
        if (metadata_only) reader.skip_event_payloads(true), first_events_read = true;
      }
      if (f.kind == FrameKind::Steps && metadata_only) {
        ++t.frames;  // M-steps are left on disk too
        continue;
      }
      switch (f.kind) {
        case FrameKind::Events: {
          const auto before = t.events.size();
          if (metadata_only) {  // the first record alone: the timeline's anchor
            decode_events(f.payload, t.events, 1);
            t.events_on_disk += f.count - (t.events.size() - before);
            t.event_thread.resize(t.events.size(), f.thread);
            break;
          }
          decode_events(f.payload, t.events, static_cast<std::size_t>(-1), marks);
          t.event_thread.resize(t.events.size(), f.thread);
          if (t.events.size() - before != f.count) throw TraceError("event count differs from its header");
          break;
        }
        // Every frame's header count is checked against what its payload decodes to: the
        // header lies outside the zstd checksum, so this is what catches a flipped count.
        case FrameKind::Steps: {
          if (!with_steps) break;  // checked by the file reader, not kept
          const auto first = t.steps.size();
          decode_counted(f, t.steps, [&t](std::span<const std::uint8_t> p, std::vector<StepRecord>& out) {
            decode_steps(p, out, t.header.version);
          });
          // A communicator a step names is defined before it (the writers put definitions first).
          for (auto i = first; i < t.steps.size(); ++i) {
            const std::int32_t c = t.steps[i].whole_comm;
            if (c != kNoWholeComm && (static_cast<std::size_t>(c) >= comm_defined.size() || !comm_defined[static_cast<std::size_t>(c)]))
              throw TraceError(fmt::format("step {} names communicator {}, which no earlier frame defines", t.steps[i].index, c));
          }
          break;
        }
        case FrameKind::Comms: {
          const auto world = static_cast<std::uint64_t>(std::max(t.header.world_size, 0));
          const auto defined_before = t.comms.size();
          decode_counted(f, t.comms, [world](std::span<const std::uint8_t> p, std::vector<CommDef>& out) {
            decode_comms(p, out, world);
          });
          for (auto i = defined_before; i < t.comms.size(); ++i) {
            if (t.comms[i].id >= comm_defined.size()) comm_defined.resize(t.comms[i].id + std::size_t{1}, false);
            comm_defined[t.comms[i].id] = true;
          }
          break;
        }
        case FrameKind::Callsites: decode_counted(f, t.callsites, decode_callsites); break;
        case FrameKind::Clock: decode_counted(f, t.clocks, decode_clocks); break;
        case FrameKind::End:
          if (f.count != 0 || !f.payload.empty()) throw TraceError("End frame with a payload");
          break;
        default:
          // Version 1 has exactly these kinds; another is a damaged header, not a revision.
          throw TraceError(fmt::format("unknown frame kind {}", static_cast<int>(f.kind)));
      }
    } catch (const TraceError& e) {
      // Checksummed but undecodable: a writer bug or a crafted file. Keep what came before.
      t.events.resize(t.event_thread.size());
      t.end = TraceEnd::Corrupt;
      t.problem = fmt::format("{}: frame {} at byte {}: {}", path, f.index, f.offset, e.what());
      t.frames = f.index;
      return done();
    }
    ++t.frames;
  }
  t.end = reader.end_state();
  t.problem = reader.problem();
  return done();
}

}  // namespace

RankTrace read_rank_trace(const std::string& path, bool with_steps) { return read_rank(path, false, with_steps); }

RankTrace read_rank_metadata(const std::string& path) { return read_rank(path, true, false); }

RankEventReader::RankEventReader(const std::string& path, std::size_t chunk, bool read_ahead)
    : path_(path), chunk_(std::max<std::size_t>(chunk, 1)) {
  if (read_ahead)
    ahead_ = std::make_unique<ReadAhead>([this](std::vector<Event>& out) { return read_here(out); },
                                         std::max<std::size_t>(chunk_, 16384));
}

const std::string& RankEventReader::problem() const {
  return !problem_.empty() || !reader_ ? problem_ : reader_->problem();
}

TraceEnd RankEventReader::end() const {
  if (!problem_.empty()) return TraceEnd::Corrupt;
  return reader_ ? reader_->end_state() : TraceEnd::Unfinished;
}

bool RankEventReader::read(std::vector<Event>& out) { return ahead_ ? ahead_->take(out) : read_here(out); }

bool RankEventReader::read_here(std::vector<Event>& out) {
  const auto before = out.size();
  // The file is opened (its header read and checked) at the first read, not when the reader is
  // made: readers for every rank may be made at once, and opening twice is what a rank of a large
  // run cost most (throws TraceError as read_rank_trace does).
  if (!reader_) {
    reader_.emplace(path_);
    std::string().swap(path_);  // the reader has it: a copy a rank is megabytes at scale
    // The Steps frames are checked too, though not used (their payloads not kept: a collective's
    // step lists every member): a damaged one ends the rank here as it does for read_rank_trace,
    // so that every reader of a file agrees on where it breaks off.
    reader_->check_step_payloads_only(true);
  }
  try {
    while (!decoder_ || decoder_->left() == 0) {
      decoder_.reset();
      if (!problem_.empty() || !reader_->next(frame_)) {
        reader_->close_file();
        return false;
      }
      if (frame_.kind == FrameKind::Steps && marks_steps(reader_->header().version))
        throw TraceError("a Steps frame in a version 4 trace");
      if (frame_.kind != FrameKind::Events) continue;
      decoder_.emplace(frame_.payload);
      if (decoder_->size() != frame_.count) throw TraceError("event count differs from its header");
      read_to_next_events();
      reader_->close_file();  // opened again for the next frame: no descriptor held per rank meanwhile
    }
    decoder_->decode(out, chunk_);
  } catch (const TraceError& e) {
    out.resize(before);
    decoder_.reset();
    problem_ = fmt::format("{}: frame {} at byte {}: {}", reader_->path(), frame_.index, frame_.offset, e.what());
    return false;
  }
  return true;
}

// While the file is open, the frames up to the next Events frame (M-steps, the closing clock
// sample, End) are read now rather than after this frame's records: a rank of a large run has one
// Events frame, and reading its tail later meant opening the file once more. A damaged frame met
// here stops the reader as it would later; read() says so once this frame's records are handed out.
void RankEventReader::read_to_next_events() {
  Frame other;
  for (;;) {
    const std::optional<std::uint8_t> kind = reader_->peek_kind();
    if (kind == static_cast<std::uint8_t>(FrameKind::Events)) return;
    // Left to read() (which refuses it) once this frame's records are handed out.
    if (kind == static_cast<std::uint8_t>(FrameKind::Steps) && marks_steps(reader_->header().version)) return;
    if (!reader_->next(other)) return;
  }
}

}  // namespace mstep
