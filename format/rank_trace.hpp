// One rank's whole trace in memory: what `mstep stats`, `mstep dump` and the tests read.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "format/codec.hpp"
#include "format/pack_index.hpp"
#include "format/read_ahead.hpp"
#include "format/trace_file.hpp"
#include "format/trace_format.hpp"

namespace mstep {

struct RankTrace {
  std::string path;
  FileHeader header;
  std::vector<Event> events;          // in file order; per thread in call order
  std::vector<std::uint16_t> event_thread;  // thread of each event (parallel to events)
  // The M-steps: a version 4 trace's derived from its records (format/rank_steps.hpp), whose marks
  // are checked and taken off; an older one's as its Steps frames recorded them.
  std::vector<StepRecord> steps;
  std::vector<CommDef> comms;
  std::vector<CallsiteDef> callsites;
  std::vector<ClockSync> clocks;
  std::uint64_t file_bytes = 0;
  std::size_t frames = 0;
  std::uint64_t events_on_disk = 0;   // read_rank_metadata: the records left unread in the file
  bool several_threads = false;       // frames of more than one thread (also of those left unread)
  TraceEnd end = TraceEnd::Unfinished;
  std::string problem;  // one line when end is Truncated or Corrupt
};

// Reads every whole frame. Throws TraceError only when nothing can be read (no file, not a trace,
// another version); a damaged tail is reported in `end` and `problem`, keeping what came before.
// `with_steps` false: `steps` left empty (the models derive their own from the records): an older
// version's Steps frames are then only checked, a version 4 file's steps not derived.
RankTrace read_rank_trace(const std::string& path, bool with_steps = true);

// Everything but the events and the M-steps: definitions and clock samples, and of the events
// only the first record (the timeline's anchor); the others are counted in events_on_disk, and the
// Events and Steps frames after the first Events frame are skipped unread. For readers that take
// the events a frame at a time (RankEventReader) and need the rest first.
RankTrace read_rank_metadata(const std::string& path);

// Writes `t` as a rank file in the order the recorder writes one: definitions, the MPI_Init clock
// sample, the events in frames of `frame_events`, each record that closes an M-step marked (the
// recorder's own StepMarker; marks in `t` are ignored), the MPI_Finalize sample, End. For synthetic traces (mstep synth) and the tests.
// Throws TraceError when a write fails. `append`: after what `path` holds (a pack file).
void write_rank_trace(const std::string& path, const RankTrace& t, std::size_t frame_events = 65536,
                      bool append = false);
// Appends `t` to pack file `pack` of the directory `dir` (format/pack_index.hpp) where that file
// ends now, and says where its stream is.
PackEntry append_rank_to_pack(const std::string& dir, std::uint32_t pack, const RankTrace& t,
                              std::size_t frame_events = 65536);

// One rank's events, at most `chunk` records at a time (decoded from the Events frame being read:
// a reader holds one frame's compressed bytes, not its records), the other frames skipped.
class RankEventReader {
 public:
  // Opens nothing yet: read() does, and throws TraceError then as read_rank_trace would.
  // `read_ahead`: the frames are read and decoded on a thread of the reader's own, up to 16 Ki
  // records ahead of read() (read_ahead_pays() says when that is worth a thread); read() hands
  // out the same records in the same parts, and fails where it would have.
  explicit RankEventReader(const std::string& path, std::size_t chunk = 4096, bool read_ahead = false);
  RankEventReader(const RankEventReader&) = delete;
  RankEventReader& operator=(const RankEventReader&) = delete;
  // Appends the next records to `out`; false at the end of the file or at the first damaged frame
  // (problem() says which; the records before it were all handed out).
  bool read(std::vector<Event>& out);
  // The three below: once read() returned false (and, without read-ahead, before too).
  const std::string& problem() const;
  // Once read() returned false: how the file ended (Complete: read to its End frame).
  TraceEnd end() const;

 private:
  bool read_here(std::vector<Event>& out);  // read() on the calling thread
  void read_to_next_events();
  std::string path_;                       // until the first read() opens it
  std::optional<TraceFileReader> reader_;  // from the first read()
  Frame frame_;
  std::optional<EventFrameDecoder> decoder_;  // of frame_'s payload
  std::size_t chunk_;
  std::string problem_;  // a frame whose records could not be decoded
  std::unique_ptr<ReadAhead> ahead_;  // read_here() on a thread of its own
};

}  // namespace mstep
