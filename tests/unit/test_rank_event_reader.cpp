// RankEventReader reads ahead to the next Events frame while its file is open, and its file reader
// keeps the last block read per thread (format/trace_file.cpp): readers of many ranks taken in
// turn, a record at a time, must still each get their own records, their M-step count and, for a
// file damaged after its last Events frame, every record and then the damage.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <cstdlib>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "format/rank_trace.hpp"
#include "model/trace/synthetic.hpp"
#include "trace_builders.hpp"

using namespace mstep;
namespace fs = std::filesystem;

namespace {

// Flips one byte of `file` at `at`.
void flip(const std::string& file, std::uint64_t at) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(at));
  const char c = static_cast<char>(f.get());
  f.seekp(static_cast<std::streamoff>(at));
  f.put(static_cast<char>(c ^ 0x5a));
}

}  // namespace

TEST_CASE("readers of many rank files taken in turn a record at a time get their own records", "[stream][reader]") {
  const fs::path dir = fs::temp_directory_path() / "mstep-unit" / "event-reader-interleaved";
  fs::remove_all(dir);
  fs::create_directories(dir);
  // Small frames: each file has several Events frames with Steps frames between them, so that
  // the reader goes back to its file after reading ahead.
  constexpr int kRanks = 40;
  const auto traces = model::synthetic_trace(kRanks, model::Pattern::Random, 40 * 300, 3);
  std::vector<std::string> files;
  for (int r = 0; r < kRanks; ++r) {
    files.push_back((dir / fmt::format("rank-{:05}.mst", r)).string());
    write_rank_trace(files.back(), traces[static_cast<std::size_t>(r)], 37);
  }
  std::vector<std::unique_ptr<RankEventReader>> readers;
  for (const auto& f : files) readers.push_back(std::make_unique<RankEventReader>(f, 5));
  std::vector<std::vector<Event>> got(kRanks);
  for (bool any = true; any;) {
    any = false;
    for (int r = 0; r < kRanks; ++r) {
      auto& g = got[static_cast<std::size_t>(r)];
      if (readers[static_cast<std::size_t>(r)] && readers[static_cast<std::size_t>(r)]->read(g)) {
        any = true;
        continue;
      }
      if (!readers[static_cast<std::size_t>(r)]) continue;
      const RankTrace whole = read_rank_trace(files[static_cast<std::size_t>(r)]);
      CHECK(readers[static_cast<std::size_t>(r)]->problem().empty());
      CHECK(readers[static_cast<std::size_t>(r)]->end() == TraceEnd::Complete);
      CHECK(g.size() == whole.events.size());
      CHECK(g == whole.events);
      readers[static_cast<std::size_t>(r)].reset();  // a new reader may come where this one was
    }
  }
  fs::remove_all(dir);
}

TEST_CASE("a frame damaged after the last Events frame ends the reader once its records are out", "[stream][reader][damage]") {
  const fs::path dir = fs::temp_directory_path() / "mstep-unit" / "event-reader-damaged-tail";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto traces = model::synthetic_trace(2, model::Pattern::PingPong, 2000, 1);
  const std::string file = (dir / "rank-00000.mst").string();
  write_rank_trace(file, traces[0], 100000);  // one Events frame
  std::uint64_t at = 0;
  {
    TraceFileReader scan(file);
    Frame f;
    bool after_events = false;
    while (scan.next(f)) {
      if (f.kind == FrameKind::Events) after_events = true;
      else if (after_events && f.kind == FrameKind::Clock) at = f.offset + kFrameHeaderSize + 4;
    }
  }
  REQUIRE(at > 0);
  flip(file, at);
  RankEventReader reader(file, 64);
  std::vector<Event> got;
  while (reader.read(got)) {
  }
  CHECK(got == traces[0].events);
  CHECK(reader.end() == TraceEnd::Corrupt);
  CHECK(reader.problem().find("rank-00000.mst: frame") != std::string::npos);
  fs::remove_all(dir);
}

// Large Steps frames (trace format 3 and older) found whole are not decompressed again
// (format/checked_frames.hpp): the same file read twice reads the same, and a byte changed in such
// a frame is still found.
TEST_CASE("a Steps frame found whole once is trusted only with the same bytes", "[stream][reader][damage]") {
  const fs::path dir = fs::temp_directory_path() / "mstep-unit" / "event-reader-steps-memo";
  fs::remove_all(dir);
  fs::create_directories(dir);
  // A ring of 2 ranks, 10 000 records each in one Events frame: rank 0's Steps frame before it
  // holds thousands of steps (tens of kilobytes).
  const auto traces = model::synthetic_trace(2, model::Pattern::Ring, 2 * 10000, 1);
  const std::string file = (dir / "rank-00000.mst").string();
  test::write_v3_trace(file, traces[0]);
  std::uint64_t at = 0;
  {
    TraceFileReader scan(file);
    Frame f;
    while (scan.next(f))
      if (f.kind == FrameKind::Steps && f.payload.size() >= 4096) at = f.offset + kFrameHeaderSize + 40;
  }
  REQUIRE(at > 0);
  const auto read_all = [&](TraceEnd& end) {
    RankEventReader reader(file, 16);
    std::vector<Event> got;
    while (reader.read(got)) {
    }
    end = reader.end();
    return got;
  };
  for (int i = 0; i < 2; ++i) {
    TraceEnd end{};
    CHECK(read_all(end) == traces[0].events);
    CHECK(end == TraceEnd::Complete);
  }
  flip(file, at);
  const RankTrace whole = read_rank_trace(file);
  REQUIRE(whole.end == TraceEnd::Corrupt);
  TraceEnd end{};
  CHECK(read_all(end).size() == whole.events.size());
  CHECK(end == TraceEnd::Corrupt);
  fs::remove_all(dir);
}

// Read ahead on a thread of the reader's own (format/read_ahead.hpp), the reader must hand out the
// same records in the same parts, stop where it would have stopped, and say the same of the file.
namespace {

struct ReadOut {
  std::vector<std::size_t> parts;  // records each read() added
  std::vector<Event> records;
  TraceEnd end{};
  std::string problem;
};

ReadOut read_parts(const std::string& file, std::size_t chunk, bool ahead) {
  RankEventReader reader(file, chunk, ahead);
  ReadOut out;
  std::vector<Event> part;
  while (reader.read(part)) {
    out.parts.push_back(part.size());
    out.records.insert(out.records.end(), part.begin(), part.end());
    part.clear();
  }
  CHECK(part.empty());
  out.end = reader.end();
  out.problem = reader.problem();
  return out;
}

}  // namespace

TEST_CASE("reading ahead hands out the same parts and stops at the same damage", "[stream][reader][damage]") {
  const fs::path dir = fs::temp_directory_path() / "mstep-unit" / "event-reader-ahead";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto traces = model::synthetic_trace(2, model::Pattern::Ring, 2 * 30000, 1);
  const std::string file = (dir / "rank-00000.mst").string();
  write_rank_trace(file, traces[0], 1000);  // thirty Events frames
  for (const std::size_t chunk : {std::size_t{7}, std::size_t{256}, std::size_t{5000}}) {
    const ReadOut plain = read_parts(file, chunk, false), ahead = read_parts(file, chunk, true);
    CHECK(plain.records == traces[0].events);
    CHECK(ahead.parts == plain.parts);
    CHECK(ahead.records == plain.records);
    CHECK(ahead.end == TraceEnd::Complete);
  }
  // A byte flipped in the payload of the twelfth Events frame: the frames before it are handed
  // out, then the reader stops with the same words.
  std::uint64_t at = 0;
  {
    TraceFileReader scan(file);
    Frame f;
    int events = 0;
    while (scan.next(f))
      if (f.kind == FrameKind::Events && ++events == 12) at = f.offset + kFrameHeaderSize + 20;
  }
  REQUIRE(at > 0);
  flip(file, at);
  const ReadOut plain = read_parts(file, 256, false), ahead = read_parts(file, 256, true);
  CHECK(plain.end == TraceEnd::Corrupt);
  CHECK(plain.records.size() == 11 * 1000);
  CHECK(ahead.parts == plain.parts);
  CHECK(ahead.records == plain.records);
  CHECK(ahead.end == plain.end);
  CHECK(ahead.problem == plain.problem);
  // No file: the first read() throws, as it does on the reader's own thread.
  RankEventReader missing((dir / "rank-00001.mst").string(), 256, true);
  std::vector<Event> none;
  CHECK_THROWS_AS(missing.read(none), TraceError);
  CHECK_FALSE(missing.read(none));  // and then it is over
  fs::remove_all(dir);
}

TEST_CASE("a reader reading ahead can be dropped at any time", "[stream][reader]") {
  const fs::path dir = fs::temp_directory_path() / "mstep-unit" / "event-reader-ahead-dropped";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto traces = model::synthetic_trace(2, model::Pattern::PingPong, 2 * 100000, 1);
  const std::string file = (dir / "rank-00000.mst").string();
  write_rank_trace(file, traces[0], 4096);
  for (int taken = 0; taken < 4; ++taken) {
    // Its thread may be filling the queue, waiting for room, or not started: the destructor stops
    // it in every case (a hang here is the defect).
    RankEventReader reader(file, 64, true);
    std::vector<Event> part;
    for (int i = 0; i < taken; ++i) CHECK(reader.read(part));
    CHECK(part.size() == static_cast<std::size_t>(taken) * 64);
  }
  fs::remove_all(dir);
}

TEST_CASE("MSTEP_READ_AHEAD=0 turns reading ahead off", "[stream][reader]") {
  const char* before = std::getenv("MSTEP_READ_AHEAD");
  const std::string saved = before ? before : "";
  constexpr std::uint64_t kMiB = 1 << 20;
  ::setenv("MSTEP_READ_AHEAD", "0", 1);
  CHECK_FALSE(read_ahead_pays(2, kMiB));
  ::unsetenv("MSTEP_READ_AHEAD");
  CHECK_FALSE(read_ahead_pays(0, kMiB));
  CHECK_FALSE(read_ahead_pays(9, kMiB));     // a thread a rank: only for few ranks
  CHECK_FALSE(read_ahead_pays(2, kMiB - 1));  // nothing to overlap in a small file
  CHECK(read_ahead_pays(2, kMiB) == (std::thread::hardware_concurrency() >= 2));
  if (before) ::setenv("MSTEP_READ_AHEAD", saved.c_str(), 1);
}
