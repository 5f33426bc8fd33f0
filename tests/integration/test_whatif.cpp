// Integration test: `mstep whatif` end to end on a real 2-rank run (tests/report/late_receiver.c:
// 1 MiB rendezvous sends to a receiver that posts late) with parameters of a quick calibration of
// this machine. What is checked does not depend on the timing: S = inf must turn LogGPS into
// LogGP, L x 1 must change nothing, bad input must fail in one line.
#include "harness.hpp"

using namespace mstep_it;

namespace {

json whatif_json(const fs::path& dir, const std::vector<std::string>& args, const Env& env) {
  return mstep_json("whatif", dir, args, env);
}

}  // namespace

TEST_CASE("whatif: S=inf is LogGP, L x 1 changes nothing, bad edits fail in one line", "[whatif]") {
  const fs::path dir = test_dir() / "trace";
  const Env env = no_default_params(dir.parent_path());
  const Result rec = record(dir, 2, {prog("late_receiver"), "5", "3"});
  check_recorded(rec, 2);

  {
    INFO("no baseline anywhere: one line naming mstep calibrate");
    const Result r = run({kMstep, "whatif", dir.string(), "--set", "L=2us"}, env);
    check_one_line_error(r);
    CHECK(r.err.find("mstep calibrate") != std::string::npos);
  }

  // Found as TRACE/params.json, the way mstep report finds it.
  const Result cal = run({kMstep, "calibrate", "--quick", "-q", "-o", (dir / "params.json").string()}, env, {}, 120);
  REQUIRE(cal.code == 0);

  {
    INFO("--set S=inf: the what-if LogGPS is the baseline LogGP");
    const json j = whatif_json(dir, {"--set", "S=inf"}, env);
    CHECK(j.at("params") == (dir / "params.json").string());
    REQUIRE(j.at("changes").size() == 1);
    CHECK(j["changes"][0].at("name") == "S");
    CHECK(j["changes"][0].at("to").is_null());  // infinite
    const json& m = j.at("models");
    INFO(m.dump());
    REQUIRE(m.at("LogGPS").at("whatif_s").is_number());
    const double gps_whatif = m["LogGPS"]["whatif_s"], gp_base = m["LogGP"]["baseline_s"];
    CHECK(gps_whatif == Approx(gp_base).epsilon(1e-12));
    CHECK(m["LogGP"].at("speedup") == 1.0);
    CHECK(m["MPM"].at("speedup") == 1.0);
    CHECK(j.at("actual_s").get<double>() > 0);
    // Per rank, LogGPS: the slowest rank is the model's total.
    REQUIRE(j.at("ranks").size() == 2);
    const double slowest = std::max(j["ranks"][0].at("whatif_s").get<double>(), j["ranks"][1].at("whatif_s").get<double>());
    CHECK(slowest == Approx(gps_whatif).epsilon(1e-12));
    // The late receiver of the 1 MiB sends: LogGPS predicts it under the calibrated S, not with
    // every send eager.
    bool found = false;
    for (const auto& h : j.at("hotspots")) {
      if (h.at("kind") != "late_receiver" || h.at("mpi_call") != "MPI_Send") continue;
      found = true;
      CHECK(h.at("baseline_predicted_s").get<double>() > 0);
      CHECK(h.at("whatif_predicted_s").get<double>() == 0);
    }
    CHECK(found);
  }
  {
    INFO("--scale L=1: every speedup is exactly 1");
    const json j = whatif_json(dir, {"--scale", "L=1"}, env);
    for (const auto& [name, m] : j.at("models").items()) {
      INFO(name << ": " << m.dump());
      CHECK(m.at("speedup") == 1.0);
    }
    for (const auto& r : j.at("ranks")) CHECK(r.at("speedup") == 1.0);
  }
  {
    INFO("text: the change in one line, a row per model");
    const Result r = run({kMstep, "whatif", dir.string(), "--scale", "L=10", "--set", "Gl=0.1ns/B"}, env);
    CHECK(r.code == 0);
    CHECK(quiet_but_for_speed(r.err));
    const auto lines = lines_of(r.out);
    const auto has_prefix = [&](const std::string& p) {
      return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.rfind(p, 0) == 0; });
    };
    CHECK(has_prefix("  L "));
    CHECK(has_prefix("  Gl "));
    CHECK(r.out.find(" -> 100 ps/B") != std::string::npos);
    for (const char* m : {"MPM ", "BSPWB ", "LogGP ", "LogGPS ", "linear "}) CHECK(has_prefix(m));
  }
  {
    INFO("csv: a header and a row per model");
    const Result r = run({kMstep, "whatif", dir.string(), "--set", "S=16k", "--format", "csv"}, env);
    CHECK(r.code == 0);
    const auto lines = lines_of(r.out);
    REQUIRE(lines.size() == 6);
    CHECK(lines[0] == "model,actual_s,baseline_s,whatif_s,speedup");
  }
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
           {"--set", "L=2xs"}, {"--set", "Q=1us"}, {"--scale", "L"}, {"--scale", "L=2us"}, {"--set", "S=1.5"},
           {"--network", (dir.parent_path() / "missing.json").string()}, {}}) {
    INFO("bad: " << describe(bad));
    std::vector<std::string> argv{kMstep, "whatif", dir.string()};
    argv.insert(argv.end(), bad.begin(), bad.end());
    check_one_line_error(run(argv, env));
  }
}

TEST_CASE("whatif --stream yes says what the in-memory what-if says, to the bit", "[whatif][stream]") {
  const fs::path dir = test_dir() / "trace";
  REQUIRE(run({kMstep, "synth", "-o", dir.string(), "--ranks", "6", "--events", "30000", "--pattern", "random"}).code == 0);
  write_model_params(dir / "params.json");  // found there, as mstep whatif finds TRACE/params.json
  const Env env = no_default_params(test_dir());
  const json whole = mstep_json("whatif", dir, {"--scale", "L=3", "--set", "G=1ns/B", "--stream", "no"}, env);
  const json streamed = mstep_json("whatif", dir, {"--scale", "L=3", "--set", "G=1ns/B", "--stream", "yes"}, env);
  for (const auto& [key, value] : whole.items()) {
    INFO(key);
    if (key != "notes") CHECK(value == streamed.at(key));
  }
  REQUIRE(whole.at("models").size() == 5);
  for (const auto& [name, m] : whole.at("models").items()) {
    INFO(name);
    CHECK(m.at("speedup").is_number());
  }
}
