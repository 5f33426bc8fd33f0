// The streaming pass (model/trace/stream_pass.hpp) over rank files finds the messages and
// collective instances of the whole-trace matching, holding only what is in flight.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <tuple>

#include "format/trace_format.hpp"
#include "model/trace/stream_pass.hpp"
#include "model/trace/synthetic.hpp"
#include "trace_builders.hpp"

using namespace mstep;
namespace fs = std::filesystem;

namespace {

struct Collected : StreamVisitor {
  std::vector<Message> messages;
  std::vector<std::vector<CollectiveCall>> instances;
  std::vector<std::uint64_t> records;
  std::vector<std::uint64_t> ended;
  std::size_t mismatched_records = 0;  // records handed with the message that differ from the file's
  const std::vector<RankTrace>* traces = nullptr;

  RecordTag record(std::int32_t rank, std::uint32_t index, const Event& e) override {
    if (records.size() <= static_cast<std::size_t>(rank)) records.resize(static_cast<std::size_t>(rank) + 1);
    if (records[static_cast<std::size_t>(rank)]++ != index) ++mismatched_records;
    if (traces && !((*traces)[static_cast<std::size_t>(rank)].events[index] == e)) ++mismatched_records;
    return {static_cast<std::uint64_t>(rank), index};  // must come back with the message naming it
  }
  void message(const StreamedMessage& m) override {
    messages.push_back(m.message);
    if (m.send_tag.a != static_cast<std::uint64_t>(m.message.src) || m.send_tag.b != m.message.send_event) ++mismatched_records;
    if (m.recv_tag.a != static_cast<std::uint64_t>(m.message.dst) || m.recv_tag.b != m.message.recv_event) ++mismatched_records;
    if (!traces) return;
    const auto& src = (*traces)[static_cast<std::size_t>(m.message.src)].events;
    const auto& dst = (*traces)[static_cast<std::size_t>(m.message.dst)].events;
    if (!(src[m.message.send_event] == m.send)) ++mismatched_records;
    if (!(dst[m.message.post_event] == m.post)) ++mismatched_records;
    if (!(dst[m.done_call] == m.done) || dst[m.done_call].continuation()) ++mismatched_records;
  }
  void collective(std::span<const StreamedMember> members) override {
    std::vector<CollectiveCall> calls;
    for (const auto& m : members) {
      calls.push_back({m.rank, m.event});
      if (m.tag.a != static_cast<std::uint64_t>(m.rank) || m.tag.b != m.event) ++mismatched_records;
    }
    instances.push_back(std::move(calls));
  }
  void rank_end(std::int32_t rank, std::uint64_t n) override {
    if (ended.size() <= static_cast<std::size_t>(rank)) ended.resize(static_cast<std::size_t>(rank) + 1);
    ended[static_cast<std::size_t>(rank)] = n;
  }
};

auto key(const Message& m) { return std::tie(m.src, m.send_event, m.dst, m.post_event, m.recv_event, m.bytes, m.tag, m.comm); }

// Writes `traces` (a missing rank where `skip` says) and streams them back.
StreamPassResult stream(const std::vector<RankTrace>& traces, Collected& c, const std::string& name,
                        std::vector<int> skip = {}, std::size_t frame_events = 97) {
  const fs::path dir = fs::temp_directory_path() / "mstep-unit" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::vector<std::string> files;
  std::vector<RankTrace> metas(traces.size());
  std::vector<const RankTrace*> ptrs;
  for (std::size_t r = 0; r < traces.size(); ++r) {
    const bool skipped = std::find(skip.begin(), skip.end(), static_cast<int>(r)) != skip.end();
    files.push_back(skipped ? std::string{} : (dir / rank_file_name(static_cast<int>(r))).string());
    if (!skipped) {
      write_rank_trace(files.back(), traces[r], frame_events);
      metas[r] = read_rank_metadata(files.back());
    }
    ptrs.push_back(skipped ? nullptr : &metas[r]);
  }
  const Timeline timeline(ptrs);
  c.traces = &traces;
  StreamPassResult out = stream_pass(ptrs, files, timeline, c);
  fs::remove_all(dir);
  return out;
}

void check_same_as_whole_trace(const std::vector<RankTrace>& traces, const std::string& name) {
  Collected c;
  const StreamPassResult s = stream(traces, c, name);
  std::vector<const RankTrace*> ptrs;
  for (const auto& t : traces) ptrs.push_back(&t);
  const Matching whole = match_messages(ptrs);
  REQUIRE(c.messages.size() == whole.messages.size());
  CHECK(s.messages == whole.messages.size());
  std::sort(c.messages.begin(), c.messages.end(), [](const Message& a, const Message& b) { return key(a) < key(b); });
  for (std::size_t i = 0; i < whole.messages.size(); ++i) CHECK(key(c.messages[i]) == key(whole.messages[i]));
  REQUIRE(s.unmatched.size() == whole.unmatched.size());
  for (std::size_t i = 0; i < whole.unmatched.size(); ++i) CHECK(s.unmatched[i].what == whole.unmatched[i].what);
  auto instances = collective_instances(ptrs);
  auto sorted = [](auto v) {
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
      return std::tie(a.front().rank, a.front().event) < std::tie(b.front().rank, b.front().event);
    });
    return v;
  };
  const auto a = sorted(c.instances), b = sorted(instances);
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    REQUIRE(a[i].size() == b[i].size());
    for (std::size_t k = 0; k < a[i].size(); ++k) {
      CHECK(a[i][k].rank == b[i][k].rank);
      CHECK(a[i][k].event == b[i][k].event);
    }
  }
  std::uint64_t total = 0;
  for (std::size_t r = 0; r < traces.size(); ++r) {
    CHECK(c.ended[r] == traces[r].events.size());
    total += traces[r].events.size();
  }
  CHECK(s.records == total);
  CHECK(c.mismatched_records == 0);
  CHECK(s.damaged.empty());
}

}  // namespace

TEST_CASE("the streaming pass finds the whole-trace matching's messages and collectives", "[stream]") {
  using model::Pattern;
  for (const Pattern pattern : {Pattern::Ring, Pattern::PingPong, Pattern::Random, Pattern::Alltoall, Pattern::Halo2D,
                                 Pattern::Halo3D, Pattern::Bcast, Pattern::Allreduce}) {
    const std::string name = model::pattern_name(pattern);
    SECTION(name) { check_same_as_whole_trace(model::synthetic_trace(8, pattern, 30000, 3), "stream-" + name); }
  }
}

TEST_CASE("streamed receives match in posting order whatever order they complete in", "[stream]") {
  using test::ev;
  std::vector<RankTrace> traces;
  traces.push_back(test::rank(0, 2, {ev(Op::Init, -1, 0, 5), ev(Op::Send, 1, 10, 11, 100), ev(Op::Send, 1, 20, 21, 200),
                                     ev(Op::Send, 1, 30, 31, 300), ev(Op::Send, 1, 32, 33, 64)}));
  traces[0].events[4].tag = 9;  // never received
  Event irecv_a = ev(Op::Irecv, 0, 6, 7), irecv_b = ev(Op::Irecv, 0, 8, 9);
  irecv_a.request = 1;
  irecv_b.request = 2;
  Event wait_b = ev(Op::Wait, 0, 40, 41, 0), wait_a = ev(Op::Wait, 0, 50, 51, 0);
  wait_b.request = 2;
  wait_b.flags = kRecvHalf;
  wait_b.recv_bytes = 200;
  wait_a.request = 1;
  wait_a.flags = kRecvHalf;
  wait_a.recv_bytes = 100;
  Event recv6 = ev(Op::Recv, 0, 35, 36, 300);
  recv6.tag = 6;
  traces[0].events[3].tag = 6;
  traces.push_back(test::rank(1, 2, {ev(Op::Init, -1, 0, 5), irecv_a, irecv_b, recv6, wait_b, wait_a}));
  check_same_as_whole_trace(traces, "stream-order");
  Collected c;
  const StreamPassResult s = stream(traces, c, "stream-order-2", {}, 1);  // a record a frame
  REQUIRE(c.messages.size() == 3);
  std::sort(c.messages.begin(), c.messages.end(), [](const Message& a, const Message& b) { return a.send_event < b.send_event; });
  CHECK(c.messages[0].post_event == 1);  // Irecv A got the first message, though B completed first
  CHECK(c.messages[0].recv_event == 5);
  CHECK(c.messages[1].post_event == 2);
  CHECK(c.messages[1].recv_event == 4);
  REQUIRE(s.unmatched.size() == 1);
  CHECK(s.unmatched[0].what == "rank 0 event 4: MPI_Send to 1 tag 9 of 64 bytes was never received");
}

TEST_CASE("a rank without a trace leaves its messages unmatched and its collectives short of it", "[stream]") {
  const auto traces = model::synthetic_trace(4, model::Pattern::Ring, 2000, 1);
  Collected c;
  const StreamPassResult s = stream(traces, c, "stream-missing", {2});
  CHECK((c.records.size() <= 2 || c.records[2] == 0));  // nothing of rank 2
  CHECK(c.records[0] == traces[0].events.size());
  // Rank 1 sends to 2 and rank 2 sends to 3 every iteration: both ends are unmatched.
  REQUIRE_FALSE(s.unmatched.empty());
  CHECK(s.unmatched.front().what.find("(no trace of the") != std::string::npos);
  for (const auto& inst : c.instances) CHECK(inst.size() == 3);  // MPI_Barrier and the like without rank 2
  CHECK(s.messages == c.messages.size());
}

TEST_CASE("synthetic halos: every rank exchanges with its grid neighbours, counted by hand", "[stream][synth]") {
  // 8 ranks: MPI_Dims_create's 4 x 2 in 2-D and 2 x 2 x 2 in 3-D, every dimension longer than 1,
  // so 4 and 6 neighbours: 16 and 24 records an iteration, each rank receiving 4 and 6 messages.
  for (const auto& [pattern, neighbours] : {std::pair{model::Pattern::Halo2D, 4}, std::pair{model::Pattern::Halo3D, 6}}) {
    const auto traces = model::synthetic_trace(8, pattern, 8 * (3 + 10 * 4 * neighbours), 1);  // 10 iterations
    std::vector<const RankTrace*> ptrs;
    for (const auto& t : traces) ptrs.push_back(&t);
    const Matching m = match_messages(ptrs);
    CHECK(m.unmatched.empty());
    CHECK(m.messages.size() == static_cast<std::size_t>(8 * 10 * neighbours));
    CHECK(traces[0].events.size() == static_cast<std::size_t>(3 + 10 * 4 * neighbours));
    // Row-major, the last dimension fastest: along the last dimension (extent 2) rank 1 is rank 0's
    // neighbour on both sides, so 2 messages an iteration go from 1 to 0; along the first (extent 4
    // in 2-D) rank 0's neighbours are 2 and 6, so none goes from 3 to 0.
    std::size_t from_1 = 0, from_3 = 0;
    for (const Message& msg : m.messages) {
      from_1 += msg.src == 1 && msg.dst == 0;
      from_3 += msg.src == 3 && msg.dst == 0;
    }
    CHECK(from_1 == 20);
    CHECK(from_3 == 0);
  }
}

// Trace format 3 and older (version 4 has no Steps frames).
TEST_CASE("a damaged Steps frame ends a rank's records for the streaming reader too", "[stream][damage]") {
  const fs::path dir = fs::temp_directory_path() / "mstep-unit" / "stream-damaged-steps";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto traces = model::synthetic_trace(2, model::Pattern::PingPong, 20000, 1);
  const std::string file = (dir / "rank-00000.mst").string();
  test::write_v3_trace(file, traces[0], 1000);
  // The first Steps frame: flip a byte in the middle of its compressed payload.
  std::uint64_t at = 0, events_before = 0;
  {
    TraceFileReader scan(file);
    Frame f;
    while (scan.next(f)) {
      if (f.kind == FrameKind::Events) events_before += f.count;
      if (f.kind == FrameKind::Steps) {
        at = f.offset + kFrameHeaderSize + 4;
        break;
      }
    }
  }
  REQUIRE(at > 0);
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(at));
    const char c = static_cast<char>(f.get());
    f.seekp(static_cast<std::streamoff>(at));
    f.put(static_cast<char>(c ^ 0x5a));
  }
  RankEventReader reader(file, 256);
  std::vector<Event> got;
  while (reader.read(got)) {
  }
  CHECK(got.size() == events_before);  // the records before the damaged frame, and none after
  CHECK(reader.problem().find("rank-00000.mst: frame") != std::string::npos);
  CHECK(read_rank_trace(file).events.size() == events_before);  // as the whole-file reader keeps
  fs::remove_all(dir);
}
