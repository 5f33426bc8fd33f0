// mstep export --perfetto: Chrome trace-event JSON. Checked for what Perfetto's importer needs
// (slices on one track nest, every flow starts and ends inside a slice of its rank) and against
// the trace's own counts: one slice per call as `mstep stats` counts them, one per recorded
// M-step, one arrow per message the report matches.
#include <map>

#include "harness.hpp"

using namespace mstep_it;

namespace {

// "12.345" microseconds as integer nanoseconds, as written (exactly three decimals).
long long ns_of(const json& v) {
  return std::llround(v.get<double>() * 1000.0);
}

struct Slice {
  long long begin, end;
  std::string name, cat;
};

struct Perfetto {
  json doc;
  std::map<int, std::vector<Slice>> slices;      // pid -> X events
  std::map<long long, std::pair<int, long long>> flow_out, flow_in;  // id -> (pid, ts)
  int process_names = 0;
  std::map<std::string, int> by_cat;
};

Perfetto load(const fs::path& file) {
  Perfetto p;
  std::ifstream in(file);
  p.doc = json::parse(in);
  for (const json& e : p.doc.at("traceEvents")) {
    const std::string ph = e.at("ph");
    const int pid = e.at("pid");
    if (ph == "M") {
      p.process_names += e.at("name") == "process_name";
    } else if (ph == "X") {
      const long long b = ns_of(e.at("ts"));
      p.slices[pid].push_back({b, b + ns_of(e.at("dur")), e.at("name"), e.at("cat")});
      ++p.by_cat[e.at("cat")];
    } else if (ph == "s" || ph == "f") {
      CHECK(e.at("cat") == "message");
      if (ph == "f") CHECK(e.at("bp") == "e");
      auto& side = ph == "s" ? p.flow_out : p.flow_in;
      CHECK(side.emplace(e.at("id").get<long long>(), std::make_pair(pid, ns_of(e.at("ts")))).second);
    } else {
      FAIL("unexpected phase " << ph);
    }
  }
  return p;
}

// Slices of one track either nest or follow each other: never a partial overlap.
bool nests(std::vector<Slice> v) {
  std::sort(v.begin(), v.end(), [](const Slice& a, const Slice& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end > b.end;
  });
  std::vector<long long> open;  // ends of the enclosing slices
  for (const Slice& s : v) {
    while (!open.empty() && open.back() <= s.begin && !(open.back() == s.begin && s.end == s.begin)) open.pop_back();
    if (!open.empty() && s.end > open.back()) return false;
    open.push_back(s.end);
  }
  return true;
}

// The innermost MPI call slice of `pid` that holds `ts`.
const Slice* call_at(const Perfetto& p, int pid, long long ts) {
  const Slice* best = nullptr;
  for (const Slice& s : p.slices.at(pid))
    if (s.cat != "mstep" && s.begin <= ts && ts <= s.end && (!best || s.end - s.begin < best->end - best->begin)) best = &s;
  return best;
}

}  // namespace

TEST_CASE("mstep export --perfetto: a slice per call and M-step, an arrow per message, nested as Perfetto needs") {
  const fs::path dir = test_dir() / "random";
  REQUIRE(run({kMstep, "synth", "-o", dir.string(), "--ranks", "8", "--events", "4000", "--pattern", "random"}).code == 0);
  const fs::path file = test_dir() / "run.json";
  const Result r = run({kMstep, "export", dir.string(), "--perfetto", file.string()});
  REQUIRE(r.code == 0);
  CHECK(r.err.empty());
  const Perfetto p = load(file);
  CHECK(p.process_names == 8);
  REQUIRE(p.slices.size() == 8);

  const Stats st = stats(dir);
  long long calls = 0, steps = 0;
  for (const json& rank : st.j.at("per_rank")) {
    steps += rank.at("steps").get<long long>();
    for (const auto& [name, n] : rank.at("calls").items()) calls += n.get<long long>();
  }
  CHECK(p.by_cat.at("mpi") == calls);
  CHECK(p.by_cat.at("mstep") == steps);  // the M-steps the writer recorded, inferred again
  CHECK(steps >= 8);
  const json rep = mstep_json("report", dir, {}, no_default_params(test_dir()));
  CHECK(static_cast<long long>(p.flow_out.size()) == rep.at("messages").get<long long>());
  CHECK(p.flow_in.size() == p.flow_out.size());

  for (const auto& [pid, v] : p.slices) {
    INFO("rank " << pid);
    CHECK(nests(v));
  }
  // Each arrow leaves a send's slice on its sender and lands in a receiving call on its receiver.
  int sends_ok = 0, receives_ok = 0;
  for (const auto& [id, out] : p.flow_out) {
    const Slice* s = call_at(p, out.first, out.second);
    sends_ok += s && (s->name == "MPI_Send" || s->name == "MPI_Isend" || s->name == "MPI_Sendrecv");
    const auto& in = p.flow_in.at(id);
    const Slice* d = call_at(p, in.first, in.second);
    receives_ok += d && (d->name == "MPI_Recv" || d->name.rfind("MPI_Wait", 0) == 0 || d->name == "MPI_Sendrecv");
  }
  CHECK(sends_ok == static_cast<int>(p.flow_out.size()));
  CHECK(receives_ok == static_cast<int>(p.flow_in.size()));
  CHECK(r.out == "mstep: wrote " + file.string() + ": 8 ranks, " + std::to_string(calls) + " MPI calls, " +
                     std::to_string(steps) + " M-steps, " + std::to_string(p.flow_out.size()) +
                     " messages as arrows (0 sends and receives unmatched); open it at ui.perfetto.dev\n");

  // With parameters: every call after MPI_Init again, as LogGPS predicts it, on a second track of
  // its rank, in the rank's order and not overlapping, ending where the report predicts the rank's
  // MPI_Finalize entry.
  const fs::path params = dir / "params.json";
  std::ofstream(params) << R"({"L": 2e-7, "o": 2e-7, "Os": 0, "Or": 0, "g": 2e-7, "Gs": 1e-10, "Gl": 1e-10, "s": 8256, "S": 8256})";
  const fs::path predicted = dir.parent_path() / "predicted.json";
  const Result rp = run({kMstep, "export", dir.string(), "--perfetto", predicted.string(), "--params", params.string()});
  REQUIRE(rp.code == 0);
  CHECK(rp.out.find("mstep: with " + std::to_string(calls - 8) + " calls as LogGPS predicts them (" + params.string() +
                    "), on a second track per rank") != std::string::npos);
  // Several files: as `mstep report` chooses (a synthetic run has no probe of its period: the first).
  const fs::path other = dir / "other.json";
  std::ofstream(other) << R"({"L": 9e-7, "o": 2e-7, "Os": 0, "Or": 0, "g": 2e-7, "Gs": 1e-10, "Gl": 1e-10, "s": 8256, "S": 8256})";
  const Result two = run({kMstep, "export", dir.string(), "--perfetto", (dir.parent_path() / "two.json").string(),
                          "--params", params.string(), "--params", other.string()});
  REQUIRE(two.code == 0);
  CHECK(two.out.find("calls as LogGPS predicts them (" + params.string() + ", of 2 given, the first: ") !=
        std::string::npos);
  std::ifstream in(predicted);
  const json doc = json::parse(in);
  std::map<int, std::vector<std::pair<double, double>>> track;  // rank -> predicted [begin, end]
  int names = 0;
  for (const json& e : doc.at("traceEvents")) {
    if (e.at("ph") == "M" && e.value("tid", -1) == 1) names += e.at("args").at("name") == "LogGPS prediction";
    if (e.at("ph") != "X" || e.at("cat") != "loggps") continue;
    CHECK(e.at("tid") == 1);
    track[e.at("pid").get<int>()].push_back({e.at("ts").get<double>(), e.at("ts").get<double>() + e.at("dur").get<double>()});
  }
  CHECK(names == 8);
  const json rep_p = mstep_json("report", dir, {"--params", params.string()}, no_default_params(test_dir()));
  double zero_us = 1e300;  // the picture's zero is the earliest record; the report's, the earliest MPI_Init exit
  for (const json& e : doc.at("traceEvents"))
    if (e.at("ph") == "X" && e.at("name") == "MPI_Init") zero_us = std::min(zero_us, e.at("ts").get<double>() + e.at("dur").get<double>());
  double last_finalize_us = 0;
  for (auto& [rank, v] : track) {
    INFO("rank " << rank);
    for (std::size_t i = 1; i < v.size(); ++i) CHECK(v[i].first >= v[i - 1].second - 0.001);
    last_finalize_us = std::max(last_finalize_us, v.back().first);  // the last call told: MPI_Finalize's entry
  }
  CHECK((last_finalize_us - zero_us) * 1e-6 ==
        Approx(rep_p.at("models").at("LogGPS").at("predicted_s").get<double>()).margin(3e-9));
}

// --from/--to: the stretch of a run no browser could open whole. Every slice that overlaps the
// window and nothing else; an arrow only where both its slices are written.
TEST_CASE("mstep export --perfetto --from --to: only the slices and arrows of a stretch of the run") {
  const fs::path base = test_dir();
  const fs::path dir = base / "ring";
  REQUIRE(run({kMstep, "synth", "-o", dir.string(), "--ranks", "4", "--events", "4000", "--pattern", "ring"}).code == 0);
  REQUIRE(run({kMstep, "export", dir.string(), "--perfetto", (base / "all.json").string()}).code == 0);
  const Result r = run({kMstep, "export", dir.string(), "--perfetto", (base / "part.json").string(), "--from", "1ms",
                        "--to", "1100us"});
  REQUIRE(r.code == 0);
  const Perfetto all = load(base / "all.json"), part = load(base / "part.json");
  // The synthetic run: MPI_Init for 500 us, then some 1.7 ms of ring.
  const long long from = 1'000'000, to = 1'100'000;
  std::size_t expected = 0, written = 0;
  for (const auto& [pid, v] : all.slices)
    for (const Slice& sl : v) expected += sl.end >= from && sl.begin <= to;
  for (const auto& [pid, v] : part.slices)
    for (const Slice& sl : v) {
      INFO("rank " << pid << " " << sl.name << " [" << sl.begin << ", " << sl.end << "]");
      CHECK(sl.end >= from);
      CHECK(sl.begin <= to);
      ++written;
    }
  CHECK(written == expected);
  CHECK(written > 20);
  std::size_t all_slices = 0;
  for (const auto& [pid, v] : all.slices) all_slices += v.size();
  CHECK(written < all_slices / 4);
  // Arrows: paired, each end inside a written call slice, and no more than the whole run's.
  CHECK(part.flow_out.size() == part.flow_in.size());
  CHECK_FALSE(part.flow_out.empty());
  CHECK(part.flow_out.size() < all.flow_out.size());
  for (const auto& [id, out] : part.flow_out) {
    CHECK(call_at(part, out.first, out.second) != nullptr);
    const auto& in = part.flow_in.at(id);
    CHECK(call_at(part, in.first, in.second) != nullptr);
  }
  const std::size_t left_out = all_slices - written + all.flow_out.size() - part.flow_out.size();
  CHECK(r.out.find("mstep: only 1ms to 1100us after the run's first record: " + std::to_string(left_out) +
                   " slices and arrows outside it left out\n") != std::string::npos);
  // Bad windows are one line and write nothing.
  for (const auto& [args, message] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--from", "30us", "--to", "10us"}, "mstep: --from 30us is after --to 10us\n"},
           {{"--to", "5"}, "mstep: --to '5': a time needs a unit"},
           {{"--from", "-2us"}, "mstep: --from '-2us': a time from 0 to 1e9 s after the start of the run\n"}}) {
    std::vector<std::string> argv{kMstep, "export", dir.string(), "--perfetto", (base / "bad.json").string()};
    argv.insert(argv.end(), args.begin(), args.end());
    const Result b = run(argv);
    INFO(b.err);
    CHECK(b.code == 2);
    CHECK(b.err.rfind(message, 0) == 0);
    CHECK(lines_of(b.err).size() == 1);
    CHECK_FALSE(fs::exists(base / "bad.json"));
  }
  const Result g = run({kMstep, "export", dir.string(), "--goal", (base / "g.goal").string(), "--from", "1us"});
  CHECK(g.code == 2);
  CHECK(g.err == "mstep: --from and --to go with --perfetto\n");
}

TEST_CASE("mstep export --perfetto of a recorded run: call sites, bytes and partners of the calls") {
  const fs::path dir = test_dir() / "trace";
  check_recorded(record(dir, 2, {prog("nonblocking")}), 2);
  const fs::path file = test_dir() / "run.json";
  const Result r = run({kMstep, "export", dir.string(), "--perfetto", file.string()});
  REQUIRE(r.code == 0);
  const Perfetto p = load(file);
  CHECK(p.process_names == 2);
  int isends = 0, with_site = 0, irecv_any = 0, waitall_of_4 = 0;
  for (const json& e : p.doc.at("traceEvents")) {
    if (e.at("ph") != "X" || e.at("cat") != "mpi") continue;
    const json& a = e.at("args");
    if (a.contains("site") && a.at("site").get<std::string>().find("nonblocking.c:") != std::string::npos) ++with_site;
    if (e.at("name") == "MPI_Isend") {
      ++isends;
      CHECK(a.at("sent_bytes").get<long long>() > 0);
      CHECK(a.at("partner").get<int>() == 1 - e.at("pid").get<int>());
      CHECK(a.contains("tag"));
    }
    irecv_any += e.at("name") == "MPI_Irecv" && a.contains("partner") && a.at("partner") == "any";
    // Each rank's two Waitalls complete 4 requests: one slice of 4 records each, receiving 2 x 4
    // ints (block B) or 5 + 6 ints (block I).
    if (e.at("name") == "MPI_Waitall" && a.value("records", 0) == 4) {
      ++waitall_of_4;
      const long long got = a.at("received_bytes");
      CHECK((got == 2 * 4 * 4 || got == (5 + 6) * 4));
    }
  }
  CHECK(irecv_any == 2 * 2);
  CHECK(waitall_of_4 == 2 * 2);
  CHECK(isends > 0);
  CHECK(with_site > 0);
  for (const auto& [pid, v] : p.slices) CHECK(nests(v));
  CHECK(p.flow_out.size() == p.flow_in.size());
  CHECK(!p.flow_out.empty());
}

TEST_CASE("mstep export --perfetto of MPI_THREAD_MULTIPLE and intercommunicators: read whole, a track per thread") {
  const fs::path work = test_dir();
  const fs::path dir = work / "threads";
  if (!record_threads(dir, 10)) return;
  const fs::path file = work / "threads.json";
  REQUIRE(run({kMstep, "export", dir.string(), "--perfetto", file.string()}).code == 0);
  std::ifstream in(file);
  const json doc = json::parse(in);
  // threads.c: per rank, the main thread's MPI_Init_thread and MPI_Finalize, and two threads of 10
  // ping-pongs each with their own tag; the recorder's M-steps on a track of their own.
  std::map<std::pair<int, int>, std::vector<Slice>> tracks;  // (rank, tid) -> slices
  std::map<std::pair<int, int>, int> flows;                  // (rank, tid) -> arrow ends
  for (const json& e : doc.at("traceEvents")) {
    const std::string ph = e.at("ph");
    if (ph == "X") {
      const long long b = ns_of(e.at("ts"));
      tracks[{e.at("pid"), e.at("tid")}].push_back({b, b + ns_of(e.at("dur")), e.at("name"), e.at("cat")});
    } else if (ph == "s" || ph == "f") {
      ++flows[{e.at("pid"), e.at("tid")}];
    }
  }
  for (int rank = 0; rank < 2; ++rank) {
    INFO("rank " << rank);
    CHECK(tracks[{rank, 0}].size() == 2);
    for (const int tid : {1, 2}) {
      CHECK(tracks[{rank, tid}].size() == 20);
      CHECK(flows[{rank, tid}] == 20);  // 10 sends leave it, 10 receives land on it
    }
    CHECK(!tracks[{rank, 65536}].empty());
  }
  for (const auto& [key, v] : tracks) CHECK(nests(v));
  // An intercommunicator (comms.c), matched in memory: the report's messages, every one an arrow.
  const fs::path comms = work / "comms";
  check_recorded(record(comms, 4, {prog("comms")}), 4);
  const Result r = run({kMstep, "export", comms.string(), "--perfetto", (work / "comms.json").string()});
  REQUIRE(r.code == 0);
  const json rep = mstep_json("report", comms, {}, no_default_params(work));
  CHECK(r.out.find(std::to_string(rep.at("messages").get<int>()) + " messages as arrows (0 sends and receives unmatched)") !=
        std::string::npos);
  check_one_line_error(run({kMstep, "export", comms.string(), "--perfetto", (work / "c2.json").string(), "--params",
                            (work / "p.json").string()}), 1);
}

TEST_CASE("mstep export: one format at a time, and a clear line for what it cannot do") {
  const fs::path dir = test_dir() / "ring";
  REQUIRE(run({kMstep, "synth", "-o", dir.string(), "--ranks", "3", "--events", "300"}).code == 0);
  check_one_line_error(run({kMstep, "export", dir.string()}), 2);
  const fs::path out = dir.parent_path() / "a.json";
  check_one_line_error(run({kMstep, "export", dir.string(), "--goal", "a.goal", "--perfetto", out.string()}));
  check_one_line_error(run({kMstep, "export", dir.string(), "--goal", "a.goal", "--params", "p.json"}), 2);
  check_one_line_error(run({kMstep, "export", dir.string(), "--perfetto", out.string(), "--params", "/nonexistent/p.json"}), 1);
  CHECK(!fs::exists(out));  // nothing written by the commands that failed
  const Result bad = run({kMstep, "export", dir.string(), "--perfetto", "/nonexistent/x.json"});
  check_one_line_error(bad, 1);
  CHECK(bad.err == "mstep: cannot write /nonexistent/x.json\n");
  check_one_line_error(run({kMstep, "export", (test_dir() / "none").string(), "--perfetto", "x.json"}), 1);
  // A rank without its file: the others are exported, and the rank's absence is named.
  fs::remove(dir / "rank-00002.mst");
  const fs::path file = test_dir() / "two.json";
  const Result part = run({kMstep, "export", dir.string(), "--perfetto", file.string()});
  CHECK(part.code == 0);
  CHECK(part.err.find("rank-00002.mst") != std::string::npos);
  CHECK(load(file).process_names == 2);
}
