// The delay apparatus (interpose/delay.hpp): each added parameter slows the real run by what it
// was asked for. Program: delay.c (five phases of 8-byte messages, rank 0 prints each phase's
// time). Lower bounds are exact by construction (the wrappers wait at least that long); the
// upper bound on L allows for this machine's noise (an MPI run sharing 2 cores with others).
#include <algorithm>

#include "harness.hpp"

using namespace mstep_it;

namespace {

constexpr int kRounds = 50;

struct Phases {
  // isend_gap and isend_span: rank 1's
  double pingpong = 0, exchange = 0, sendrecv = 0, isend = 0, isend_gap = 0, isend_span = 0, persistent = 0;
};

Phases phases_of(const std::string& out) {
  Phases p;
  int seen = 0;
  for (const auto& line : lines_of(out)) {
    char name[32] = {};
    int rounds = 0;
    double s = 0;
    if (std::sscanf(line.c_str(), "phase=%31s rounds=%d seconds=%lf", name, &rounds, &s) != 3) continue;
    REQUIRE(rounds == kRounds);
    const std::string n = name;
    (n == "pingpong"   ? p.pingpong
     : n == "exchange" ? p.exchange
     : n == "sendrecv" ? p.sendrecv
     : n == "isend"      ? p.isend
     : n == "persistent" ? p.persistent
     : n == "isend_span" ? p.isend_span
                         : p.isend_gap) = s;
    ++seen;
  }
  REQUIRE(seen == 7);
  return p;
}

struct Delayed {
  Phases phases;
  json meta;
  std::string err;
  fs::path dir;
};

Delayed run_delayed(const Env& env) {
  const fs::path dir = test_dir() / "trace";
  const Result r = record(dir, 2, {prog("delay"), std::to_string(kRounds)}, env);
  check_recorded(r, 2);
  std::ifstream in(dir / "meta.json");
  std::stringstream text;
  text << in.rdbuf();
  return {phases_of(r.out), parse_json(text.str()), r.err, dir};
}

// Median recorded duration of rank 0's calls `op` with tag `tag`.
double median_duration(const fs::path& dir, const std::string& op, int tag) {
  std::vector<double> d;
  for (const auto& e : events_of(dump_rank(dir, 0), op))
    if (e.at("tag") == tag) d.push_back(e.at("duration_s").get<double>());
  REQUIRE(d.size() == static_cast<std::size_t>(kRounds));
  std::nth_element(d.begin(), d.begin() + kRounds / 2, d.end());
  return d[kRounds / 2];
}

}  // namespace

TEST_CASE("the delay apparatus adds latency L to every message, without sender CPU time") {
  const Delayed base = run_delayed({});
  CHECK_FALSE(base.meta.contains("delay"));
  const double L = 100e-6;
  const Delayed d = run_delayed({{"MSTEP_DELAY_L", "100us"}});
  REQUIRE(d.meta.contains("delay"));
  CHECK(d.meta["delay"]["L"].get<double>() == Approx(L));
  CHECK(d.meta["delay"]["o"].is_null());
  INFO("baseline pingpong " << base.phases.pingpong << " s, with L " << d.phases.pingpong << " s");
  // A round trip is two one-way messages, each at least L after its send started. (How close to
  // 2 L it stays is measured by tests/bench/delay_calibration.sh: here the machine may be shared,
  // and a rank descheduled while it waits adds its time slice to a round trip.)
  CHECK(d.phases.pingpong >= 2 * kRounds * L);
  // The receiver waits, not the sender: rank 0's sends stay short, its receives take the round trip.
  CHECK(median_duration(d.dir, "MPI_Send", 1) < L / 4);
  CHECK(median_duration(d.dir, "MPI_Recv", 1) >= 2 * L * 0.99);
  // Both ranks send at once: a round is one one-way latency (wildcard receives, Waitall).
  CHECK(d.phases.exchange >= kRounds * L);
  CHECK(d.phases.sendrecv >= kRounds * L);
}

TEST_CASE("the delay apparatus pays a rendezvous-sized message what LogGPS charges it (MSTEP_DELAY_RNDV)") {
  // S = 8 bytes: every 8-byte message of delay.c is a rendezvous to the apparatus. L crosses three
  // times (request, reply, data), o is paid three times at each end, and a blocking send is held
  // until its data could have been delivered.
  const double L = 100e-6;
  const Delayed d = run_delayed({{"MSTEP_DELAY_L", "100us"}, {"MSTEP_DELAY_RNDV", "8"}});
  REQUIRE(d.meta.contains("delay"));
  CHECK(d.meta["delay"]["rendezvous_bytes"].get<int>() == 8);
  CHECK(d.phases.pingpong >= 2 * kRounds * 3 * L);
  CHECK(median_duration(d.dir, "MPI_Send", 1) >= 3 * L * 0.99);
  CHECK(median_duration(d.dir, "MPI_Recv", 1) >= 3 * L * 0.99);
  // And a nonblocking one at its MPI_Wait (rank 0's only Waits: the isend phase).
  std::vector<double> waits;
  for (const auto& e : events_of(dump_rank(d.dir, 0), "MPI_Wait")) waits.push_back(e.at("duration_s").get<double>());
  REQUIRE(waits.size() == static_cast<std::size_t>(kRounds));
  std::sort(waits.begin(), waits.end());
  CHECK(waits[kRounds / 2] >= 3 * L * 0.99);
  CHECK(d.phases.isend >= kRounds * 3 * L);
  // And a persistent one's (MPI_Send_init, MPI_Start) at its MPI_Waitany (the persistent phase).
  waits.clear();
  for (const auto& e : events_of(dump_rank(d.dir, 0), "MPI_Waitany")) waits.push_back(e.at("duration_s").get<double>());
  REQUIRE(waits.size() == static_cast<std::size_t>(kRounds));
  std::sort(waits.begin(), waits.end());
  CHECK(waits[kRounds / 2] >= 3 * L * 0.99);
  CHECK(d.phases.persistent >= kRounds * 3 * L);
  const double o = 50e-6;
  const Delayed od = run_delayed({{"MSTEP_DELAY_O", "50us"}, {"MSTEP_DELAY_RNDV", "8"}});
  CHECK(od.phases.pingpong >= 4 * kRounds * 3 * o);
  // Below S nothing changes: 8-byte messages with S = 9 are eager.
  const Delayed eager = run_delayed({{"MSTEP_DELAY_L", "100us"}, {"MSTEP_DELAY_RNDV", "9"}});
  CHECK(median_duration(eager.dir, "MPI_Send", 1) < L / 4);
  const Delayed bad = run_delayed({{"MSTEP_DELAY_L", "100us"}, {"MSTEP_DELAY_RNDV", "8k"}});
  CHECK(bad.err.find("mstep: MSTEP_DELAY_RNDV='8k' is not a number of bytes of 1 or more; no delay applied\n") !=
        std::string::npos);
  CHECK_FALSE(bad.meta.contains("delay"));
}

// Runs alone ([report]: RUN_SERIAL): an upper bound on a median, which a shared core could stretch.
TEST_CASE("the delay apparatus adds L to the native network's crossing (MSTEP_DELAY_NATIVE)", "[report]") {
  // A native network whose L is 200 us, with 100 us added. A receiver that was waiting has its
  // message at its natural arrival (about a microsecond here, sooner than that network's 200 us):
  // it is held to that plus the added 100 us, so a ping-pong round trip takes at least 200 us and
  // far less than the 600 us that the native network's estimate plus L would give.
  const fs::path native = test_dir() / "native.json";
  std::ofstream(native) << R"({"format": "mstep-params", "L": 2e-4, "o": 0, "s": null, "S": null})";
  const Delayed d = run_delayed({{"MSTEP_DELAY_L", "100us"}, {"MSTEP_DELAY_NATIVE", native.string()}});
  REQUIRE(d.meta.contains("delay"));
  CHECK(d.meta["delay"]["native"]["L"].get<double>() == Approx(2e-4));
  CHECK(d.meta["delay"]["native"]["S"].is_null());
  CHECK(d.phases.pingpong >= 2 * kRounds * 100e-6);
  const double recv = median_duration(d.dir, "MPI_Recv", 1);
  CHECK(recv >= 200e-6 * 0.99);
  CHECK(recv < 400e-6);
  CHECK(median_duration(d.dir, "MPI_Send", 1) < 100e-6 / 4);  // still no CPU time on the sender

  std::ofstream(native) << R"({"L": -1, "o": 0})";
  const Delayed bad = run_delayed({{"MSTEP_DELAY_L", "100us"}, {"MSTEP_DELAY_NATIVE", native.string()}});
  CHECK(bad.err.find("mstep: MSTEP_DELAY_NATIVE=" + native.string() +
                     ": \"L\" must be a number of seconds (per byte for Os, Or, Gs, Gl), not negative; no delay "
                     "applied\n") != std::string::npos);
  CHECK_FALSE(bad.meta.contains("delay"));
}

TEST_CASE("the delay apparatus: a rendezvous received late still pays the reply's and the data's L") {
  // late_receiver: rank 0 sends 1 MiB while rank 1 computes 5 ms before posting its receive. With
  // L = 1 ms added and S = 8192 B, the request's L is hidden in rank 1's computation, but the
  // reply and the data cross after the receive is posted: rank 1's receive takes at least 2 ms,
  // and rank 0's send returns at least 2 ms after the receive was posted (5 + 2 ms).
  const fs::path dir = test_dir() / "late";
  const Result r = record(dir, 2, {prog("late_receiver"), "5", "4"},
                          {{"MSTEP_DELAY_L", "1ms"}, {"MSTEP_DELAY_RNDV", "8192"}});
  check_recorded(r, 2);
  const auto median = [&](int rank, const char* op) {
    std::vector<double> d;
    for (const auto& e : events_of(dump_rank(dir, rank), op)) d.push_back(e.at("duration_s").get<double>());
    REQUIRE(d.size() == 4);
    std::sort(d.begin(), d.end());
    return d[2];
  };
  CHECK(median(1, "MPI_Recv") >= 2e-3 * 0.99);
  CHECK(median(0, "MPI_Send") >= 7e-3 * 0.99);
}

// Runs alone ([report]: RUN_SERIAL): an upper bound on a median, which a shared core could stretch.
TEST_CASE("the delay apparatus holds a rendezvous Sendrecv to its delivery once", "[report]") {
  // Both ranks Sendrecv 8-byte rendezvous messages (S = 8) with L = 100 us: each receive completes
  // 3 L after its partner's send started, and each send is delivered then too, so a round takes
  // 3 L. (Stop 43's first Sendrecv hold started the send's hold after the receive's: 5 L.)
  const double L = 100e-6;
  const Delayed d = run_delayed({{"MSTEP_DELAY_L", "100us"}, {"MSTEP_DELAY_RNDV", "8"}});
  std::vector<double> calls;  // one record a call: its send half (the receive half is flagged)
  for (const auto& e : events_of(dump_rank(d.dir, 0), "MPI_Sendrecv"))
    if (e.at("flags") == 0) calls.push_back(e.at("duration_s").get<double>());
  REQUIRE(calls.size() == static_cast<std::size_t>(kRounds));
  std::sort(calls.begin(), calls.end());
  const double sendrecv = calls[kRounds / 2];
  CHECK(sendrecv >= 3 * L * 0.95);
  CHECK(sendrecv < 4 * L);
}

TEST_CASE("the delay apparatus adds a latency per pair of ranks (MSTEP_DELAY_PAIRS)") {
  // Rank 0 to 1: 50 us; 1 to 0: 150 us. A ping-pong round trip is one of each.
  const fs::path table = test_dir() / "pairs.json";
  std::ofstream(table) << R"({"matrix": [[0, "50us"], ["150us", 0]]})";
  const Delayed d = run_delayed({{"MSTEP_DELAY_PAIRS", table.string()}});
  REQUIRE(d.meta.contains("delay"));
  CHECK(d.meta["delay"]["L"].is_null());
  CHECK(d.meta["delay"]["pairs"]["matrix"][1][0].get<double>() == Approx(150e-6));
  CHECK(d.phases.pingpong >= kRounds * 200e-6);
  // Rank 0 receives from 1: its receives take at least the round trip.
  CHECK(median_duration(d.dir, "MPI_Recv", 1) >= 200e-6 * 0.99);
  // Both send at once, each as soon as its receive is done: rank 0's k-th send is at least the
  // 1-to-0 latency after rank 1's (k-1)-th, which is at least the 0-to-1 latency after rank 0's
  // (k-2)-th: two rounds take 50 + 150 us.
  CHECK(d.phases.exchange >= kRounds * 100e-6);

  std::ofstream(table) << R"({"clusters": [[0]], "inter": "1us"})";
  const Delayed bad = run_delayed({{"MSTEP_DELAY_PAIRS", table.string()}});
  CHECK(bad.err.find("mstep: MSTEP_DELAY_PAIRS=" + table.string() + ": rank 1 is in no cluster; no delay applied\n") !=
        std::string::npos);
  CHECK_FALSE(bad.meta.contains("delay"));
}

TEST_CASE("the delay apparatus adds overhead o at each send and each receive completion") {
  const double o = 50e-6;
  const Delayed d = run_delayed({{"MSTEP_DELAY_O", "50us"}});
  CHECK(d.meta["delay"]["o"].get<double>() == Approx(o));
  // Round trip: send o, receive o, send o, receive o, one after the other.
  CHECK(d.phases.pingpong >= 4 * kRounds * o);
  // Each rank's round: its send's o, then its receive's o.
  CHECK(d.phases.exchange >= 2 * kRounds * o);
  CHECK(d.phases.sendrecv >= 2 * kRounds * o);
}

TEST_CASE("the delay apparatus spaces a rank's sends by g and charges G per byte") {
  const Delayed gap = run_delayed({{"MSTEP_DELAY_GAP", "200us"}});
  CHECK(gap.meta["delay"]["g"].get<double>() == Approx(200e-6));
  // Rank 0 sends once a round trip: the rounds after the first start 200 us apart.
  CHECK(gap.phases.pingpong >= (kRounds - 1) * 200e-6);
  const Delayed per_byte = run_delayed({{"MSTEP_DELAY_PER_BYTE", "10us/B"}});
  CHECK(per_byte.meta["delay"]["G"].get<double>() == Approx(10e-6));
  // 8-byte messages: 80 us on the wire each, two per round trip; none of it the sender's CPU.
  CHECK(per_byte.phases.pingpong >= 2 * kRounds * 80e-6);
  CHECK(median_duration(per_byte.dir, "MPI_Send", 1) < 80e-6 / 4);
  CHECK(median_duration(per_byte.dir, "MPI_Recv", 1) >= 2 * 80e-6 * 0.99);
  // One wire a rank: rank 0's Isends of the isend phase leave as fast as MPICH takes them, but
  // arrive 80 us apart, so the last arrives 50 x 80 us after rank 0 began: rank 1's last receive
  // ends no earlier. (The median gap between rank 1's receives, the sharper check, holds only
  // when rank 1 keeps up: under ctest -j2 it was descheduled for the whole phase beside another
  // job's busy-polling ranks, every message had arrived, and the gaps were 0.2 us.)
  CHECK(per_byte.phases.isend_span >= kRounds * 80e-6 * 0.99);
}

TEST_CASE("a malformed delay setting is one line, and the run goes on undelayed") {
  const Delayed d = run_delayed({{"MSTEP_DELAY_O", "fast"}});
  CHECK(d.err.find("mstep: MSTEP_DELAY_O='fast' is not a time (e.g. 5us); no delay applied\n") != std::string::npos);
  // meta.json's "delay" is written exactly when the apparatus is armed (no timing bound here: on
  // a shared machine an undelayed run can take as long as a delayed one).
  CHECK_FALSE(d.meta.contains("delay"));
}

// Runs alone ([report]: RUN_SERIAL): its models' slowdowns come from one baseline run, which
// another test's ranks on the 2 cores can stretch past the 16 ms the delay adds (seen once in six
// whole-suite runs at ctest -j2).
TEST_CASE("mstep sensitivity: measured slowdown under added L beside each model's", "[report]") {
  const fs::path dir = test_dir();
  const fs::path params = write_model_params(dir / "params.json");
  const Result r = run({kMstep, "sensitivity", "-o", (dir / "sens").string(), "--params", params.string(), "--sweep",
                        "L=0,200us", "--format", "json", "--", kMpiexec, "-n", "2", prog("delay"), "20"});
  REQUIRE(r.code == 0);
  const json j = parse_json(r.out);
  CHECK(j.at("parameter") == "L");
  CHECK(j.at("variable") == "MSTEP_DELAY_L");
  REQUIRE(j.at("points").size() == 2);
  const json& p = j.at("points")[1];
  CHECK(p.at("label") == "200us");
  CHECK(p.at("added").get<double>() == Approx(200e-6));
  // 20 ping-pong round trips and 40 exchange/Sendrecv rounds: 80 one-way latencies of 200 us
  // (16 ms), one after the other, lie inside the delayed run (a run of about 2 ms without them,
  // but the baseline is one run on a machine that may be busy, so only the ratio is checked).
  CHECK(p.at("actual_s").get<double>() >= 80 * 200e-6);
  // The sweep has a 0 point: its run's time (the apparatus's own cost) is taken out of the
  // measured slowdown; the raw one is time / baseline time.
  const double base_s = j.at("baseline_s").get<double>(), zero_s = j.at("points")[0].at("actual_s").get<double>();
  CHECK(p.at("raw_slowdown").get<double>() == Approx(p.at("actual_s").get<double>() / base_s));
  CHECK(p.at("slowdown").get<double>() == Approx(1.0 + (p.at("actual_s").get<double>() - zero_s) / base_s));
  CHECK(j.at("points")[0].at("slowdown").get<double>() == Approx(1.0));
  // Every model predicts a slowdown from the baseline trace, LogGPS by raising L.
  for (const char* m : {"MPM", "BSPWB", "LogGP", "LogGPS", "linear"}) {
    INFO(m);
    CHECK(p.at("models").at(m).at("slowdown").get<double>() > 1.5);
  }
  CHECK(fs::exists(dir / "sens" / "baseline-1" / "meta.json"));
  CHECK(fs::exists(dir / "sens" / "L=200us-1" / "meta.json"));
  // 8-byte messages, S = 8256 B: no rendezvous, no note about it. Its MPI_Barrier ran as
  // libmstep's dissemination barrier in every run (the baseline too), so the apparatus delayed it
  // and there is no note about collectives either.
  for (const json& n : j.at("notes")) {
    CHECK(n.get<std::string>().find("bytes or more") == std::string::npos);
    CHECK(n.get<std::string>().find("ran MPICH's own algorithm") == std::string::npos);
  }
  CHECK(j.at("collective_substitutes") ==
        json{{"MSTEP_BARRIER", "dissemination"}, {"MSTEP_BCAST", "binomial"}, {"MSTEP_ALLREDUCE", "pt2pt"},
             {"MSTEP_ALLTOALL", "pt2pt"}, {"MSTEP_ALLGATHER", "pt2pt"}, {"MSTEP_REDUCE", "pt2pt"},
             {"MSTEP_GATHER", "pt2pt"}, {"MSTEP_SCATTER", "pt2pt"}, {"MSTEP_REDUCE_SCATTER", "pt2pt"},
             {"MSTEP_SCAN", "pt2pt"}});
  for (const char* run_dir : {"baseline-1", "L=200us-1"}) {
    std::ifstream meta(dir / "sens" / run_dir / "meta.json");
    std::stringstream text;
    text << meta.rdbuf();
    CHECK(parse_json(text.str()).at("collectives").at("barrier") == "dissemination");
  }
}

TEST_CASE("mstep sensitivity tells the apparatus S, and says where it and LogGPS's rendezvous still differ",
          "[report]") {
  // S = 4 B: every 8-byte message of the run is a rendezvous to LogGPS, and to the apparatus, which
  // gets S from the parameter file: its added L then crosses three times, as LogGPS's does.
  const fs::path dir = test_dir();
  std::ofstream(dir / "params.json") << R"({"L": 2e-7, "o": 2e-7, "Os": 0, "Or": 0, "g": 2e-7, "Gs": 1e-10,
    "Gl": 1e-10, "s": 4, "S": 4})";
  Result r = run({kMstep, "sensitivity", "-o", (dir / "sens").string(), "--params", (dir / "params.json").string(),
                  "--sweep", "L=0,100us", "--format", "json", "--", kMpiexec, "-n", "2", prog("delay"), "5"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  json j = parse_json(r.out);
  std::ifstream meta(dir / "sens" / "L=100us-1" / "meta.json");
  std::stringstream meta_text;
  meta_text << meta.rdbuf();
  CHECK(parse_json(meta_text.str()).at("delay").at("rendezvous_bytes") == 4);
  for (const json& n : j.at("notes")) CHECK(n.get<std::string>().find("bytes or more") == std::string::npos);
  // 5 ping-pong rounds (10 one-way messages) and 10 exchange and Sendrecv rounds: 20 one-way
  // latencies in a row at least, each 3 x 100 us now.
  CHECK(j.at("points").at(1).at("actual_s").get<double>() >= 20 * 300e-6);
  // G: the apparatus puts a rendezvous's k G on the wire; the raised Os is paid by eager messages only.
  // G: the apparatus puts every message's k G on the wire, rendezvous or not, and LogGPS has Gs and
  // Gl raised: no note about rendezvous. With MPICH's own collectives kept, its MPI_Barrier is not
  // delayed, and a note says so.
  r = run({kMstep, "sensitivity", "-f", "-o", (dir / "sens").string(), "--params", (dir / "params.json").string(),
           "--sweep", "G=0,1ns/B", "--format", "json", "--mpich-collectives", "--", kMpiexec, "-n", "2", prog("delay"),
           "5"});
  REQUIRE(r.code == 0);
  j = parse_json(r.out);
  bool barrier_said = false;
  for (const json& n : j.at("notes")) {
    CHECK(n.get<std::string>().find("bytes or more") == std::string::npos);
    barrier_said = barrier_said || n.get<std::string>().find(
                                       " (all ranks) ran MPICH's own algorithm, which the apparatus does not delay") !=
                                       std::string::npos;
  }
  CHECK(barrier_said);
  CHECK(j.at("collective_substitutes").empty());
}

TEST_CASE("mstep sensitivity says what the apparatus itself costs at its 0 point", "[report]") {
  // The apparatus armed at L = 0 carries every message's send time in a second message: the 0
  // point's time against the baseline's is its own cost, which a note gives, and which every
  // point's measured slowdown leaves out.
  const fs::path dir = test_dir();
  std::ofstream(dir / "params.json") << R"({"L": 2e-7, "o": 2e-7, "Os": 0, "Or": 0, "g": 2e-7, "Gs": 1e-10,
    "Gl": 1e-10, "s": null, "S": null})";
  const Result r = run({kMstep, "sensitivity", "-o", (dir / "sens").string(), "--params", (dir / "params.json").string(),
                        "--sweep", "L=0", "--format", "json", "--", kMpiexec, "-n", "2", prog("delay"), "5"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const json j = parse_json(r.out);
  std::string said;
  for (const json& n : j.at("notes"))
    if (n.get<std::string>().find("the apparatus itself, at L = 0, measured ") == 0) said = n.get<std::string>();
  const double pct = 100.0 * (j.at("points").at(0).at("actual_s").get<double>() / j.at("baseline_s").get<double>() - 1);
  INFO("0 point against the baseline: " << pct << "%; note: " << said);
  char want[160];
  std::snprintf(want, sizeof want, "measured %+.1f%% against the baseline: taken out of every point's measured slowdown",
                pct);
  CHECK(said.find(want) != std::string::npos);
}

TEST_CASE("mstep sensitivity killed outright (SIGKILL): the run it was recording ends too", "[report]") {
  const fs::path dir = test_dir();
  const fs::path params = write_model_params(dir / "params.json");
  Child s({kMstep, "sensitivity", "-o", (dir / "sens").string(), "--params", params.string(), "--sweep", "L=0,5us",
           "--", kMpiexec, "-n", "2", "/bin/sleep", "7931"},
          {}, dir);
  check_job_ends_with(s, "^/bin/sleep 7931", dir);
}

TEST_CASE("mstep sensitivity takes several parameter files and uses the one of the baseline's period", "[report]") {
  const fs::path dir = test_dir();
  // Two calibrations of this network: one of a machine 1000 times slower (8-byte half round trip 1
  // ms), one of this machine's (0.3 us): whatever period the baseline runs in, the second is the
  // nearer (model::choose_by_period), given second or from a directory.
  const std::string body = R"("L": 2e-7, "o": 2e-7, "Os": 0, "Or": 0, "g": 2e-7, "Gs": 1e-10, "Gl": 1e-10,
    "s": 8256, "S": 8256, "mpm": {"g": 1e-10, "L": 1e-6},
    "linear": {"boundary": 8256, "below": {"T0": 6e-7, "B": 1e10}, "above": {"T0": 2e-6, "B": 1e10}})";
  fs::create_directories(dir / "cals");
  std::ofstream(dir / "cals" / "a-slow.json") << "{" << body << R"(, "meta": {"half_rtt_8B": 1e-3}})";
  std::ofstream(dir / "cals" / "b-here.json") << "{" << body << R"(, "meta": {"half_rtt_8B": 3e-7}})";
  for (const bool as_dir : {false, true}) {
    INFO(as_dir);
    std::vector<std::string> argv{kMstep, "sensitivity", "-f", "-o", (dir / "sens").string()};
    if (as_dir) {
      argv.insert(argv.end(), {"--params", (dir / "cals").string()});
    } else {
      argv.insert(argv.end(), {"--params", (dir / "cals" / "a-slow.json").string(), "--params",
                               (dir / "cals" / "b-here.json").string()});
    }
    argv.insert(argv.end(), {"--sweep", "L=0,5us", "--format", "json", "--", kMpiexec, "-n", "2", prog("delay"), "5"});
    const Result r = run(argv);
    INFO(r.err);
    REQUIRE(r.code == 0);
    const json j = parse_json(r.out);
    CHECK(j.at("params") == (dir / "cals" / "b-here.json").string());
    REQUIRE(j.at("params_choice").is_string());
    CHECK(j.at("params_choice").get<std::string>().rfind("of 2 given, ", 0) == 0);
    CHECK(j.at("params_choice").get<std::string>().find("a-slow.json 1000.000 us") != std::string::npos);
  }
  // A bad file among them is refused before anything runs.
  std::ofstream(dir / "cals" / "c-bad.json") << "{";
  const Result bad = run({kMstep, "sensitivity", "-f", "-o", (dir / "sens2").string(), "--params",
                          (dir / "cals").string(), "--sweep", "L=0", "--", kMpiexec, "-n", "2", prog("delay"), "5"});
  CHECK(bad.code == 1);
  CHECK(bad.err.rfind("mstep: ", 0) == 0);
  CHECK(bad.err.find("c-bad.json") != std::string::npos);
  CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);
  CHECK_FALSE(fs::exists(dir / "sens2" / "baseline-1"));
}

TEST_CASE("mstep sensitivity refuses a bad sweep and a missing parameter file in one line") {
  const fs::path dir = test_dir();
  const fs::path params = write_model_params(dir / "params.json");
  Result r = run({kMstep, "sensitivity", "--params", params.string(), "--sweep", "Q=1us", "--", kMpiexec, "-n", "2",
                  prog("delay")});
  CHECK(r.code == 2);
  CHECK(r.err == "mstep: --sweep 'Q=1us': the parameter must be L, o, g or G (e.g. --sweep L=0,5us,10us)\n");
  r = run({kMstep, "sensitivity", "--params", params.string(), "--sweep", "L=0,-5us", "--", kMpiexec, "-n", "2",
           prog("delay")});
  CHECK(r.code == 2);
  CHECK(r.err == "mstep: --sweep 'L=0,-5us': '-5us' must be a finite amount of 0 or more\n");
  r = run({kMstep, "sensitivity", "--sweep", "L=0", "--", kMpiexec, "-n", "2", prog("delay")},
          no_default_params(dir));
  CHECK(r.code == 1);
  CHECK(r.err ==
        "mstep: sensitivity needs calibrated parameters: run `mstep calibrate -o params.json` and pass --params "
        "params.json\n");
  // A delay setting libmstep cannot read (here the user's own per-pair table) leaves a run
  // undelayed: that is no point of the sweep, and the study stops saying why.
  const std::string missing = (dir / "missing_pairs.json").string();
  r = run({kMstep, "sensitivity", "-o", (dir / "sens").string(), "--params", params.string(), "--sweep", "L=5us", "--",
           kMpiexec, "-n", "2", prog("delay"), "5"},
          {{"MSTEP_DELAY_PAIRS", missing}});
  CHECK(r.code == 1);
  CHECK(r.err.find("mstep: the run with MSTEP_DELAY_L=5us was not delayed (mstep: MSTEP_DELAY_PAIRS=" + missing) == 0);
}
