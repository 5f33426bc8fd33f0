// The collectives measured at calibration (model/params/collective_times.hpp): the residual's
// interpolation, the parameter file's "collectives" and its one-line errors, the model's charge
// at 2 ranks (model/replay/collective_charge.hpp), the replay adding the residual, and libmstep's
// substitutes' own (set_substitute_times, substitute_residual), all by hand.
#include <catch2/catch.hpp>

#include <cmath>

#include "model/params/params.hpp"
#include "model/trace/substitutes.hpp"
#include "model/replay/collective_charge.hpp"
#include "replay_fixtures.hpp"

using namespace mstep;
using namespace mstep::model;
using namespace mstep::replay_fixtures;

namespace {

CollectiveTimes times(std::vector<std::uint64_t> bytes, std::vector<double> measured, std::vector<double> modelled) {
  return CollectiveTimes{std::move(bytes), std::move(measured), std::move(modelled)};
}

std::string params_with(const std::string& collectives) {
  return R"({"L": 5e-6, "o": 2e-6, "Os": 0, "Or": 0, "g": 1e-6, "Gs": 0, "Gl": 0, "s": 1000, "S": 10000, "collectives": )" +
         collectives + "}";
}

LogGPSParams barrier_machine() {  // o = 2, L = 5, g = 1, no per-byte costs: a round is 9
  LogGPSParams p;
  p.o = 2 * us;
  p.L = 5 * us;
  p.g = 1 * us;
  return p;
}

}  // namespace

TEST_CASE("a collective's residual: measured - model, linear between the sizes and along the end segments", "[collectives]") {
  // Residuals 1 us at 8 B and 3 us at 1024 B: 2 us over 1016 B.
  const CollectiveTimes t = times({8, 1024}, {2e-6, 4e-6}, {1e-6, 1e-6});
  CHECK(t.residual(8) == Approx(1e-6));
  CHECK(t.residual(516) == Approx(2e-6));
  CHECK(t.residual(1024) == Approx(3e-6));
  CHECK(t.residual(2040) == Approx(5e-6));             // on along the last segment
  CHECK(t.residual(0) == Approx(1e-6 - 8 * 2e-6 / 1016));  // back along the first
  CHECK(times({0}, {1.3e-6}, {0.7e-6}).residual(123456) == Approx(0.6e-6));  // one size: a constant
  CHECK(CollectiveTimes{}.residual(8) == 0);
  // libmstep's substitute, at the same sizes: 5 and 2 us beyond the model's.
  CollectiveTimes s = t;
  CHECK(s.substitute_residual(8) == 0);  // not measured
  s.substitute_s = {6e-6, 3e-6};
  CHECK(s.substitute_residual(8) == Approx(5e-6));
  CHECK(s.substitute_residual(516) == Approx(3.5e-6));
  CHECK(s.substitute_residual(1024) == Approx(2e-6));
  CHECK(s.residual(516) == Approx(2e-6));  // MPICH's unchanged
  // Isolated: each call after 100 us of computation, 5 and 2 us beyond the model's isolated charge.
  CollectiveTimes i = t;
  CHECK(i.residual_after(8, 1.0) == Approx(1e-6));  // not measured: back to back's
  i.isolated_gap_s = 100e-6;
  i.isolated_measured_s = {7e-6, 8e-6};
  i.isolated_model_s = {2e-6, 6e-6};
  REQUIRE(i.has_isolated());
  CHECK(i.residual_after(8, 0) == Approx(1e-6));        // back to back
  CHECK(i.residual_after(8, 100e-6) == Approx(5e-6));   // isolated
  CHECK(i.residual_after(8, 1.0) == Approx(5e-6));      // and beyond
  CHECK(i.residual_after(8, 25e-6) == Approx(2e-6));    // a quarter of the way
  CHECK(i.residual_after(516, 50e-6) == Approx((2 + 3.5) / 2 * 1e-6));  // between the sizes too
  CHECK(i.residual_after(1024, 100e-6) == Approx(2e-6));
  // The substitute's isolated loop: 9 and 5 us against the same isolated charge, 7 and -1 us beyond.
  i.substitute_s = {6e-6, 3e-6};  // 5 and 2 us beyond back to back
  CHECK(i.substitute_residual_after(8, 100e-6) == Approx(5e-6));  // its isolated loop not measured
  i.substitute_isolated_s = {9e-6, 5e-6};
  REQUIRE(i.has_substitute_isolated());
  CHECK(i.substitute_residual_after(8, 0) == Approx(5e-6));
  CHECK(i.substitute_residual_after(8, 100e-6) == Approx(7e-6));
  CHECK(i.substitute_residual_after(8, 50e-6) == Approx(6e-6));
  CHECK(i.substitute_residual_after(1024, 200e-6) == Approx(-1e-6));
  CHECK(i.residual_after(8, 100e-6) == Approx(5e-6));  // MPICH's unchanged
  i.isolated_model_s.clear();
  CHECK_FALSE(i.has_isolated());
  CHECK_FALSE(i.has_substitute_isolated());
  CHECK(i.residual_after(8, 100e-6) == Approx(1e-6));
}

TEST_CASE("a substitute's times: its time under the recorder less the recorder's cost per call", "[collectives]") {
  CollectiveTable table;
  table[Op::Allreduce] = times({8, 1024}, {1.0e-6, 2.0e-6}, {0.7e-6, 1.0e-6});
  table[Op::Bcast] = times({8}, {0.5e-6}, {0.3e-6});
  table[Op::Gather] = times({8}, {0.6e-6}, {0.3e-6});
  table[Op::Barrier] = times({0}, {0.9e-6}, {0.7e-6});
  table[Op::Sendrecv] = times({8}, {2.0e-6}, {1.4e-6});
  CollectiveTable subs;
  subs[Op::Allreduce] = times({8, 1024}, {2.0e-6, 3.0e-6}, {});
  subs[Op::Bcast] = times({8}, {0.2e-6}, {});                // below the recorder's cost: 0
  subs[Op::Gather] = times({8, 1024}, {0.9e-6, 1e-6}, {});   // other sizes than table's: not set
  subs[Op::Sendrecv] = times({8}, {2.2e-6}, {});             // no substitute of libmstep's: not set
  // The recorder's cost per call: 0.25 us.
  CHECK(set_substitute_times(table, subs, 0.25e-6) == 2);
  REQUIRE(table[Op::Allreduce].substitute_s.size() == 2);
  CHECK(table[Op::Allreduce].substitute_s[0] == Approx(1.75e-6));  // 2.0 - 0.25
  CHECK(table[Op::Allreduce].substitute_s[1] == Approx(2.75e-6));  // 3.0 - 0.25
  CHECK(table[Op::Allreduce].substitute_residual(8) == Approx(1.05e-6));
  CHECK(table[Op::Sendrecv].substitute_s.empty());
  CHECK(table[Op::Bcast].substitute_s == std::vector<double>{0.0});
  CHECK(table[Op::Gather].substitute_s.empty());
  CHECK(table[Op::Barrier].substitute_s.empty());  // no substitute run
  CHECK(table[Op::Allreduce].substitute_isolated_s.empty());  // no isolated loop in either
  // The isolated loop, where both have it: less the recorder's cost too.
  table[Op::Allreduce].isolated_gap_s = 100e-6;
  table[Op::Allreduce].isolated_measured_s = {1.5e-6, 2.5e-6};
  table[Op::Allreduce].isolated_model_s = {0.7e-6, 1.0e-6};
  subs[Op::Allreduce].isolated_gap_s = 100e-6;
  subs[Op::Allreduce].isolated_measured_s = {2.5e-6, 3.5e-6};
  CHECK(set_substitute_times(table, subs, 0.25e-6) == 2);
  CHECK(table[Op::Allreduce].substitute_isolated_s == std::vector<double>{2.25e-6, 3.25e-6});
  CHECK(table[Op::Allreduce].substitute_residual_after(8, 100e-6) == Approx(1.55e-6));
  // No substitute measured: nothing set.
  CollectiveTable none = table;
  none[Op::Allreduce].substitute_s.clear();
  CHECK(set_substitute_times(none, {}, 0.25e-6) == 0);
  CHECK(none[Op::Allreduce].substitute_s.empty());
  // A recorded probe faster than the native one (noise), or none: no cost taken off.
  for (const double recorder : {-0.1e-6, std::nan("")}) {
    CHECK(set_substitute_times(none, subs, recorder) == 2);
    CHECK(none[Op::Allreduce].substitute_s == std::vector<double>{2.0e-6, 3.0e-6});
  }
}

TEST_CASE("the parameter file's collectives: read, written back, and refused in one line", "[collectives][params]") {
  const CalibrationParams p = parse_params(
      params_with(R"({"MPI_Allreduce": {"bytes": [8, 1024], "measured_s": [2e-6, 4e-6], "model_s": [1e-6, 1e-6]},
                      "MPI_Barrier": {"bytes": [0], "measured_s": [1.3e-6], "model_s": [0.7e-6]}})"),
      "p.json");
  REQUIRE(p.collectives.size() == 2);
  CHECK(p.collectives.at(Op::Allreduce) == times({8, 1024}, {2e-6, 4e-6}, {1e-6, 1e-6}));
  CHECK(p.collectives.at(Op::Barrier).residual(0) == Approx(0.6e-6));
  CHECK(parse_params(params_to_json(p), "again").collectives == p.collectives);
  // An exchange (MPI_Sendrecv with one partner) is measured beside them.
  const CalibrationParams x = parse_params(
      params_with(R"({"MPI_Sendrecv": {"bytes": [8, 8192], "measured_s": [7e-6, 60e-6], "model_s": [5e-6, 40e-6]}})"), "x.json");
  CHECK(x.collectives.at(Op::Sendrecv).residual(8) == Approx(2e-6));
  CHECK(parse_params(params_to_json(x), "again").collectives == x.collectives);
  // And the same exchange as MPI_Irecv, MPI_Isend and MPI_Waitall, keyed by the Waitall.
  const CalibrationParams w = parse_params(
      params_with(R"({"MPI_Waitall": {"bytes": [8], "measured_s": [8e-6], "model_s": [5e-6]}})"), "w.json");
  CHECK(w.collectives.at(Op::Waitall).residual(1024) == Approx(3e-6));
  CHECK(parse_params(params_to_json(w), "again").collectives == w.collectives);
  // libmstep's substitute beside MPICH's (optional).
  const CalibrationParams s = parse_params(
      params_with(R"({"MPI_Allreduce": {"bytes": [8, 1024], "measured_s": [2e-6, 4e-6], "model_s": [1e-6, 1e-6], "substitute_s": [3e-6, 4.5e-6]}})"),
      "s.json");
  CHECK(s.collectives.at(Op::Allreduce).substitute_residual(8) == Approx(2e-6));
  CHECK(s.collectives.at(Op::Allreduce).residual(8) == Approx(1e-6));
  CHECK(parse_params(params_to_json(s), "again").collectives == s.collectives);
  CHECK(params_to_json(p).find("substitute_s") == std::string::npos);  // none measured: not written
  // The isolated loop's (optional).
  const CalibrationParams iso = parse_params(
      params_with(R"({"MPI_Bcast": {"bytes": [8], "measured_s": [2e-6], "model_s": [1e-6],
                      "isolated": {"gap_s": 1e-4, "measured_s": [6e-6], "model_s": [2e-6]}}})"),
      "i.json");
  CHECK(iso.collectives.at(Op::Bcast).residual_after(8, 1e-4) == Approx(4e-6));
  CHECK(iso.collectives.at(Op::Bcast).residual_after(8, 0) == Approx(1e-6));
  CHECK(parse_params(params_to_json(iso), "again").collectives == iso.collectives);
  const CalibrationParams isub = parse_params(
      params_with(R"({"MPI_Bcast": {"bytes": [8], "measured_s": [2e-6], "model_s": [1e-6], "substitute_s": [3e-6],
                      "isolated": {"gap_s": 1e-4, "measured_s": [6e-6], "model_s": [2e-6], "substitute_s": [5e-6]}}})"),
      "s.json");
  CHECK(isub.collectives.at(Op::Bcast).substitute_residual_after(8, 1e-4) == Approx(3e-6));
  CHECK(parse_params(params_to_json(isub), "again").collectives == isub.collectives);
  CHECK(params_to_json(p).find("isolated") == std::string::npos);

  auto error = [](const std::string& collectives) {
    try {
      (void)parse_params(params_with(collectives), "p.json");
    } catch (const ParamsError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(error(R"({"MPI_Send": {"bytes": [8], "measured_s": [1e-6], "model_s": [1e-6]}})") ==
        "p.json: key 'collectives.MPI_Send': not a blocking collective mstep records (MPI_Barrier, MPI_Bcast, ...), MPI_Sendrecv nor MPI_Waitall");
  CHECK(error(R"({"MPI_Iallreduce": {"bytes": [8], "measured_s": [1e-6], "model_s": [1e-6]}})") ==
        "p.json: key 'collectives.MPI_Iallreduce': not a blocking collective mstep records (MPI_Barrier, MPI_Bcast, ...), MPI_Sendrecv nor MPI_Waitall");
  CHECK(error(R"({"MPI_Bcast": {"bytes": [1024, 8], "measured_s": [1e-6, 1e-6], "model_s": [1e-6, 1e-6]}})") ==
        "p.json: key 'collectives.MPI_Bcast.bytes[1]': 8 is out of range: expected increasing sizes");
  CHECK(error(R"({"MPI_Bcast": {"bytes": [8], "measured_s": [1e-6, 2e-6], "model_s": [1e-6]}})") ==
        "p.json: key 'collectives.MPI_Bcast.measured_s': has 2 values for 1 sizes");
  CHECK(error(R"({"MPI_Bcast": {"bytes": [8], "measured_s": [-1e-6], "model_s": [1e-6]}})") ==
        "p.json: key 'collectives.MPI_Bcast.measured_s[0]': -1e-06 is out of range: expected seconds >= 0");
  CHECK(error(R"({"MPI_Bcast": {"bytes": [8], "measured_s": [1e-6]}})") == "p.json: key 'collectives.MPI_Bcast.model_s': missing");
  CHECK(error(R"([1, 2])") == "p.json: key 'collectives': expected an object, got [1,2]");
  CHECK(error(R"({"MPI_Bcast": {"bytes": [8, 16], "measured_s": [1e-6, 1e-6], "model_s": [1e-6, 1e-6], "substitute_s": [1e-6]}})") ==
        "p.json: key 'collectives.MPI_Bcast.substitute_s': has 1 values for 2 sizes");
  CHECK(error(R"({"MPI_Bcast": {"bytes": [8], "measured_s": [1e-6], "model_s": [1e-6], "substitute": [1e-6]}})") ==
        "p.json: key 'collectives.MPI_Bcast.substitute': unknown key (bytes, measured_s, model_s, substitute_s, isolated)");
  CHECK(error(R"({"MPI_Bcast": {"bytes": [8], "measured_s": [1e-6], "model_s": [1e-6], "isolated": {"gap_s": 0, "measured_s": [1e-6], "model_s": [1e-6]}}})") ==
        "p.json: key 'collectives.MPI_Bcast.isolated.gap_s': expected seconds of computation before each call, above 0 and at most 1");
  CHECK(error(R"({"MPI_Bcast": {"bytes": [8], "measured_s": [1e-6], "model_s": [1e-6], "isolated": {"gap_s": 1e-4, "measured_s": [1e-6]}}})") ==
        "p.json: key 'collectives.MPI_Bcast.isolated.model_s': missing");
  CHECK(error(R"({"MPI_Bcast": {"bytes": [8], "measured_s": [1e-6], "model_s": [1e-6], "isolated": {"gap_s": 1e-4, "measured_s": [1e-6, 2e-6], "model_s": [1e-6]}}})") ==
        "p.json: key 'collectives.MPI_Bcast.isolated.measured_s': has 2 values for 1 sizes");
  CHECK(error(R"({"MPI_Bcast": {"bytes": [8], "measured_s": [1e-6], "model_s": [1e-6], "isolated": {"gap_s": 1e-4, "measured_s": [1e-6], "model_s": [1e-6], "calls": 5}}})") ==
        "p.json: key 'collectives.MPI_Bcast.isolated.calls': unknown key (gap_s, measured_s, model_s, substitute_s)");
  CHECK(error(R"({"MPI_Bcast": {"bytes": [8], "measured_s": [1e-6], "model_s": [1e-6], "isolated": {"gap_s": 1e-4, "measured_s": [1e-6], "model_s": [1e-6], "substitute_s": []}}})") ==
        "p.json: key 'collectives.MPI_Bcast.isolated.substitute_s': has 0 values for 1 sizes");
  CHECK(error(R"({"MPI_Bcast": {"bytes": [8], "measured_s": [1e-6], "model_s": [1e-6], "isolated": 3}})") ==
        "p.json: key 'collectives.MPI_Bcast.isolated': expected an object, got 3");
}

TEST_CASE("the model's charge for back-to-back collectives at 2 ranks", "[collectives][replay]") {
  // A 2-rank barrier is one dissemination round: o + L + o = 9 us, call after call.
  CHECK(collective_charge(barrier_machine(), ColdStart{}, Op::Barrier, 0) == Approx(9 * us));
  // A 2-rank Bcast of 8 B (binomial tree: the root sends to the other rank), eager, k calls: the
  // root's calls take o = 2 each, one after the other; the other rank's first waits for the data
  // (2 + 5 + 2 = 9), and each later one finds the next message there 2 later (sent 2 apart): 2.
  // Mean per call: (2k + 9 + 2(k - 1)) / 2k = 2 + 3.5 / k.
  CHECK(collective_charge(barrier_machine(), ColdStart{}, Op::Bcast, 8, 1) == Approx(5.5 * us));
  CHECK(collective_charge(barrier_machine(), ColdStart{}, Op::Bcast, 8, 16) == Approx((2 + 3.5 / 16) * us));
  // An exchange of 8 B with MPI_Sendrecv, both ranks at once: each send's T1 = 2, its message there
  // at 2 + 5 = 7, received by 9 (the receive's T3 after the send's is 4, sooner): 9 a call.
  CHECK(collective_charge(barrier_machine(), ColdStart{}, Op::Sendrecv, 8, 1) == Approx(9 * us));
  CHECK(collective_charge(barrier_machine(), ColdStart{}, Op::Sendrecv, 8, 16) == Approx(9 * us));
  // The same exchange as MPI_Irecv, MPI_Isend and MPI_Waitall, the three calls together: the Irecv
  // posts at no charge, the Isend's T1 is o = 2, its message there at 2 + 5, received by 9.
  CHECK(collective_charge(barrier_machine(), ColdStart{}, Op::Waitall, 8, 1) == Approx(9 * us));
  CHECK(collective_charge(barrier_machine(), ColdStart{}, Op::Waitall, 8, 16) == Approx(9 * us));
  // Isolated, 100 us of computation before every call: inside the calls only. A barrier still
  // takes its round; the Bcast's root leaves 7 us before the other rank, so it enters (and sends)
  // 7 us before it, and its message, there o + L = 7 after the send, waits for the receiver's
  // entry: the receiver's later calls take o = 2, as back to back.
  CHECK(collective_charge(barrier_machine(), ColdStart{}, Op::Barrier, 0, 16, 100e-6) == Approx(9 * us));
  CHECK(collective_charge(barrier_machine(), ColdStart{}, Op::Bcast, 8, 16, 100e-6) == Approx((2 + 3.5 / 16) * us));
  CHECK(collective_charge(barrier_machine(), ColdStart{}, Op::Sendrecv, 8, 16, 100e-6) == Approx(9 * us));
}

TEST_CASE("the replay adds an exchange's calibrated residual to each MPI_Sendrecv with one partner", "[collectives][replay]") {
  CollectiveTable table;
  table[Op::Sendrecv] = times({8}, {12e-6}, {9e-6});  // 3 us beyond the messages
  // Every rank: MPI_Sendrecv of 8 B at 2, to `to` and from `from`; Finalize after it.
  auto sendrecv_run = [](int n, auto to, auto from) {
    std::vector<RankTrace> t;
    for (int r = 0; r < n; ++r) {
      Event out = send(Op::Sendrecv, 2, 9, to(r), 8), in = recv(Op::Sendrecv, 2, 9, from(r), 8);
      in.flags = kContinuation | kRecvHalf;
      t.push_back(make_rank(r, n, {ev(Op::Init, 0, 1), out, in, ev(Op::Finalize, 9, 10)}));
    }
    return t;
  };
  SECTION("2 ranks exchanging: 3 us more") {
    const Run run(sendrecv_run(2, [](int r) { return 1 - r; }, [](int r) { return 1 - r; }));
    ReplayInput in = run.input();
    CHECK(replay_loggps(in, barrier_machine()).finish_s[0] == Approx(10 * us));  // 2 + 9, less zero at 1
    in.collective_times = &table;
    const ReplayResult r = replay_loggps(in, barrier_machine());
    CHECK(r.finish_s[0] == Approx(13 * us));
    CHECK(r.finish_s[1] == Approx(13 * us));
    // Isolated from 2 us of computation on, 20 us beyond the messages; this one had 1 us before it.
    table[Op::Sendrecv].isolated_gap_s = 2e-6;
    table[Op::Sendrecv].isolated_measured_s = {29e-6};
    table[Op::Sendrecv].isolated_model_s = {9e-6};
    CHECK(replay_loggps(in, barrier_machine()).finish_s[0] == Approx(21.5 * us));  // 3 + 17 / 2 more
  }
  SECTION("a ring shift (to the right, from the left) is no exchange: nothing more") {
    const Run run(sendrecv_run(3, [](int r) { return (r + 1) % 3; }, [](int r) { return (r + 2) % 3; }));
    ReplayInput in = run.input();
    const ReplayResult before = replay_loggps(in, barrier_machine());
    in.collective_times = &table;
    const ReplayResult after = replay_loggps(in, barrier_machine());
    CHECK(before.finish_s[0] == Approx(10 * us));
    CHECK(after.finish_s == before.finish_s);
  }
}

TEST_CASE("the replay adds an exchange's calibrated residual to each MPI_Waitall of an Irecv and an Isend with one partner posted just before", "[collectives][replay]") {
  CollectiveTable table;
  table[Op::Waitall] = times({8}, {12e-6}, {9e-6});  // 3 us beyond the messages
  // Every rank: the two posts at 2 (in the order `recv_first` says, or with an MPI_Iprobe that
  // finds nothing between them and the Waitall), then MPI_Waitall of both from 2 to 9; Finalize.
  auto exchange_run = [](int n, auto to, auto from, bool recv_first, bool call_between) {
    std::vector<RankTrace> t;
    for (int r = 0; r < n; ++r) {
      const Event post = irecv(2, 2, from(r), 1), out = send(Op::Isend, 2, 2, to(r), 8, 2);
      Event got = recv(Op::Waitall, 2, 9, from(r), 8, 1), done = ev(Op::Waitall, 2, 9);
      done.request = 2;
      done.flags = kContinuation;
      std::vector<Event> events{ev(Op::Init, 0, 1)};
      events.push_back(recv_first ? post : out);
      events.push_back(recv_first ? out : post);
      if (call_between) {
        Event probe = ev(Op::Iprobe, 2, 2, -1);
        probe.flags = kIncomplete;
        events.push_back(probe);
      }
      events.push_back(got);
      events.push_back(done);
      events.push_back(ev(Op::Finalize, 9, 10));
      t.push_back(make_rank(r, n, std::move(events)));
    }
    return t;
  };
  auto other = [](int r) { return 1 - r; };
  const Run plain(exchange_run(2, other, other, true, false));
  ReplayInput base_in = plain.input();
  const double base = replay_loggps(base_in, barrier_machine()).finish_s[0];
  CHECK(base == Approx(10 * us));  // posted at 2, received by 2 + 9, less zero at 1
  SECTION("2 ranks exchanging, either post first: 3 us more") {
    for (const bool recv_first : {true, false}) {
      const Run run(exchange_run(2, other, other, recv_first, false));
      ReplayInput in = run.input();
      CHECK(replay_loggps(in, barrier_machine()).finish_s[0] == Approx(base));
      in.collective_times = &table;
      const ReplayResult r = replay_loggps(in, barrier_machine());
      CHECK(r.finish_s[0] == Approx(base + 3 * us));
      CHECK(r.finish_s[1] == Approx(base + 3 * us));
    }
  }
  SECTION("isolated: by the computation before the MPI_Irecv") {
    table[Op::Waitall].isolated_gap_s = 2e-6;
    table[Op::Waitall].isolated_measured_s = {29e-6};
    table[Op::Waitall].isolated_model_s = {9e-6};  // 20 us beyond the messages
    const Run first(exchange_run(2, other, other, true, false));
    ReplayInput in = first.input();
    in.collective_times = &table;
    CHECK(replay_loggps(in, barrier_machine()).finish_s[0] == Approx(base + 11.5 * us));  // 1 us of 2: 3 + 17 / 2
    // The Isend first takes the computation; the Irecv after it has none: back to back.
    const Run second(exchange_run(2, other, other, false, false));
    ReplayInput in2 = second.input();
    in2.collective_times = &table;
    CHECK(replay_loggps(in2, barrier_machine()).finish_s[0] == Approx(base + 3 * us));
  }
  SECTION("a Sendrecv's entry is not the Waitall's") {
    CollectiveTable sendrecv_only;
    sendrecv_only[Op::Sendrecv] = times({8}, {12e-6}, {9e-6});
    ReplayInput in = plain.input();
    in.collective_times = &sendrecv_only;
    CHECK(replay_loggps(in, barrier_machine()).finish_s[0] == Approx(base));
  }
  SECTION("a call between the posts and the Waitall, or a ring shift: nothing more") {
    const Run between(exchange_run(2, other, other, true, true));
    ReplayInput in = between.input();
    const double before = replay_loggps(in, barrier_machine()).finish_s[0];
    in.collective_times = &table;
    CHECK(replay_loggps(in, barrier_machine()).finish_s[0] == Approx(before));
    const Run ring(exchange_run(3, [](int r) { return (r + 1) % 3; }, [](int r) { return (r + 2) % 3; }, true, false));
    ReplayInput ring_in = ring.input();
    const ReplayResult ring_before = replay_loggps(ring_in, barrier_machine());
    ring_in.collective_times = &table;
    CHECK(replay_loggps(ring_in, barrier_machine()).finish_s == ring_before.finish_s);
  }
}

TEST_CASE("the replay adds a collective's calibrated residual, per round of its algorithm", "[collectives][replay]") {
  CollectiveTable table;
  table[Op::Barrier] = times({0}, {12e-6}, {9e-6});  // 3 us beyond the messages
  auto barrier_run = [](int n) {
    std::vector<RankTrace> t;
    for (int r = 0; r < n; ++r) t.push_back(make_rank(r, n, {ev(Op::Init, 0, 1), ev(Op::Barrier, 2, 9), ev(Op::Finalize, 9, 10)}));
    return t;
  };
  SECTION("2 ranks: one round, 3 us more") {
    const Run run(barrier_run(2));
    ReplayInput in = run.input();
    CHECK(replay_loggps(in, barrier_machine()).finish_s[0] == Approx(10 * us));  // 2 + 9, less zero at 1
    in.collective_times = &table;
    CHECK(replay_loggps(in, barrier_machine()).finish_s[0] == Approx(13 * us));
  }
  SECTION("4 ranks: two rounds (as test_replay's 4-rank barrier), 2 x 3 us more") {
    const Run run(barrier_run(4));
    ReplayInput in = run.input();
    in.collective_times = &table;
    const ReplayResult r = replay_loggps(in, barrier_machine());
    for (int k = 0; k < 4; ++k) CHECK(r.finish_s[static_cast<std::size_t>(k)] == Approx((19 + 6) * us));
  }
  SECTION("libmstep's substitute pays its own residual, not MPICH's") {
    const Run run(barrier_run(2));
    ReplayInput in = run.input();
    in.substitutes.barrier = CollAlgo::BarrierDissemination;
    in.collective_times = &table;
    CHECK(replay_loggps(in, barrier_machine()).finish_s[0] == Approx(10 * us));  // not timed: its messages alone
    table[Op::Barrier].substitute_s = {15e-6};  // 6 us beyond the messages
    CHECK(replay_loggps(in, barrier_machine()).finish_s[0] == Approx(16 * us));
    const Run four(barrier_run(4));
    ReplayInput in4 = four.input();
    in4.substitutes.barrier = CollAlgo::BarrierDissemination;
    in4.collective_times = &table;
    const ReplayResult r = replay_loggps(in4, barrier_machine());
    for (int k = 0; k < 4; ++k) CHECK(r.finish_s[static_cast<std::size_t>(k)] == Approx((19 + 12) * us));  // two rounds
  }
  SECTION("isolated: by the member's computation before its call, from the back-to-back residual to the isolated one") {
    table[Op::Barrier].isolated_gap_s = 4e-6;
    table[Op::Barrier].isolated_measured_s = {22e-6};
    table[Op::Barrier].isolated_model_s = {9e-6};  // 13 us beyond the messages
    // The barrier entered at `enter` (computation from 1 to there), MPICH's or the substitute's.
    auto barrier_at = [&](std::uint64_t enter, bool substitute) {
      std::vector<RankTrace> t;
      for (int r = 0; r < 2; ++r)
        t.push_back(make_rank(r, 2, {ev(Op::Init, 0, 1), ev(Op::Barrier, enter, enter + 7), ev(Op::Finalize, enter + 7, enter + 8)}));
      const Run run(t);
      ReplayInput in = run.input();
      if (substitute) in.substitutes.barrier = CollAlgo::BarrierDissemination;
      in.collective_times = &table;
      return replay_loggps(in, barrier_machine()).finish_s[0];
    };
    auto run_at = [&](std::uint64_t enter) { return barrier_at(enter, false); };
    CHECK(run_at(1) == Approx(9 * us + 3 * us));                 // back to back: 3 us
    CHECK(run_at(2) == Approx(1 * us + 9 * us + 5.5 * us));      // 1 us of 4: 3 + (13 - 3) / 4
    CHECK(run_at(5) == Approx(4 * us + 9 * us + 13 * us));       // 4 us: the isolated 13
    CHECK(run_at(9) == Approx(8 * us + 9 * us + 13 * us));       // and beyond
    // A substitute's: back to back only where its isolated loop was not measured (6 us beyond the
    // messages), else its own isolated residual (23 - 9 = 14 us) by the same rule.
    table[Op::Barrier].substitute_s = {15e-6};
    auto substitute_at = [&](std::uint64_t enter) { return barrier_at(enter, true); };
    CHECK(substitute_at(5) == Approx(4 * us + 9 * us + 6 * us));
    table[Op::Barrier].substitute_isolated_s = {23e-6};
    CHECK(substitute_at(1) == Approx(9 * us + 6 * us));
    CHECK(substitute_at(3) == Approx(2 * us + 9 * us + 10 * us));  // half way: 6 + (14 - 6) / 2
    CHECK(substitute_at(5) == Approx(4 * us + 9 * us + 14 * us));
  }
  SECTION("a negative residual never ends a call before its entry") {
    table[Op::Barrier] = times({0}, {1e-6}, {100e-6});
    const Run run(barrier_run(2));
    ReplayInput in = run.input();
    in.collective_times = &table;
    CHECK(replay_loggps(in, barrier_machine()).finish_s[0] == Approx(1 * us));  // Barrier entered at 2
  }
}

TEST_CASE("libmstep's substitute families: one setting a family, the calls it covers, what a run recorded",
          "[collectives]") {
  // Sixteen calls in ten families (interpose/substitute.hpp), no point-to-point nor nonblocking one.
  int covered = 0;
  for (int i = 0; i < mstep::kOpCount; ++i) covered += libmstep_has_substitute(static_cast<Op>(i)) ? 1 : 0;
  CHECK(covered == 16);
  for (const Op op : {Op::Send, Op::Sendrecv, Op::Ibarrier, Op::Iallreduce, Op::Wait, Op::Init})
    CHECK_FALSE(libmstep_has_substitute(op));
  REQUIRE(substitute_family(Op::Exscan) != nullptr);
  CHECK(std::string(substitute_family(Op::Exscan)->variable) == "MSTEP_SCAN");
  CHECK(std::string(substitute_family(Op::Reduce_scatter_block)->variable) == "MSTEP_REDUCE_SCATTER");
  CHECK(std::string(substitute_family(Op::Barrier)->mpich_choice) == "dissemination");
  CHECK(std::string(substitute_family(Op::Bcast)->mpich_choice) == "binomial");
  // What a run's meta.json says ran: its family's field.
  mstep::RunMeta meta;
  meta.scan_substitute = "pt2pt";
  meta.alltoall_substitute = "pt2pt";
  CHECK(ran_substitute(meta, Op::Scan));
  CHECK(ran_substitute(meta, Op::Exscan));
  CHECK(ran_substitute(meta, Op::Alltoallv));
  CHECK_FALSE(ran_substitute(meta, Op::Allgather));
  CHECK_FALSE(ran_substitute(meta, Op::Send));
}
