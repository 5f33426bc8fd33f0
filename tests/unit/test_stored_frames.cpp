// Frames stored uncompressed by the recorder (MSTEP_COMPRESS=later) and compressed after the run:
// any zstd decoder reads them, checksum included, and compressing them afterwards gives the bytes
// that compressing them at once gives, damaged and partial frames left where they were.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include <zstd.h>
#include <zstd_errors.h>

#include "format/codec.hpp"
#include "format/rank_trace.hpp"
#include "format/trace_compact.hpp"
#include "format/trace_file.hpp"
#include "format/zstd_stored.hpp"

using namespace mstep;
namespace fs = std::filesystem;

namespace {

std::vector<std::uint8_t> noise(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint8_t> v(n);
  for (auto& b : v) b = static_cast<std::uint8_t>(rng() % 7);  // compressible, not trivially
  return v;
}

std::vector<std::uint8_t> stored(std::span<const std::uint8_t> content) {
  std::vector<std::uint8_t> out(stored_frame_bound(content.size()));
  out.resize(write_stored_frame(content, out.data()));
  return out;
}

std::vector<char> bytes_of(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

std::vector<Event> exchange(std::size_t n) {
  std::vector<Event> v;
  std::uint64_t t = 5'000'000;
  for (std::size_t i = 0; i < n; ++i) {
    Event e;
    e.op = i % 2 ? Op::Recv : Op::Send;
    e.t_enter = t += 300 + (i * 7919) % 61;
    e.t_exit = t += 450 + (i * 104729) % 83;
    e.peer = 1;
    e.tag = static_cast<std::int32_t>(i % 5);
    e.callsite = i % 2 ? 2 : 1;
    (i % 2 ? e.recv_bytes : e.send_bytes) = 8 + (i % 3) * 1024;
    v.push_back(e);
  }
  return v;
}

FileHeader header() {
  FileHeader h;
  h.version = 3;  // records without M-step marks, as write_events_frame writes them
  h.rank = 0;
  h.world_size = 2;
  h.pid = 77;
  h.clock_kind = 0;
  h.ticks_per_second = 2.5e9;
  return h;
}

// Three events frames and an End frame, stored or compressed as they are written.
void write_file(const std::string& path, const std::vector<Event>& events, bool store) {
  TraceFileWriter w(path, header());
  w.store_uncompressed(store);
  for (std::size_t k = 0; k < 3; ++k) {
    std::vector<std::uint8_t> p;
    const auto part = std::span(events).subspan(k * events.size() / 3, events.size() / 3);
    encode_events(part, p);
    w.write_frame(FrameKind::Events, 0, static_cast<std::uint32_t>(part.size()), p);
  }
  w.write_frame(FrameKind::End, 0, 0, {});
}

fs::path temp_file(const std::string& name) {
  auto dir = fs::temp_directory_path() / "mstep-unit";
  fs::create_directories(dir);
  return dir / name;
}

}  // namespace

TEST_CASE("a stored zstd frame decodes with zstd's own decoder, at every block boundary", "[stored]") {
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{131071}, std::size_t{131072},
                              std::size_t{131073}, std::size_t{300000}}) {
    CAPTURE(n);
    const auto content = noise(n, static_cast<unsigned>(n));
    const auto frame = stored(content);
    // Header 10 bytes, 3 a block of up to 128 KiB (one block when empty), 4 of checksum.
    CHECK(frame.size() == 10 + 3 * std::max<std::size_t>(1, (n + 131071) / 131072) + n + 4);
    CHECK(is_stored_frame(frame));
    CHECK(ZSTD_getFrameContentSize(frame.data(), frame.size()) == n);
    std::vector<std::uint8_t> back(n + 1);
    const std::size_t got = ZSTD_decompress(back.data(), back.size(), frame.data(), frame.size());
    REQUIRE_FALSE(ZSTD_isError(got));
    back.resize(got);
    CHECK(back == content);
  }
}

TEST_CASE("a stored frame's checksum is checked, and compressed frames are not taken for stored ones", "[stored]") {
  const auto content = noise(5000, 3);
  auto frame = stored(content);
  frame[200] ^= 0x40;  // inside the content: only the checksum can tell
  CHECK(is_stored_frame(frame));
  std::vector<std::uint8_t> back(content.size());
  const std::size_t got = ZSTD_decompress(back.data(), back.size(), frame.data(), frame.size());
  REQUIRE(ZSTD_isError(got));
  CHECK(ZSTD_getErrorCode(got) == ZSTD_error_checksum_wrong);

  std::vector<std::uint8_t> packed(ZSTD_compressBound(content.size()));
  packed.resize(ZSTD_compress(packed.data(), packed.size(), content.data(), content.size(), 1));
  CHECK_FALSE(is_stored_frame(packed));
  auto cut = stored(content);
  cut.pop_back();
  CHECK_FALSE(is_stored_frame(cut));
}

TEST_CASE("compressing a stored rank file after the run gives the file compressed at once", "[stored][trace-file]") {
  const auto events = exchange(30000);
  const auto now = temp_file("compress-now.mst").string();
  const auto later = temp_file("compress-later.mst").string();
  write_file(now, events, false);
  write_file(later, events, true);
  CHECK(fs::file_size(later) > 2 * fs::file_size(now));
  const RankTrace before = read_rank_trace(later);
  CHECK(before.end == TraceEnd::Complete);
  CHECK(before.events == events);

  const CompressOutcome o = compress_stored_frames(later);
  CHECK(o.frames == 4);  // three events frames and the End frame
  CHECK(o.bytes_after == fs::file_size(now));
  CHECK(bytes_of(later) == bytes_of(now));
  CHECK_FALSE(fs::exists(later + ".compressing"));
  // Nothing left to do: the file is only read.
  const auto stamp = fs::last_write_time(later);
  const CompressOutcome again = compress_stored_frames(later);
  CHECK(again.frames == 0);
  CHECK(again.bytes_after == again.bytes_before);
  CHECK(fs::last_write_time(later) == stamp);
}

TEST_CASE("compressing after the run leaves a partial or damaged frame where it was", "[stored][trace-file][damage]") {
  const auto events = exchange(30000);
  const auto path = temp_file("compress-cut.mst").string();

  // A rank killed inside its last write: the partial frame stays, and the verdict with it.
  write_file(path, events, true);
  fs::resize_file(path, fs::file_size(path) - 5000);  // the End frame and the third events frame's end
  const RankTrace cut = read_rank_trace(path);
  REQUIRE(cut.end == TraceEnd::Truncated);
  CHECK(compress_stored_frames(path).frames == 2);
  const RankTrace cut_after = read_rank_trace(path);
  CHECK(cut_after.end == TraceEnd::Truncated);
  CHECK(cut_after.events == cut.events);
  CHECK(cut_after.events.size() == 20000);

  // A flipped byte inside the second frame's payload: copied as it is, found by the reader there.
  write_file(path, events, true);
  const auto size = fs::file_size(path);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    const auto at = static_cast<std::streamoff>(size / 2);
    f.seekg(at);
    char c = 0;
    f.read(&c, 1);
    c = static_cast<char>(c ^ 0x21);
    f.seekp(at);
    f.write(&c, 1);
  }
  const RankTrace bad = read_rank_trace(path);
  REQUIRE(bad.end == TraceEnd::Corrupt);
  CHECK(bad.events.size() == 10000);
  // The first frame, and the two after the damage (which no reader reaches, before or after).
  CHECK(compress_stored_frames(path).frames == 3);
  const RankTrace bad_after = read_rank_trace(path);
  CHECK(bad_after.end == TraceEnd::Corrupt);
  CHECK(bad_after.events == bad.events);
}

TEST_CASE("a rank file that cannot be read is a one-line error naming it", "[stored]") {
  const auto missing = temp_file("no-such-rank.mst").string();
  fs::remove(missing);
  CHECK_THROWS_WITH(compress_stored_frames(missing), Catch::Contains("no-such-rank.mst: cannot open"));
}
