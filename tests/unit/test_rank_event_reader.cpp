// RankEventReader reads ahead to the next Events frame while its file is open, and its file reader
// keeps the last block read per thread (format/trace_file.cpp): readers of many ranks taken in
// turn, a record at a time, must still each get their own records, their M-step count and, for a
// file damaged after its last Events frame, every record and then the damage.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <memory>

#include <fmt/format.h>

#include "format/rank_trace.hpp"
#include "model/trace/synthetic.hpp"

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
      CHECK(readers[static_cast<std::size_t>(r)]->steps() == whole.steps.size());
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

// Large Steps frames found whole are not decompressed again (format/checked_frames.hpp): the
// same file read twice reads the same, and a byte changed in such a frame is still found.
TEST_CASE("a Steps frame found whole once is trusted only with the same bytes", "[stream][reader][damage]") {
  const fs::path dir = fs::temp_directory_path() / "mstep-unit" / "event-reader-steps-memo";
  fs::remove_all(dir);
  fs::create_directories(dir);
  // A ring of 2 ranks, 10 000 records each in one Events frame: rank 0's Steps frame before it
  // holds thousands of steps (tens of kilobytes).
  const auto traces = model::synthetic_trace(2, model::Pattern::Ring, 2 * 10000, 1);
  const std::string file = (dir / "rank-00000.mst").string();
  write_rank_trace(file, traces[0]);
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
