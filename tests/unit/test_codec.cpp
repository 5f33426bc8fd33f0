// The trace codec and files: every record kind survives a round trip, and damaged files are
// reported in one line without losing the frames before the damage.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "format/codec.hpp"
#include "format/rank_steps.hpp"
#include "format/rank_trace.hpp"
#include "format/trace_file.hpp"

using namespace mstep;
namespace fs = std::filesystem;

namespace {

std::vector<Event> ping_pong_events(std::size_t n) {
  std::vector<Event> v;
  std::mt19937_64 rng(42);
  std::uint64_t t = 1'000'000'000'000ull;
  for (std::size_t i = 0; i < n; ++i) {
    Event e;
    e.op = i % 2 ? Op::Recv : Op::Send;
    t += 300 + rng() % 50;
    e.t_enter = t;
    t += 400 + rng() % 80;
    e.t_exit = t;
    e.peer = 1;
    e.tag = static_cast<std::int32_t>(i % 7);
    e.callsite = i % 2 ? 2 : 1;
    (i % 2 ? e.recv_bytes : e.send_bytes) = 8;
    v.push_back(e);
  }
  return v;
}

// One Events frame of `records` (thread `thread`), written by hand as the recorder encodes them.
void write_events_frame(TraceFileWriter& w, std::span<const Event> records, std::uint16_t thread = 0) {
  std::vector<std::uint8_t> p;
  encode_events(records, p);
  w.write_frame(FrameKind::Events, thread, static_cast<std::uint32_t>(records.size()), p);
}

fs::path temp_file(const std::string& name) {
  auto dir = fs::temp_directory_path() / "mstep-unit";
  fs::create_directories(dir);
  return dir / name;
}

// Version 3: the frames these tests write by hand carry records without the M-step marks of
// version 4 (whose files write_rank_trace writes; tested below).
FileHeader header() {
  FileHeader h;
  h.version = 3;
  h.rank = 1;
  h.world_size = 4;
  h.pid = 1234;
  h.clock_kind = 0;
  h.ticks_per_second = 2.5e9;
  return h;
}

}  // namespace

TEST_CASE("varints and zigzag round-trip at their edges", "[codec]") {
  std::vector<std::uint8_t> buf;
  ByteWriter w(buf);
  const std::uint64_t u[] = {0, 1, 127, 128, 16383, 16384, ~0ull};
  const std::int64_t s[] = {0, -1, 1, -64, 64, INT64_MIN, INT64_MAX};
  for (auto v : u) w.varint(v);
  for (auto v : s) w.zigzag(v);
  CHECK(buf.size() == 1 + 1 + 1 + 2 + 2 + 3 + 10 + 1 + 1 + 1 + 1 + 2 + 10 + 10);
  ByteReader r(buf);
  for (auto v : u) CHECK(r.varint() == v);
  for (auto v : s) CHECK(r.zigzag() == v);
  CHECK(r.done());
  CHECK_THROWS_AS(r.u8(), TraceError);
}

TEST_CASE("the unchecked varint reads every length as the checked one does", "[codec]") {
  // Values of every encoded length 1..10 and the boundaries between them, each followed by padding
  // so that the unchecked read (which loads eight bytes at once) has its worst case in bounds.
  std::vector<std::uint64_t> values;
  for (int bits = 0; bits <= 64; ++bits) {
    const std::uint64_t top = bits == 64 ? ~0ull : (1ull << bits);
    values.push_back(top - 1);
    if (bits < 64) values.push_back(top);
    values.push_back(top / 3 + 1);
  }
  std::vector<std::uint8_t> buf;
  ByteWriter w(buf);
  for (auto v : values) w.varint(v);
  for (auto v : values) w.zigzag(static_cast<std::int64_t>(v));
  const std::size_t used = buf.size();
  buf.resize(used + kMaxVarint, 0xff);  // the pad: bytes with the continuation bit set
  ByteReader checked(std::span<const std::uint8_t>(buf.data(), used)), fast(buf);
  for (auto v : values) {
    CHECK(fast.varint_unchecked() == v);
    CHECK(checked.varint() == v);
    CHECK(fast.pos() == checked.pos());
  }
  for (auto v : values) {
    CHECK(fast.zigzag_unchecked() == static_cast<std::int64_t>(v));
    CHECK(fast.pos() == (checked.zigzag(), checked.pos()));
  }
  CHECK(fast.pos() == used);
  // Eleven continuation bytes: too long, as the checked read says.
  ByteReader too_long(std::span<const std::uint8_t>(buf.data() + used, kMaxVarint));
  CHECK_THROWS_AS(too_long.varint_unchecked(), TraceError);
}

TEST_CASE("events round-trip, including continuations and every field", "[codec]") {
  auto events = ping_pong_events(1000);
  Event wait;
  wait.op = Op::Waitall;
  wait.t_enter = events.back().t_exit + 10;
  wait.t_exit = wait.t_enter + 999;
  wait.request = 77;
  wait.flags = kRecvHalf;
  wait.peer = 3;
  wait.recv_bytes = 1 << 20;
  wait.comm = 5;
  wait.callsite = 9;
  events.push_back(wait);
  wait.flags = kRecvHalf | kContinuation;
  wait.request = 76;
  wait.peer = kAnySource;
  events.push_back(wait);
  std::vector<std::uint8_t> payload;
  encode_events(events, payload);
  std::vector<Event> back;
  decode_events(payload, back);
  REQUIRE(back.size() == events.size());
  CHECK(back == events);
  // A part at a time (the streaming readers' way), in parts of 1, 7 and 1000 records.
  for (const std::size_t part : {1u, 7u, 1000u}) {
    EventFrameDecoder d(payload);
    CHECK(d.size() == events.size());
    std::vector<Event> parts;
    while (d.left() > 0) {
      const auto before = d.left();
      d.decode(parts, part);
      CHECK(before - d.left() == std::min(before, part));
    }
    CHECK(parts == events);
  }
}

TEST_CASE("a steady ping-pong encodes to a few bytes per event before compression", "[codec]") {
  const auto events = ping_pong_events(10000);
  std::vector<std::uint8_t> payload;
  encode_events(events, payload);
  // Per event: 3 head bytes, two 2-byte time deltas, and one byte each for the changed tag, the
  // changed call site and the size = 10; the first event's absolute time and the column sizes
  // add a few bytes once.
  CHECK(payload.size() >= 10 * 10000);
  CHECK(payload.size() < 10 * 10000 + 32);
}

TEST_CASE("steps, communicators, call sites and clocks round-trip", "[codec]") {
  std::vector<StepRecord> steps(2);
  steps[0] = {1, 100, 200, 50, 50, 8, 8, 1, 1, {0, 1}};
  steps[1] = {2, 200, 1000, 700, 100, 0, 4096, 0, 2, {3}, 2};  // and all of communicator 2
  std::vector<CommDef> comms = {{0, false, {0, 1, 2, 3}}, {1, false, {3, 1}}, {2, true, {2}}};
  std::vector<CallsiteDef> sites = {{1, {{"/usr/bin/app", 0x1234}}}, {2, {{"", 77}, {"/lib/x.so", 5}}}};
  std::vector<ClockSync> clocks = {{ClockSync::AtInit, 10, -20, 30, 40}, {ClockSync::AtFinalize, 1, 2, -3, 4}};
  std::vector<std::uint8_t> a, b, c, d;
  encode_steps(steps, a);
  encode_comms(comms, b);
  encode_callsites(sites, c);
  encode_clocks(clocks, d);
  std::vector<StepRecord> steps2;
  std::vector<CommDef> comms2;
  std::vector<CallsiteDef> sites2;
  std::vector<ClockSync> clocks2;
  decode_steps(a, steps2);
  decode_comms(b, comms2, 64);
  decode_callsites(c, sites2);
  decode_clocks(d, clocks2);
  CHECK(steps2 == steps);
  CHECK(comms2 == comms);
  CHECK(sites2 == sites);
  CHECK(clocks2 == clocks);
}

TEST_CASE("Steps frames of version 2 (no communicator named) still decode, a named id past 0xffff does not", "[codec]") {
  // Version 2's step, by hand: count 1; columns of 5, 4 and 3 bytes; index 1 (zigzag 2), begin
  // 100 (zigzag 200 = 0xc8 0x01), length 100 (0x64), compute 50, mpi 50; bytes 8 and 8, messages 1
  // and 1; two partners, 0 and 1 (zigzag 0 and 2).
  const std::vector<std::uint8_t> v2{1, 6, 4, 3, 2, 0xc8, 0x01, 0x64, 50, 50, 8, 8, 1, 1, 2, 0, 2};
  std::vector<StepRecord> steps;
  decode_steps(v2, steps, 2);
  REQUIRE(steps.size() == 1);
  CHECK(steps[0] == StepRecord{1, 100, 200, 50, 50, 8, 8, 1, 1, {0, 1}, kNoWholeComm});
  // Read as version 3 it lacks its last byte.
  steps.clear();
  CHECK_THROWS_AS(decode_steps(v2, steps, 3), TraceError);
  // Version 3 adds id + 1 after the partners: 0 none; 0xfffe the largest id named (0xffff, shared
  // by the communicators past it, is never named).
  std::vector<std::uint8_t> v3 = v2;
  v3[3] = 6;  // partners column of 6 bytes
  for (const std::uint8_t b : {0x80, 0x80, 0x04}) v3.push_back(b);  // varint 0x10000: id 0xffff
  steps.clear();
  CHECK_THROWS_WITH(decode_steps(v3, steps, 3), "step 1 names communicator 65535; a step names ids below 65535");
  v3.resize(v3.size() - 3);
  for (const std::uint8_t b : {0xff, 0xff, 0x03}) v3.push_back(b);  // varint 0xffff: id 0xfffe
  steps.clear();
  decode_steps(v3, steps, 3);
  CHECK(steps.at(0).whole_comm == 0xfffe);
}

TEST_CASE("a record with an unknown operation is not handed out, and the ones before it are", "[codec]") {
  auto events = ping_pong_events(6);
  events[3].op = static_cast<Op>(250);
  std::vector<std::uint8_t> payload;
  encode_events(events, payload);
  std::vector<Event> back;
  CHECK_THROWS_WITH(decode_events(payload, back), "event 3 has unknown operation code 250");
  REQUIRE(back.size() == 3);
  CHECK(std::equal(back.begin(), back.end(), events.begin()));
  EventFrameDecoder d(payload);
  std::vector<Event> parts;
  d.decode(parts, 2);
  CHECK_THROWS_AS(d.decode(parts, 2), TraceError);
  CHECK(parts.size() == 3);
}

TEST_CASE("a corrupted count cannot make the decoder allocate or overrun", "[codec]") {
  std::vector<std::uint8_t> payload;
  ByteWriter w(payload);
  w.varint(1ull << 40);  // a million million steps in a few bytes
  std::vector<StepRecord> steps;
  CHECK_THROWS_WITH(decode_steps(payload, steps), "record count larger than its frame");
  std::vector<Event> events;
  CHECK_THROWS_AS(decode_events(payload, events), TraceError);
}

TEST_CASE("a rank file round-trips through writer and reader", "[trace-file]") {
  const auto path = temp_file("roundtrip.mst").string();
  const auto events = ping_pong_events(5000);
  {
    TraceFileWriter w(path, header());
    write_events_frame(w, std::span(events).first(2500));
    write_events_frame(w, std::span(events).subspan(2500), 1);
    w.write_frame(FrameKind::End, 0, 0, {});
  }
  const RankTrace t = read_rank_trace(path);
  CHECK(t.header == header());
  CHECK(t.end == TraceEnd::Complete);
  CHECK(t.problem.empty());
  CHECK(t.events == events);
  CHECK(t.event_thread[0] == 0);
  CHECK(t.event_thread[4999] == 1);
  CHECK(t.frames == 3);
  // The compact trace of a steady exchange: well under 4 bytes an event on disk.
  CHECK(static_cast<double>(t.file_bytes) / 5000.0 < 4.0);
}

// Version 4: the recorder's decision is a mark on each record that closes an M-step, and the reader
// derives the steps from the records between the marks.
TEST_CASE("version 4: the records that close M-steps are marked, the reader derives the steps", "[trace-file][steps]") {
  const auto path = temp_file("marks.mst").string();
  RankTrace t;
  t.header = header();
  t.header.version = kTraceVersion;
  t.header.rank = 0;
  t.header.world_size = 2;
  t.events = ping_pong_events(100);  // Send, Recv, Send, ... to and from rank 1
  t.comms = {{0, false, {0, 1}}};
  write_rank_trace(path, t, 30);
  // On disk: every Send after a Recv closes the step of that Recv, and nothing else is marked.
  {
    TraceFileReader raw(path);
    Frame f;
    std::vector<Event> marked;
    while (raw.next(f))
      if (f.kind == FrameKind::Events) decode_events(f.payload, marked, static_cast<std::size_t>(-1), true);
      else CHECK(f.kind != FrameKind::Steps);
    REQUIRE(marked.size() == 100);
    for (std::size_t i = 0; i < marked.size(); ++i) {
      INFO("record " << i);
      CHECK(static_cast<bool>(marked[i].flags & kClosesStep) == (i % 2 == 0 && i > 0));
    }
  }
  const RankTrace back = read_rank_trace(path);
  CHECK(back.end == TraceEnd::Complete);
  CHECK(back.problem.empty());
  CHECK(back.events == t.events);  // the marks taken off
  // 49 steps closed by the Sends 2, 4, ..., 98; the last, {Send 98, Recv 99}, at the end.
  REQUIRE(back.steps.size() == 50);
  const auto& e = t.events;
  const StepRecord& first = back.steps[0];
  CHECK(first.index == 1);
  CHECK(first.begin == e[0].t_enter);
  CHECK(first.end == e[1].t_exit);
  CHECK(first.compute == e[1].t_enter - e[0].t_exit);
  CHECK(first.mpi == (e[0].t_exit - e[0].t_enter) + (e[1].t_exit - e[1].t_enter));
  CHECK(first.bytes_in == 8);
  CHECK(first.bytes_out == 8);
  CHECK(first.msgs_in == 1);
  CHECK(first.msgs_out == 1);
  CHECK(first.partners == std::vector<std::int32_t>{0, 1});
  CHECK(back.steps[1].begin == e[1].t_exit);  // the gap before Send 2 is the second step's
  CHECK(back.steps[1].compute == e[2].t_enter - e[1].t_exit + e[3].t_enter - e[2].t_exit);
  CHECK(back.steps[49].end == e[99].t_exit);
  // The streamed reader hands the same records out, unmarked.
  RankEventReader reader(path, 7);
  std::vector<Event> streamed;
  while (reader.read(streamed)) {
  }
  CHECK(reader.end() == TraceEnd::Complete);
  CHECK(streamed == t.events);
}

TEST_CASE("version 4: a record whose mark disagrees with the rule, or a Steps frame, ends the rank there", "[trace-file][steps][damage]") {
  FileHeader h = header();
  h.version = kTraceVersion;
  h.rank = 0;
  h.world_size = 2;
  auto events = ping_pong_events(40);
  StepMarker marker;
  for (Event& e : events)
    if (marker.closes(e)) e.flags |= kClosesStep;
  const auto write = [&](const std::string& name, std::vector<Event> records, bool steps_frame) {
    const auto path = temp_file(name).string();
    TraceFileWriter w(path, h);
    write_events_frame(w, std::span(records).first(20));
    if (steps_frame) {
      std::vector<std::uint8_t> p;
      encode_steps(std::vector<StepRecord>(1), p);
      w.write_frame(FrameKind::Steps, 0, 1, p);
    }
    write_events_frame(w, std::span(records).subspan(20));
    w.write_frame(FrameKind::End, 0, 0, {});
    return path;
  };
  SECTION("undamaged, it reads whole") {
    const RankTrace t = read_rank_trace(write("marks-fine.mst", events, false));
    CHECK(t.end == TraceEnd::Complete);
    CHECK(t.events.size() == 40);
    CHECK(t.steps.size() == 20);
  }
  SECTION("a closing Send unmarked") {
    auto bad = events;
    bad[24].flags &= static_cast<std::uint8_t>(~kClosesStep);
    const auto path = write("marks-missing.mst", bad, false);
    const RankTrace t = read_rank_trace(path);
    CHECK(t.end == TraceEnd::Corrupt);
    CHECK(t.events.size() == 24);
    CHECK(t.event_thread.size() == 24);
    CHECK(t.steps.size() == 12);  // 11 closed by the Sends 2..22, the 12th at Recv 23, the end
    CHECK(t.problem == path + ": record 24 (MPI_Send) is not marked as closing an M-step, which the records before it say it does");
  }
  SECTION("a Recv marked") {
    auto bad = events;
    bad[3].flags |= kClosesStep;
    const auto path = write("marks-extra.mst", bad, false);
    const RankTrace t = read_rank_trace(path);
    CHECK(t.end == TraceEnd::Corrupt);
    CHECK(t.events.size() == 3);
    CHECK(t.problem == path + ": record 3 (MPI_Recv) is marked as closing an M-step, which the records before it say it does not");
  }
  SECTION("a Steps frame") {
    const auto path = write("marks-steps.mst", events, true);
    const RankTrace t = read_rank_trace(path);
    CHECK(t.end == TraceEnd::Corrupt);
    CHECK(t.events.size() == 20);
    CHECK_THAT(t.problem, Catch::StartsWith(path + ": frame 1 at byte ") &&
                              Catch::EndsWith(": a Steps frame in a version 4 trace"));
    RankEventReader reader(path, 7);
    std::vector<Event> streamed;
    while (reader.read(streamed)) {
    }
    CHECK(reader.end() == TraceEnd::Corrupt);
    CHECK(streamed.size() == 20);
    CHECK_THAT(reader.problem(), Catch::Contains(": a Steps frame in a version 4 trace"));
  }
}

TEST_CASE("a truncated last frame keeps every whole frame before it", "[trace-file]") {
  const auto path = temp_file("truncated.mst").string();
  const auto events = ping_pong_events(2000);
  std::uintmax_t whole = 0;
  {
    TraceFileWriter w(path, header());
    write_events_frame(w, std::span(events).first(1000));
    whole = w.bytes_written();
    write_events_frame(w, std::span(events).subspan(1000));
  }
  fs::resize_file(path, fs::file_size(path) - 7);
  const RankTrace t = read_rank_trace(path);
  CHECK(t.end == TraceEnd::Truncated);
  CHECK(t.events.size() == 1000);
  CHECK(std::equal(t.events.begin(), t.events.end(), events.begin()));
  CHECK_THAT(t.problem, Catch::Contains("truncated.mst: frame 1 at byte " + std::to_string(whole)) &&
                            Catch::Contains("cut short"));
  // Cut inside the frame header itself.
  fs::resize_file(path, whole + 5);
  const RankTrace t2 = read_rank_trace(path);
  CHECK(t2.end == TraceEnd::Truncated);
  CHECK(t2.events.size() == 1000);
}

TEST_CASE("a flipped byte in a frame is found by the checksum", "[trace-file]") {
  const auto path = temp_file("corrupt.mst").string();
  const auto events = ping_pong_events(3000);
  std::uintmax_t first = 0;
  {
    TraceFileWriter w(path, header());
    for (int k = 0; k < 3; ++k) {
      write_events_frame(w, std::span(events).subspan(static_cast<std::size_t>(k) * 1000, 1000));
      if (k == 0) first = w.bytes_written();
    }
  }
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(first + kFrameHeaderSize + 40));
    char c = 0;
    f.read(&c, 1);
    f.seekp(static_cast<std::streamoff>(first + kFrameHeaderSize + 40));
    c = static_cast<char>(c ^ 0x5a);
    f.write(&c, 1);
  }
  const RankTrace t = read_rank_trace(path);
  CHECK(t.end == TraceEnd::Corrupt);
  CHECK(t.events.size() == 1000);
  CHECK_THAT(t.problem, Catch::Contains("frame 1 at byte " + std::to_string(first)));
}

TEST_CASE("files that are not traces of this version are refused in one line", "[trace-file]") {
  CHECK_THROWS_WITH(read_rank_trace("/nonexistent/rank-00000.mst"),
                    "/nonexistent/rank-00000.mst: cannot open: No such file or directory");
  const auto path = temp_file("notatrace.mst").string();
  {
    std::ofstream(path) << "hello, this is not a trace at all";
  }
  CHECK_THROWS_WITH(read_rank_trace(path), path + ": not an mstep trace (bad magic)");
  std::vector<std::uint8_t> head;
  FileHeader h = header();
  h.version = kTraceVersion + 1;
  encode_file_header(h, head);
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(head.data()), static_cast<std::streamsize>(head.size()));
  }
  CHECK_THROWS_WITH(read_rank_trace(path),
                    path + ": trace format version " + std::to_string(kTraceVersion + 1) + ", this mstep reads versions " +
                        std::to_string(kOldestTraceVersion) + " to " + std::to_string(kTraceVersion));
}

TEST_CASE("a frame header outside the checksum is checked: count, kind, reserved byte", "[trace-file]") {
  // One Events frame, then one damaged frame; the reader keeps the first and names the second.
  const auto events = ping_pong_events(100);
  std::vector<std::uint8_t> ev, steps;
  encode_events(events, ev);
  StepEncoder enc;
  StepRecord s;
  s.index = 1, s.begin = 10, s.end = 20;
  enc.add(s);
  enc.finish(steps);
  auto write = [&](const std::string& name, FrameKind kind, std::uint32_t count, std::size_t patch_reserved = 0) {
    const auto path = temp_file(name).string();
    std::uintmax_t second = 0;
    {
      TraceFileWriter w(path, header());
      w.write_frame(FrameKind::Events, 0, 100, ev);
      second = w.bytes_written();
      w.write_frame(kind, 0, count, steps);
    }
    if (patch_reserved) {
      std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(static_cast<std::streamoff>(second + 5));
      const char c = static_cast<char>(patch_reserved);
      f.write(&c, 1);
    }
    return std::pair{read_rank_trace(path), second};
  };
  SECTION("a Steps frame whose header says 2 records where its payload holds 1") {
    const auto [t, at] = write("count.mst", FrameKind::Steps, 2);
    CHECK(t.end == TraceEnd::Corrupt);
    CHECK(t.events.size() == 100);
    CHECK(t.steps.empty());
    CHECK_THAT(t.problem, Catch::Contains("frame 1 at byte " + std::to_string(at) + ": 1 records where its header says 2"));
  }
  SECTION("a kind version 1 does not have") {
    const auto [t, at] = write("kind.mst", static_cast<FrameKind>(9), 1);
    CHECK(t.end == TraceEnd::Corrupt);
    CHECK(t.events.size() == 100);
    CHECK_THAT(t.problem, Catch::EndsWith("frame 1 at byte " + std::to_string(at) + ": unknown frame kind 9"));
  }
  SECTION("a reserved byte that is not 0") {
    const auto [t, at] = write("reserved.mst", FrameKind::Steps, 1, 0x40);
    CHECK(t.end == TraceEnd::Corrupt);
    CHECK(t.events.size() == 100);
    CHECK_THAT(t.problem, Catch::EndsWith("frame 1 at byte " + std::to_string(at) + ": frame header's reserved byte is 64, not 0"));
  }
  SECTION("a step naming a communicator that no earlier frame defines") {
    steps.clear();
    s.whole_comm = 4;
    enc.add(s);
    enc.finish(steps);
    const auto [t, at] = write("undefined.mst", FrameKind::Steps, 1);
    CHECK(t.end == TraceEnd::Corrupt);
    CHECK(t.events.size() == 100);
    CHECK_THAT(t.problem, Catch::EndsWith("frame 1 at byte " + std::to_string(at) +
                                          ": step 1 names communicator 4, which no earlier frame defines"));
  }
  SECTION("the same frame, undamaged, reads") {
    const auto [t, at] = write("fine.mst", FrameKind::Steps, 1);
    CHECK(t.end == TraceEnd::Unfinished);
    CHECK(t.steps.size() == 1);
  }
}

TEST_CASE("an implausible clock rate in the file header is refused, not used", "[trace-file]") {
  const auto path = temp_file("ticks.mst").string();
  for (const double bad : {0.0, -2.5e9, 2.5e300, 1e3}) {
    FileHeader h = header();
    h.ticks_per_second = bad;
    std::vector<std::uint8_t> head;
    encode_file_header(h, head);
    {
      std::ofstream out(path, std::ios::binary);
      out.write(reinterpret_cast<const char*>(head.data()), static_cast<std::streamsize>(head.size()));
    }
    INFO(bad);
    CHECK_THROWS_WITH(read_rank_trace(path), Catch::Contains("clock ticks per second"));
  }
  FileHeader h = header();
  h.clock_kind = 1;  // CLOCK_MONOTONIC: nanoseconds, 1e9 ticks per second and nothing else
  h.ticks_per_second = 1.5e9;
  std::vector<std::uint8_t> head;
  encode_file_header(h, head);
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(head.data()), static_cast<std::streamsize>(head.size()));
  }
  CHECK_THROWS_WITH(read_rank_trace(path), Catch::Contains("1500000000 clock ticks per second"));
}

// The reader's fuzzer (tests/fuzz/long_fuzz.sh) had the process hold 1.9 GB after some 7 million
// inputs: every distinct size of a 0..n-1 list was kept as a list of its own.
TEST_CASE("lists 0..n-1 of every size are views of one shared list", "[codec]") {
  const MemberList big = MemberList::identity(300000);
  const std::int32_t* const shared = big.data();
  for (std::size_t n = 1; n <= 300000; n += 997) {
    const MemberList m = MemberList::identity(n);
    REQUIRE(m.size() == n);
    REQUIRE(m.data() == shared);
    REQUIRE(m.is_identity());
    REQUIRE(m[n - 1] == static_cast<std::int32_t>(n - 1));
  }
  // Views of one buffer are equal only when their sizes are.
  CHECK_FALSE(MemberList::identity(3) == MemberList::identity(4));
  CHECK(MemberList::identity(4) == MemberList({0, 1, 2, 3}));
  CHECK(MemberList::identity(4).vector() == std::vector<std::int32_t>{0, 1, 2, 3});
  CHECK(MemberList::identity(4).rank_of(4) == -1);
  CHECK(std::span<const std::int32_t>(MemberList::identity(2)).size() == 2);
}

TEST_CASE("a communicator of members 0..n-1 is written as n alone and shared in memory", "[codec]") {
  // A million-rank MPI_COMM_WORLD: 1 flag byte and 3 bytes of size, not a million ranks.
  std::vector<CommDef> world = {{0, false, MemberList::identity(1000000)}};
  std::vector<std::uint8_t> bytes;
  encode_comms(world, bytes);
  CHECK(bytes.size() < 8);
  std::vector<CommDef> a, b;
  decode_comms(bytes, a, 1000000);
  decode_comms(bytes, b, 1000000);
  REQUIRE(a.size() == 1);
  CHECK(a[0].world_ranks.size() == 1000000);
  CHECK(a[0].world_ranks[999999] == 999999);
  CHECK(a[0].world_ranks.data() == b[0].world_ranks.data());  // one copy for every rank's trace
  // A list that happens to count up (a version 1 trace, a duplicate of the world) is the same list.
  const MemberList counted(std::vector<std::int32_t>{0, 1, 2, 3});
  CHECK(counted.is_identity());
  CHECK(counted.data() == MemberList::identity(4).data());
  CHECK_FALSE(MemberList({1, 0}).is_identity());
  CHECK(MemberList({5, 7, 9}).rank_of(9) == 2);
  CHECK(MemberList({5, 7, 9}).rank_of(6) == -1);
  // More members than the run has ranks: a damaged frame, refused before anything is allocated.
  std::vector<CommDef> none;
  CHECK_THROWS_WITH(decode_comms(bytes, none, 64), "communicator 0 of 1000000 members in a run of 64 ranks");
}
