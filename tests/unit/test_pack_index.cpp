// format/pack_index.hpp and pack locators (format/trace_file.hpp): many ranks' streams in one file.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <memory>

#include "format/pack_index.hpp"
#include "format/rank_trace.hpp"
#include "format/trace_file.hpp"
#include "model/trace/trace_dir.hpp"

using namespace mstep;
namespace fs = std::filesystem;

TEST_CASE("pack locators: a rank's stream inside a pack file, and what is a plain path", "[format]") {
  std::string file;
  std::uint64_t offset = 0, length = 0;
  REQUIRE(parse_pack_locator(pack_locator("t/ranks-000001.msp", 120, 4096), file, offset, length));
  CHECK(file == "t/ranks-000001.msp");
  CHECK(offset == 120);
  CHECK(length == 4096);
  CHECK(pack_file_name(3) == "ranks-000003.msp");
  for (const char* plain : {"t/rank-00001.mst", "t/a@1+2", "t/x.msp", "t/x.msp@1+", "t/x.msp@+1", "t/x.msp@1+2x",
                            "t/x.msp@a+1", "x.msp@1+99999999999999999999"})
    CHECK_FALSE(parse_pack_locator(plain, file, offset, length));
}

TEST_CASE("pack index: written and read back, every damage is one line", "[format]") {
  const fs::path dir = fs::temp_directory_path() / "mstep-unit-pack";
  fs::create_directories(dir);
  const std::string path = (dir / kPackIndexName).string();
  const std::vector<PackEntry> entries{{0, 0, 300}, {0, 300, 5000000000ull}, {1, 0, 17}};
  write_pack_index(path, entries);
  CHECK(fs::file_size(path) == 16 + 3 * 20);
  CHECK(read_pack_index(path, 3) == entries);
  CHECK_THROWS_WITH(read_pack_index(path, 4), path + ": 3 ranks, meta.json says 4");
  fs::resize_file(path, 16 + 2 * 20 + 7);
  CHECK_THROWS_WITH(read_pack_index(path, 3), path + ": cut short: 63 bytes for 3 ranks");
  std::ofstream(path) << "MSTPACK0and more";
  CHECK_THROWS_WITH(read_pack_index(path, 3), path + ": not a pack index");
  fs::remove(path);
  CHECK_THROWS_WITH(read_pack_index(path, 3), path + ": missing or unreadable (a packed trace needs it)");
  fs::remove_all(dir);
}

namespace {
// Rank r of `world`: MPI_Init and then barriers, `events` records in all, 1000 ticks apart.
RankTrace barrier_rank(int r, int world, int events) {
  RankTrace t;
  t.header.rank = r;
  t.header.world_size = world;
  t.header.ticks_per_second = 1e9;
  t.comms.push_back(CommDef{0, false, MemberList::identity(static_cast<std::size_t>(world))});
  for (int i = 0; i < events; ++i) {
    Event e;
    e.op = i == 0 ? Op::Init : Op::Barrier;
    e.t_enter = 1000u * static_cast<unsigned>(i);
    e.t_exit = e.t_enter + 10;
    t.events.push_back(e);
  }
  t.event_thread.assign(t.events.size(), 0);
  return t;
}
}  // namespace

TEST_CASE("pack files: two ranks' streams appended to one file read as their own files", "[format]") {
  const fs::path dir = fs::temp_directory_path() / "mstep-unit-pack2";
  fs::create_directories(dir);
  const std::string pack = (dir / pack_file_name(0)).string();
  fs::remove(pack);
  std::vector<std::string> located;
  for (int r = 0; r < 2; ++r) {
    const PackEntry e = append_rank_to_pack(dir.string(), 0, barrier_rank(r, 2, 3 + r), 2);
    CHECK(e.offset == (r == 0 ? 0 : fs::file_size(pack) - e.length));  // after rank 0's stream
    located.push_back(pack_locator(pack, e.offset, e.length));
  }
  for (int r = 0; r < 2; ++r) {
    const RankTrace t = read_rank_trace(located[static_cast<std::size_t>(r)]);
    CHECK(t.header.rank == r);
    CHECK(t.events.size() == static_cast<std::size_t>(3 + r));
    CHECK(t.end == TraceEnd::Complete);  // read to its End frame, not into the next rank's stream
  }
  // The file cut inside rank 1's stream: rank 1 is cut short, rank 0 untouched.
  fs::resize_file(pack, fs::file_size(pack) - 5);
  CHECK(read_rank_trace(located[0]).events.size() == 3);
  const RankTrace cut = read_rank_trace(located[1]);
  CHECK(cut.end == TraceEnd::Truncated);
  CHECK(cut.problem.rfind(located[1] + ": frame ", 0) == 0);
  fs::remove_all(dir);
}

namespace {
std::size_t open_descriptors() {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator("/proc/self/fd"), fs::directory_iterator{}));
}
}  // namespace

TEST_CASE("pack files: the readers of a pack's ranks share one descriptor, and read what is there now", "[format]") {
  const fs::path dir = fs::temp_directory_path() / "mstep-unit-pack3";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string pack = (dir / pack_file_name(0)).string();
  const auto write_pack = [&](int extra) {
    fs::remove(pack);
    std::vector<std::string> located;
    for (int r = 0; r < 3; ++r) {
      const PackEntry e = append_rank_to_pack(dir.string(), 0, barrier_rank(r, 3, 3 + r + extra), 3);
      located.push_back(pack_locator(pack, e.offset, e.length));
    }
    return located;
  };
  const std::vector<std::string> located = write_pack(0);
  {
    const std::size_t before = open_descriptors();
    std::vector<std::unique_ptr<TraceFileReader>> readers;
    for (const auto& l : located) readers.push_back(std::make_unique<TraceFileReader>(l));
    CHECK(open_descriptors() == before + 1);  // three readers, one descriptor
    for (auto& r : readers) r->close_file();  // a pack's descriptor is kept: reopening it a rank cost more than the rank
    CHECK(open_descriptors() == before + 1);
    for (std::size_t r = 0; r < 3; ++r) CHECK(readers[r]->header().rank == static_cast<std::int32_t>(r));
    readers.clear();
    CHECK(open_descriptors() == before);  // closed with its last reader
    const auto held = keep_pack_open(pack);
    REQUIRE(held != nullptr);
    CHECK(open_descriptors() == before + 1);
    for (std::size_t r = 0; r < 3; ++r) CHECK(read_rank_trace(located[r]).events.size() == 3 + r);
    CHECK(open_descriptors() == before + 1);
  }
  {
    // A loop over the ranks, each read and dropped: the holder keeps their pack open, once.
    const std::size_t before = open_descriptors();
    PackHolder holder;
    for (std::size_t r = 0; r < 3; ++r) {
      holder.hold(located[r]);
      CHECK(read_rank_trace(located[r]).events.size() == 3 + r);
      CHECK(open_descriptors() == before + 1);
    }
    holder.hold((dir / "rank-00000.mst").string());  // a rank file: nothing to hold, the pack kept
    CHECK(open_descriptors() == before + 1);
  }
  // Written again with more events a rank, the same names: read afresh, not from a block read before.
  const std::vector<std::string> again = write_pack(2);
  for (std::size_t r = 0; r < 3; ++r) CHECK(read_rank_trace(again[r]).events.size() == 5 + r);
  // Cut inside rank 1's stream: rank 0 whole, rank 1 cut short, rank 2 not there at all.
  std::uint64_t off = 0, len = 0;
  std::string file;
  REQUIRE(parse_pack_locator(again[1], file, off, len));
  fs::resize_file(pack, off + len / 2);
  CHECK(read_rank_trace(again[0]).end == TraceEnd::Complete);
  CHECK(read_rank_trace(again[1]).end == TraceEnd::Truncated);
  CHECK_THROWS_WITH(read_rank_trace(again[2]), Catch::Matchers::StartsWith(again[2] + ": "));
  CHECK_FALSE(keep_pack_open((dir / "none.msp").string()));
  fs::remove_all(dir);
}

TEST_CASE("meta.json's format version: 1 to 4 read, packed only from version 3", "[format]") {
  // A one-rank trace, its meta.json rewritten with each version and with and without "packed".
  const fs::path dir = fs::temp_directory_path() / "mstep-unit-pack-meta";
  fs::remove_all(dir);
  fs::create_directories(dir);
  RankTrace t;
  t.header.world_size = 1;
  t.header.ticks_per_second = 1e9;
  t.comms.push_back(CommDef{0, false, MemberList::identity(1)});
  Event e;
  e.op = Op::Init;
  t.events.push_back(e);
  t.event_thread.assign(1, 0);
  write_rank_trace((dir / rank_file_name(0)).string(), t);
  const auto with_meta = [&](int version, bool packed) {
    std::ofstream(dir / kMetaFileName) << "{\"format_version\": " << version << ", \"ranks\": 1, \"complete\": true"
                                       << (packed ? ", \"packed\": {\"ranks_per_file\": 1}" : "") << "}";
    return load_trace_dir(dir.string());
  };
  const std::string meta = (dir / kMetaFileName).string();
  for (const int v : {1, 2, 3, 4}) {
    INFO("version " << v);
    CHECK(with_meta(v, false).ok());  // a directory of rank files in every version
  }
  CHECK(with_meta(5, false).problems.at(0) == meta + ": format version 5, this mstep reads versions 1 to 4");
  const TraceDir old_packed = with_meta(2, true);
  CHECK(std::find(old_packed.problems.begin(), old_packed.problems.end(),
                  meta + ": \"packed\" needs format version 3 or later and {\"ranks_per_file\": N} with N > 0") !=
        old_packed.problems.end());
  fs::remove_all(dir);
}
