// What-if edits of the parameters (model/analysis/whatif.hpp), with every expected value worked out by
// hand; and what the replays make of them on hand-built two-rank traces (1 tick = 1 ns; times
// in the comments are microseconds).
#include <catch2/catch.hpp>

#include <algorithm>

#include <string>

#include "tests/unit/trace_builders.hpp"

#include "model/trace/matching.hpp"
#include "model/replay/replay.hpp"
#include "model/trace/timeline.hpp"
#include "model/analysis/whatif.hpp"

using namespace mstep;
using namespace mstep::model;

namespace {

constexpr double us = 1e-6;

// The machine of test_replay.cpp: L = 5, o = 2, g = 1, Gs = 0.001 us/B below s = 1000 B, Gl =
// 0.0005 us/B beyond, rendezvous from S = 10000 B; with MPM and linear sections too.
CalibrationParams machine() {
  CalibrationParams p;
  LogGPSParams l;
  l.L = 5 * us, l.o = 2 * us, l.g = 1 * us, l.Gs = 0.001 * us, l.Gl = 0.0005 * us, l.s = 1000, l.S = 10000;
  p.loggps = l;
  MpmParams m;
  m.g = 1e-9, m.L = 3 * us;
  p.mpm = m;
  LinearParams lin;
  lin.model.below = {1 * us, 1e9};
  lin.model.above = {4 * us, 2e9};
  lin.model.boundary = 10000;
  p.linear = lin;
  p.meta.source = "hand-made";
  return p;
}

Edit set(const std::string& text) { return parse_edit(text, EditKind::Set); }
Edit scale(const std::string& text) { return parse_edit(text, EditKind::Scale); }

EditedParams edit(const CalibrationParams& p, std::vector<Edit> edits) { return apply_edits(p, edits); }

// The message of the WhatIfError `f` throws ("" when it throws none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const WhatIfError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Ping-pong of `bytes` each way. Rank 0: Init exit at 1, computes 10, Send; Recv; computes 5;
// Finalize. Rank 1: Recv posted at 1; computes 3; Send back; computes 2; Finalize.
std::vector<RankTrace> pingpong(std::uint64_t bytes) {
  using test::ev;
  return {test::rank(0, 2, {ev(Op::Init, kNoPeer, 0, 1000), ev(Op::Send, 1, 11000, 12000, bytes),
                            ev(Op::Recv, 1, 12000, 40000, bytes), ev(Op::Finalize, kNoPeer, 45000, 46000)}),
          test::rank(1, 2, {ev(Op::Init, kNoPeer, 0, 1000), ev(Op::Recv, 0, 1000, 20000, bytes),
                            ev(Op::Send, 0, 23000, 24000, bytes), ev(Op::Finalize, kNoPeer, 26000, 27000)})};
}

ReplayResult replay(const std::vector<RankTrace>& traces, const LogGPSParams& p) {
  std::vector<const RankTrace*> ranks;
  for (const auto& t : traces) ranks.push_back(&t);
  const Matching m = match_messages(ranks);
  const Timeline tl(ranks);
  return replay_loggps(ReplayInput{ranks, m, tl}, p);
}

TraceDir in_memory(std::vector<RankTrace> traces) {
  TraceDir d;
  d.path = "pingpong";
  d.meta.present = d.meta.complete = true;
  d.meta.ranks = static_cast<int>(traces.size());
  for (auto& t : traces) d.ranks.emplace_back(std::move(t));
  return d;
}

const ModelComparison& model_of(const WhatIfResult& r, const std::string& name) {
  for (const auto& m : r.models)
    if (m.name == name) return m;
  FAIL("no model " << name);
  return r.models.front();
}

}  // namespace

TEST_CASE("whatif: values with units", "[whatif]") {
  CHECK(set("L=2us").value == 2e-6);
  CHECK(set("L=2us").quantity == Quantity::Time);
  CHECK(set("o = 150ns").value == Approx(150e-9).epsilon(1e-15));
  CHECK(set("g=1.5ms").value == Approx(1.5e-3).epsilon(1e-15));
  CHECK(set("L=0").value == 0);  // 0 needs no unit
  CHECK(set("Gl=0.1ns/B").value == Approx(0.1e-9).epsilon(1e-15));
  CHECK(set("Gs=56ps/B").value == Approx(56e-12).epsilon(1e-15));
  // A bandwidth for a per-byte gap is its inverse: 10 GB/s = 0.1 ns/B.
  CHECK(set("Gl=10GB/s").value == Approx(1e-10).epsilon(1e-15));
  CHECK(set("linear.B=10GB/s").value == 1e10);
  CHECK(set("linear.B=0.5ns/B").value == Approx(2e9).epsilon(1e-15));
  CHECK(set("linear.B=inf").value == std::numeric_limits<double>::infinity());
  CHECK(set("S=16k").value == 16384);
  CHECK(set("S=1m").value == 1048576);
  CHECK(set("s=128").value == 128);
  CHECK(set("S=1.5k").value == 1536);
  CHECK(set("mpm.L=-20us").value == Approx(-20e-6).epsilon(1e-15));  // fitted intercepts may be negative
  CHECK(set("cold=off").off);
  CHECK(scale("L=10").value == 10);
  CHECK(scale("G=0.5").value == 0.5);
}

TEST_CASE("whatif: bad edits are one clear line", "[whatif]") {
  const std::string unit = error_of([] { set("L=2xs"); });
  INFO(unit);
  CHECK(contains(unit, "L=2xs"));
  CHECK(contains(unit, "s, ms, us"));
  const std::string name = error_of([] { set("Q=1us"); });
  CHECK(contains(name, "unknown parameter 'Q'"));
  CHECK(contains(name, "L, o, Os, Or, g, G, Gs, Gl, s, S, H, mpm.g, mpm.L, linear.T0, linear.B"));
  CHECK(contains(error_of([] { set("L=2"); }), "L=2: a time needs a unit (s, ms, us"));
  CHECK(contains(error_of([] { set("linear.B=5Gb/s"); }), "linear.B=5Gb/s: unknown unit 'Gb/s' for a bandwidth"));  // 2 s or 2 us? say which
  CHECK(contains(error_of([] { set("L=-1us"); }), "cannot be negative"));
  CHECK(contains(error_of([] { set("L=abc"); }), "not a number"));
  CHECK(contains(error_of([] { set("L"); }), "NAME=VALUE"));
  CHECK(contains(error_of([] { set("L="); }), "no value"));
  CHECK(contains(error_of([] { set("S=1.3"); }), "whole number of bytes"));
  CHECK(contains(error_of([] { set("S=16q"); }), "unknown unit 'q' for a size"));
  CHECK(contains(error_of([] { set("L=inf"); }), "cannot be infinite"));
  CHECK(contains(error_of([] { set("linear.B=0GB/s"); }), "never deliver"));
  CHECK(contains(error_of([] { scale("L=2us"); }), "plain number"));
  CHECK(contains(error_of([] { scale("L=-2"); }), "cannot be negative"));
  CHECK(contains(error_of([] { set("cold=on"); }), "only 'off'"));
  for (const char* bad : {"L=2xs", "Q=1", "L=2", "S=1.3"}) {
    const std::string e = error_of([bad] { set(bad); });
    CHECK(e.find('\n') == std::string::npos);
  }
}

TEST_CASE("whatif: values for people", "[whatif]") {
  CHECK(format_quantity(Quantity::Time, 163e-9) == "163 ns");
  CHECK(format_quantity(Quantity::Time, 2e-6) == "2 us");
  CHECK(format_quantity(Quantity::Time, 1.5) == "1.5 s");
  CHECK(format_quantity(Quantity::Time, -21.1e-6) == "-21.1 us");
  CHECK(format_quantity(Quantity::Time, 0) == "0");
  CHECK(format_quantity(Quantity::PerByte, 56.5e-12) == "56.5 ps/B");
  CHECK(format_quantity(Quantity::Bandwidth, 5.6e9) == "5.6 GB/s");
  CHECK(format_quantity(Quantity::Bytes, 8256) == "8256 B");
  CHECK(format_quantity(Quantity::Bytes, std::numeric_limits<double>::infinity()) == "inf");
  CHECK(format_quantity(Quantity::Time, std::numeric_limits<double>::quiet_NaN()) == "none");
  CHECK(describe({"L", Quantity::Time, 163e-9, 2e-6}) == "L 163 ns -> 2 us");
}

TEST_CASE("whatif: set and scale", "[whatif]") {
  const CalibrationParams base = machine();
  SECTION("set L, with the change in one line") {
    const EditedParams e = edit(base, {set("L=2us")});
    CHECK(e.params.loggps->L == 2e-6);
    REQUIRE(e.changes.size() == 1);
    CHECK(describe(e.changes[0]) == "L 5 us -> 2 us");
    CHECK(e.params.meta.source == "hand-made");  // nothing else moves
    CHECK(e.params.loggps->o == base.loggps->o);
  }
  SECTION("G scales Gs and Gl together; o is o only") {
    const EditedParams e = edit(base, {scale("G=0.5"), scale("o=2")});
    CHECK(e.params.loggps->Gs == 0.0005 * us);
    CHECK(e.params.loggps->Gl == 0.00025 * us);
    CHECK(e.params.loggps->o == 4 * us);
    CHECK(e.params.loggps->Os == base.loggps->Os);
    REQUIRE(e.changes.size() == 3);
    CHECK(describe(e.changes[0]) == "Gs 1 ns/B -> 500 ps/B");
    CHECK(e.changes[1].name == "Gl");
  }
  SECTION("S: sizes and infinity") {
    CHECK(edit(base, {set("S=16k")}).params.loggps->S == 16384);
    const EditedParams inf = edit(base, {set("S=inf")});
    CHECK(inf.params.loggps->S == kInfiniteBytes);
    CHECK(describe(inf.changes[0]) == "S 10000 B -> inf");
    CHECK(edit(base, {set("S=inf"), scale("S=2")}).params.loggps->S == kInfiniteBytes);
    CHECK(edit(base, {scale("S=2")}).params.loggps->S == 20000);
  }
  SECTION("edits apply in order") {
    CHECK(edit(base, {set("L=2us"), scale("L=2")}).params.loggps->L == 4e-6);
    CHECK(edit(base, {scale("L=2"), set("L=2us")}).params.loggps->L == 2e-6);
  }
  SECTION("linear: T0 and B of both regimes; scaling B by 2 is twice the bandwidth") {
    const EditedParams e = edit(base, {scale("linear.B=2"), set("linear.T0=500ns")});
    CHECK(e.params.linear->model.below.B == 2e9);
    CHECK(e.params.linear->model.above.B == 4e9);
    CHECK(e.params.linear->model.below.T0 == Approx(500e-9).epsilon(1e-15));
    CHECK(e.params.linear->model.above.T0 == Approx(500e-9).epsilon(1e-15));
    CHECK(describe(e.changes[0]) == "linear.below.B 1 GB/s -> 2 GB/s");
    CHECK(edit(base, {set("linear.above.B=10GB/s")}).params.linear->model.below.B == 1e9);
    CHECK(contains(error_of([&] { edit(base, {scale("linear.B=0")}); }), "never deliver"));
  }
  SECTION("MPM g and L") {
    const EditedParams e = edit(base, {set("mpm.g=10GB/s"), scale("mpm.L=2")});
    CHECK(e.params.mpm->g == Approx(1e-10).epsilon(1e-15));
    CHECK(e.params.mpm->L == 6 * us);
  }
  SECTION("cold start: edited, or removed") {
    CalibrationParams c = base;
    ColdStart cold;
    cold.messages = 64, cold.send = 25 * us, cold.recv = 17 * us, cold.fresh_per_byte = 4e-9;
    c.cold = cold;
    const EditedParams e = edit(c, {set("cold.send=1us")});
    CHECK(e.params.cold->send == 1e-6);
    const EditedParams off = edit(c, {set("cold=off")});
    CHECK_FALSE(off.params.cold.has_value());
    REQUIRE(off.changes.size() == 4);
    CHECK(describe(off.changes[0]) == "cold.messages 64 -> 0");
    CHECK(describe(off.changes[1]) == "cold.send 25 us -> 0");
    // Nothing to remove: a note, not an error.
    const EditedParams none = edit(base, {set("cold=off")});
    CHECK(none.changes.empty());
    CHECK(none.notes.size() == 1);
  }
  SECTION("a section the baseline lacks") {
    CalibrationParams only_mpm;
    only_mpm.mpm = base.mpm;
    const std::string e = error_of([&] { edit(only_mpm, {set("L=2us")}); });
    CHECK(contains(e, "L: the baseline has no LogGPS parameters"));
    CHECK(contains(error_of([&] { edit(base, {set("cold.send=1us")}); }), "no cold-start terms"));
  }
}

TEST_CASE("whatif: the network of another file", "[whatif]") {
  const CalibrationParams base = machine();
  CalibrationParams net;
  LogGPSParams l = *base.loggps;
  l.L = 10 * us, l.S = kInfiniteBytes, l.P = 64;
  net.loggps = l;
  net.mpm = MpmParams{};
  net.mpm->g = 2e-9, net.mpm->L = -1 * us;
  net.meta.source = "preset";
  const EditedParams e = adopt_network(base, net, "preset.json");
  CHECK(e.params.loggps->L == 10 * us);
  CHECK(e.params.loggps->S == kInfiniteBytes);
  CHECK(e.params.loggps->P == 2);               // the calibration run's, not the network's
  CHECK(e.params.meta.source == "hand-made");  // the baseline's metadata
  CHECK(e.params.linear->model.below.B == 1e9);  // not in the file: kept, and said so
  REQUIRE(e.notes.size() == 1);
  CHECK(contains(e.notes[0], "preset.json has no linear model (\"linear\"): kept from the baseline"));
  std::vector<std::string> lines;
  for (const auto& c : e.changes) lines.push_back(describe(c));
  CHECK(lines == std::vector<std::string>{"L 5 us -> 10 us", "S 10000 B -> inf", "mpm.g 1 ns/B -> 2 ns/B",
                                          "mpm.L 3 us -> -1 us"});
}

TEST_CASE("whatif: the other network's rendezvous comes with it, and a note says how it is charged", "[whatif]") {
  const CalibrationParams base = machine();  // MODELS.md's rendezvous
  CalibrationParams net;
  LogGPSParams l = *base.loggps;
  l.H = 25 * us, l.rendezvous_model = RendezvousModel::Delivered, l.rendezvous_push = true;
  net.loggps = l;
  const EditedParams e = adopt_network(base, net, "tcp.json");
  CHECK(e.params.loggps->H == 25 * us);
  CHECK(e.params.loggps->rendezvous_model == RendezvousModel::Delivered);
  CHECK(e.params.loggps->rendezvous_push);
  CHECK(std::any_of(e.notes.begin(), e.notes.end(), [](const std::string& n) {
    return contains(n, "tcp.json charges the rendezvous as calibrated, the data leaving only with its sender inside "
                       "MPI (the baseline: as MODELS.md)");
  }));
  std::vector<std::string> lines;
  for (const auto& c : e.changes) lines.push_back(describe(c));
  CHECK(lines == std::vector<std::string>{"H 0 -> 25 us"});
  // The same network again: nothing to say about the rendezvous.
  for (const std::string& n : adopt_network(e.params, net, "tcp.json").notes) CHECK_FALSE(contains(n, "rendezvous"));
}

TEST_CASE("whatif: the measured collectives go with the network they were measured on", "[whatif]") {
  CalibrationParams base = machine();
  base.collectives[Op::Barrier] = CollectiveTimes{{0}, {1e-6}, {0.5e-6}};
  CalibrationParams net;
  net.loggps = *base.loggps;
  SECTION("the other file has its own: they are charged") {
    net.collectives[Op::Barrier] = CollectiveTimes{{0}, {16e-6}, {12e-6}};
    const EditedParams e = adopt_network(base, net, "tcp.json");
    CHECK(e.params.collectives == net.collectives);
    CHECK(std::any_of(e.notes.begin(), e.notes.end(),
                      [](const std::string& n) { return contains(n, "collectives: tcp.json's measured calls are charged"); }));
  }
  SECTION("it has none: the baseline's stay, and the notes say so") {
    const EditedParams e = adopt_network(base, net, "tcp.json");
    CHECK(e.params.collectives == base.collectives);
    CHECK(std::any_of(e.notes.begin(), e.notes.end(), [](const std::string& n) {
      return contains(n, "tcp.json has no measured collectives: the baseline's are kept");
    }));
  }
}

TEST_CASE("whatif: S = inf replays exactly as LogGP", "[whatif][replay]") {
  // 20000 B each way: above S = 10000, so LogGPS and LogGP differ on this trace.
  const auto traces = pingpong(20000);
  const CalibrationParams base = machine();
  const EditedParams e = edit(base, {set("S=inf")});
  const ReplayResult loggp = replay(traces, as_loggp(*base.loggps));
  const ReplayResult loggps = replay(traces, *base.loggps);
  const ReplayResult whatif = replay(traces, *e.params.loggps);
  CHECK(loggps.predicted_s != loggp.predicted_s);
  CHECK(whatif.predicted_s == loggp.predicted_s);
  CHECK(whatif.finish_s == loggp.finish_s);

  // The same through compare_whatif, against every model's baseline.
  const WhatIfResult r = compare_whatif(in_memory(pingpong(20000)), base, e.params);
  CHECK(model_of(r, "LogGPS").whatif_s == model_of(r, "LogGP").baseline_s);
  CHECK(model_of(r, "LogGPS").baseline_s == loggps.predicted_s);
  CHECK(model_of(r, "LogGP").speedup == 1.0);
  CHECK(model_of(r, "MPM").speedup == 1.0);
  CHECK(model_of(r, "linear").speedup == 1.0);
  REQUIRE(r.per_rank.size() == 2);
  CHECK(r.per_rank[0].whatif_s == loggp.finish_s[0]);
  CHECK(std::max(r.per_rank[0].whatif_s, r.per_rank[1].whatif_s) == model_of(r, "LogGPS").whatif_s);
}

TEST_CASE("whatif: scaling L moves a ping-pong by one L per message on the path", "[whatif][replay]") {
  // 100 B each way, eager. Baseline (test_replay.cpp's "eager ping-pong"): rank 1 finishes at
  // 26.1, rank 0 at 36.2. With L x 3 (15 instead of 5) the first message arrives 10 later, so
  // rank 1 finishes at 36.1; rank 0 waits for both messages: 56.2.
  const auto traces = pingpong(100);
  const CalibrationParams base = machine();
  const EditedParams e = edit(base, {scale("L=3")});
  CHECK(e.params.loggps->L == Approx(15 * us));
  const ReplayResult b = replay(traces, *base.loggps);
  const ReplayResult w = replay(traces, *e.params.loggps);
  CHECK(b.finish_s[0] == Approx(36.2 * us));
  CHECK(b.finish_s[1] == Approx(26.1 * us));
  CHECK(w.finish_s[0] == Approx(56.2 * us));
  CHECK(w.finish_s[1] == Approx(36.1 * us));
  CHECK(w.predicted_s - b.predicted_s == Approx(2 * (15 - 5) * us));

  const WhatIfResult r = compare_whatif(in_memory(pingpong(100)), base, e.params);
  CHECK(model_of(r, "LogGPS").speedup == Approx(36.2 / 56.2));
  // L x 1 changes nothing, exactly.
  const WhatIfResult same = compare_whatif(in_memory(pingpong(100)), base, edit(base, {scale("L=1")}).params);
  for (const auto& m : same.models) {
    INFO(m.name);
    CHECK(m.available);
    CHECK(m.speedup == 1.0);
  }
  // The late sender of rank 1's first Recv (posted at 1, send at 11): predicted at the measured
  // start times, receiver wait = T1 + T2 - (tr - ts) = 2 + 5.1 + 10 = 17.1; with L = 15, 27.1.
  bool found = false;
  for (const auto& s : r.sites) {
    if (s.site.kind != WaitKind::LateSender || s.site.rank != 1) continue;
    found = true;
    CHECK(s.site.predicted_wait_s == Approx(17.1 * us));
    CHECK(s.whatif_predicted_s == Approx(27.1 * us));
  }
  CHECK(found);
}
