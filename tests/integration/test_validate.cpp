// Integration tests: `mstep validate` end to end on a tiny suite written by the test (the shipped
// ring example, 20 iterations) with a hand-written parameter file, so that no calibration runs;
// and its one-line errors for bad suites and failing cases.
#include <cmath>

#include "harness.hpp"

using namespace mstep_it;

namespace {

// Parameters of a machine like this one's (values of a quick calibration, rounded): LogGPS with
// S = 8256 B, MPM, the linear model and the broadcast inputs of 2 ranks.
const char* const kParams = R"({
  "format": "mstep-params", "version": 1,
  "L": 2.2e-07, "o": 1.9e-07, "Os": 1.8e-11, "Or": 1.1e-10, "g": 1.9e-07, "Gs": 3.7e-10, "Gl": 7.8e-11,
  "s": 128, "S": 8256, "P": 2,
  "mpm": {"g": 2.0e-10, "L": 1.0e-06},
  "linear": {"boundary": 8256, "below": {"T0": 6.8e-07, "B": 5.6e9}, "above": {"T0": 3.2e-06, "B": 1.9e10}},
  "broadcast": {"bytes": 8, "lambda": [[0.0, 2.9e-07], [2.9e-07, 0.0]], "injection": [[0.0, 3.1e-07], [3.2e-07, 0.0]]}
})";

const std::vector<std::string> kModels{"MPM", "BSPWB", "LogGP", "LogGPS", "linear"};

fs::path write(const fs::path& file, const std::string& text) {
  std::ofstream(file) << text;
  return file;
}

// A suite of the given cases (JSON objects, comma-separated).
std::string suite_of(const std::string& cases) { return R"({"format": "mstep-validate-suite", "cases": [)" + cases + "]}"; }

const std::string kRingCase =
    R"({"name": "ring", "program": "ring", "sizes": [{"label": "tiny", "args": ["20", "1024"], "ranks": [2], "quick": true}]})";

json read_json(const fs::path& file) {
  std::ifstream in(file);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  return parse_json(text.str());
}

Result validate(const fs::path& cwd, const std::vector<std::string>& args) {
  std::vector<std::string> argv{kMstep, "validate"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, {}, cwd, 120);
}

}  // namespace

TEST_CASE("validate: a quick run of ring gives a row with every model's prediction", "[validate]") {
  const fs::path dir = test_dir();
  const fs::path suite = write(dir / "suite.json", suite_of(kRingCase));
  const fs::path params = write(dir / "params.json", kParams);
  const fs::path out = dir / "out";
  const std::vector<std::string> args{"--suite", suite.string(), "--quick", "--no-s-moved", "--transport", "shm", "--params",
                                      params.string(), "-o", out.string(), "--only", "ring"};
  const Result r = validate(dir, args);
  REQUIRE(r.code == 0);
  CHECK(r.err.find("mstep: validate: ring tiny at 2 ranks: repetition 1/1: ") != std::string::npos);

  // The text table: a header, then the ring row with a finite actual time and five predictions.
  const auto lines = lines_of(r.out);
  auto row = std::find_if(lines.begin(), lines.end(), [](const std::string& l) { return l.rfind("ring ", 0) == 0; });
  REQUIRE(row != lines.end());
  INFO("row: " << *row);
  std::istringstream words(*row);
  std::string name, size, ranks, actual;
  words >> name >> size >> ranks >> actual;
  CHECK(size == "tiny");
  CHECK(ranks == "2");
  CHECK(std::stod(actual) > 0);
  for (std::size_t m = 0; m < kModels.size(); ++m) {
    std::string predicted, error;
    words >> predicted >> error;
    INFO(kModels[m] << ": " << predicted << " " << error);
    CHECK(std::isfinite(std::stod(predicted)));
    CHECK((error[0] == '+' || error[0] == '-'));
    CHECK(std::isfinite(std::stod(error)));
  }
  CHECK(r.out.find("each row is the repetition with the median actual time of 1") != std::string::npos);
  CHECK(r.out.find("median |LogGPS error| <= 3% at 2 ranks: ") != std::string::npos);

  // validation.json: the same numbers, the parameters used, and a consistent signed error.
  const json j = read_json(out / "validation.json");
  CHECK(j.at("format") == "mstep-validation");
  CHECK(j.at("repeat") == 1);
  CHECK_FALSE(j.at("host").get<std::string>().empty());
  CHECK(j.at("command").at(1) == "validate");
  REQUIRE(j.at("experiments").size() == 1);
  const json& x = j.at("experiments").at(0);
  CHECK(x.at("label") == "");
  CHECK(x.at("params").at("file") == params.string());
  CHECK(x.at("params").at("content").at("S") == 8256);
  CHECK(x.at("S") == 8256);
  REQUIRE(x.at("rows").size() == 1);
  const json& rj = x.at("rows").at(0);
  CHECK(rj.at("ok") == true);
  CHECK(rj.at("case") == "ring");
  CHECK(rj.at("args") == std::vector<std::string>{"20", "1024"});
  CHECK(rj.at("kept_repetition") == 1);
  const double a = rj.at("actual_s");
  CHECK(a > 0);
  CHECK(rj.at("repetitions_s").at(0) == a);
  for (const auto& m : kModels) {
    INFO(m << ": " << rj.at("models").at(m).dump());
    const json& mj = rj.at("models").at(m);
    REQUIRE(mj.at("predicted_s").is_number());
    const double p = mj.at("predicted_s");
    CHECK(mj.at("error_pct").get<double>() == Approx(100 * (a - p) / a));
  }
  // 20 iterations of 2 ranks: 40 ring messages of 1024 B, all below S, plus none from collectives.
  CHECK(rj.at("messages").at("below_S") == 40);
  CHECK(rj.at("messages").at("at_or_above_S") == 0);
  CHECK(rj.at("messages").at("crosses_S") == false);
  CHECK(fs::exists(rj.at("trace").get<std::string>() + "/meta.json"));
  REQUIRE(j.at("goals").size() == 3);
  CHECK(j.at("goals").at(2).at("verdict") == "untested");

  std::ifstream md(out / "validation.md");
  std::stringstream mds;
  mds << md.rdbuf();
  CHECK(mds.str().find("| ring | tiny | `20 1024` | 2 |") != std::string::npos);

  // The directory is not replaced without -f.
  const Result again = validate(dir, args);
  check_one_line_error(again, 2);
  CHECK(again.err.find("exists (use -f to replace it)") != std::string::npos);
}

TEST_CASE("validate: a bad suite is a one-line error with exit 2", "[validate]") {
  const fs::path dir = test_dir();
  const fs::path params = write(dir / "params.json", kParams);
  struct Bad {
    std::string what, text, message;
  };
  const std::vector<Bad> bad{
      {"missing file", "", "cannot read suite"},
      {"malformed JSON", R"({"cases": [ )", "not valid JSON"},
      {"unknown key", suite_of(R"({"name": "ring", "program": "ring", "sizes": [{"label": "a", "args": [], "ranks": [2], "size": 3}]})"),
       "key 'cases[0].sizes[0].size': unknown key"},
      {"unknown top-level key", R"({"cases": [], "extra": 1})", "key 'extra': unknown key"},
      {"bad label", suite_of(R"({"name": "ring/x", "program": "ring", "sizes": [{"label": "a", "args": [], "ranks": [2]}]})"),
       "key 'cases[0].name'"},
      {"length_arg past a size's arguments",
       suite_of(R"({"name": "ring", "program": "ring", "length_arg": 2, "sizes": [{"label": "a", "args": ["20", "1024"], "ranks": [2]}]})"),
       "key 'cases[0].length_arg': size 'a' has no positive integer argument 2 to scale"},
      {"length_arg at an argument that is not a count",
       suite_of(R"({"name": "halo", "program": "halo", "length_arg": 2, "sizes": [{"label": "b", "args": ["50", "20", "0.5"], "ranks": [2]}]})"),
       "key 'cases[0].length_arg': size 'b' has no positive integer argument 2 to scale"},
      {"negative length_arg",
       suite_of(R"({"name": "ring", "program": "ring", "length_arg": -1, "sizes": [{"label": "a", "args": ["20"], "ranks": [2]}]})"),
       "key 'cases[0].length_arg': expected an argument's index, got a number"},
  };
  for (const auto& b : bad) {
    INFO(b.what);
    const fs::path suite = dir / (std::to_string(&b - bad.data()) + ".json");
    if (!b.text.empty()) write(suite, b.text);
    const fs::path out = dir / "out";
    const Result r = validate(dir, {"--suite", suite.string(), "--params", params.string(), "-o", out.string()});
    check_one_line_error(r, 2);
    CHECK(r.err.find(b.message) != std::string::npos);
    CHECK_FALSE(fs::exists(out));
  }
  // A case --only names that the suite lacks.
  const fs::path suite = write(dir / "good.json", suite_of(kRingCase));
  const Result r = validate(dir, {"--suite", suite.string(), "--only", "nosuch", "-o", (dir / "out").string()});
  check_one_line_error(r, 2);
  CHECK(r.err.find("--only: no case 'nosuch'") != std::string::npos);
}

TEST_CASE("validate: a failing case is named, the others still run, exit 1", "[validate]") {
  const fs::path dir = test_dir();
  const std::string failing = R"({"name": "false", "program": "/bin/false", "sizes": [{"label": "x", "args": [], "ranks": [2]}]})";
  const std::string missing = R"({"name": "gone", "program": "no_such_example", "sizes": [{"label": "x", "args": [], "ranks": [2]}]})";
  const fs::path suite = write(dir / "suite.json", suite_of(failing + "," + missing + "," + kRingCase));
  const fs::path params = write(dir / "params.json", kParams);
  const fs::path out = dir / "out";
  const Result r = validate(dir, {"--suite", suite.string(), "--quick", "--transport", "shm", "--params", params.string(),
                                  "-o", out.string()});
  CHECK(r.code == 1);
  CHECK(r.err.find("mstep: validate: false x at 2 ranks failed: '" + kMpiexec + " -n 2 /bin/false' exited with code 1 (log ") !=
        std::string::npos);
  CHECK(r.err.find("mstep: validate: gone x at 2 ranks failed: program ") != std::string::npos);
  CHECK(r.err.find("no_such_example not found") != std::string::npos);
  CHECK(r.err.find("mstep: validate: 2 runs failed") != std::string::npos);
  const json j = read_json(out / "validation.json");
  const json& rows = j.at("experiments").at(0).at("rows");
  REQUIRE(rows.size() == 3);
  CHECK(rows.at(0).at("ok") == false);
  CHECK(rows.at(1).at("ok") == false);
  CHECK(rows.at(2).at("ok") == true);
  CHECK(rows.at(2).at("actual_s").get<double>() > 0);
  // Failed runs leave the goals not met rather than quietly passing.
  CHECK(j.at("goals").at(0).at("verdict") == "not met");
}

TEST_CASE("validate: a run still going after --timeout is ended, launcher and ranks, run once more, then named", "[validate]") {
  // /bin/sleep under the launcher stands for a job hung in MPI_Finalize (seen over UCX's TCP).
  const fs::path dir = test_dir();
  const std::string sleeper =
      R"({"name": "sleeper", "program": "/bin/sleep", "sizes": [{"label": "x", "args": ["7919"], "ranks": [2]}]})";
  const fs::path suite = write(dir / "suite.json", suite_of(sleeper + "," + kRingCase));
  const fs::path params = write(dir / "params.json", kParams);
  const fs::path out = dir / "out";
  const auto start = std::chrono::steady_clock::now();
  const Result r = validate(dir, {"--suite", suite.string(), "--quick", "--transport", "shm", "--params", params.string(),
                                  "-o", out.string(), "--timeout", "1"});
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(r.err);
  CHECK(r.code == 1);
  CHECK(r.err.find("mstep: validate: sleeper x at 2 ranks: repetition 1 was still running after 1 s: ended, and run again\n") !=
        std::string::npos);
  CHECK(r.err.find("mstep: validate: sleeper x at 2 ranks failed: '" + kMpiexec + " -n 2 /bin/sleep 7919' was still running "
                   "after 1 s, twice (log ") != std::string::npos);
  CHECK(r.err.find("mstep: validate: ring tiny at 2 ranks: repetition 1/1: ") != std::string::npos);  // the next case runs
  CHECK(took < 60);
  // Nothing of the job is left: the launcher's group was ended whole.
  const Result ps = run({"pgrep", "-f", "sleep 7919"}, {}, dir, 10);
  CHECK(ps.out.empty());
}

TEST_CASE("validate killed outright (SIGKILL, as a harness's timeout does): the job it was recording ends too",
          "[validate]") {
  // The recording runs in a process group of its own (so that a hung job is ended whole), out of
  // reach of what ends validate's group: it now gets SIGTERM when validate ends, and passes it on.
  const fs::path dir = test_dir();
  const std::string sleeper =
      R"({"name": "sleeper", "program": "/bin/sleep", "sizes": [{"label": "x", "args": ["7927"], "ranks": [2]}]})";
  const fs::path suite = write(dir / "suite.json", suite_of(sleeper));
  const fs::path params = write(dir / "params.json", kParams);
  Child v({kMstep, "validate", "--suite", suite.string(), "--quick", "--transport", "shm", "--params", params.string(),
           "-o", (dir / "out").string()},
          {}, dir);
  check_job_ends_with(v, "^/bin/sleep 7927", dir);
}

TEST_CASE("validate --transport both: the runs over TCP, alternating with shared memory, and the cross table",
          "[validate]") {
  const fs::path dir = test_dir();
  const fs::path suite = write(dir / "suite.json", suite_of(kRingCase));
  const fs::path params = write(dir / "params.json", kParams);
  const fs::path out = dir / "out";
  // The same parameters for both transports (no calibration in the test): the cross table's
  // prediction for the other transport is then the recording's own report. A run over TCP can
  // hang in MPI_Finalize (UCX's, natively too: once in the CI's runs, ending this test at its 120
  // s): --timeout ends such a run after 20 s and records it again, as validate does for users.
  const Result r = validate(dir, {"--suite", suite.string(), "--quick", "--repeat", "2", "--no-s-moved", "--params",
                                  params.string(), "--tcp-params", params.string(), "-o", out.string(), "--timeout",
                                  "20"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  // The repetitions alternate between the transports.
  std::vector<std::size_t> at;
  for (const char* line : {"ring tiny at 2 ranks: repetition 1/2: ", "ring tiny at 2 ranks [tcp]: repetition 1/2: ",
                           "ring tiny at 2 ranks: repetition 2/2: ", "ring tiny at 2 ranks [tcp]: repetition 2/2: "}) {
    at.push_back(r.err.find(std::string("mstep: validate: ") + line));
    CHECK(at.back() != std::string::npos);
  }
  CHECK(std::is_sorted(at.begin(), at.end()));
  CHECK(r.out.find("TCP: UCX_TLS=tcp,self") != std::string::npos);
  CHECK(r.out.find("LogGPS what-if from one transport to the other within 10% on every case: ") != std::string::npos);
  const json j = read_json(out / "validation.json");
  REQUIRE(j.at("experiments").size() == 2);
  CHECK(j.at("experiments").at(1).at("label") == "tcp");
  CHECK(j.at("experiments").at(1).at("env").at("UCX_TLS") == "tcp,self");
  // The TCP trace says it ran over TCP.
  const json& tcp_row = j.at("experiments").at(1).at("rows").at(0);
  REQUIRE(tcp_row.at("ok") == true);
  std::ifstream meta(tcp_row.at("trace").get<std::string>() + "/meta.json");
  std::stringstream meta_text;
  meta_text << meta.rdbuf();
  CHECK(meta_text.str().find("tcp,self") != std::string::npos);
  const json& cross = j.at("cross_transport");
  REQUIRE(cross.size() == 2);
  CHECK(cross.at(0).at("recorded_on") == "shared memory");
  CHECK(cross.at(0).at("predicted_for") == "TCP");
  CHECK(cross.at(1).at("recorded_on") == "TCP");
  CHECK(cross.at(1).at("predicted_for") == "shared memory");
  const json& shm_row = j.at("experiments").at(0).at("rows").at(0);
  std::vector<std::size_t> kept_pair;
  for (const json& c : cross) {
    INFO(c.dump());
    // Repetition k of one transport is paired with repetition k of the other; the row is the pair
    // with the median LogGPS error (the lower of two), and its actual time the real run of that pair.
    REQUIRE(c.at("pairs") == 2);
    const json& errors = c.at("loggps_error_pct_pairs");
    REQUIRE(errors.size() == 2);
    const std::size_t k = errors.at(0).get<double>() <= errors.at(1).get<double>() ? 0 : 1;
    kept_pair.push_back(k);
    CHECK(c.at("loggps_error_pct").get<double>() == errors.at(k).get<double>());
    const json& to = c.at("predicted_for") == "TCP" ? tcp_row : shm_row;
    CHECK(c.at("actual_s").get<double>() == to.at("repetitions_s").at(k).get<double>());
    const double a = c.at("actual_s"), p = c.at("loggps_s");
    CHECK(c.at("loggps_error_pct").get<double>() == Approx(100 * (a - p) / a));
    // With one parameter file, the kept repetition's prediction is its own report's.
    const json& from = c.at("predicted_for") == "TCP" ? shm_row : tcp_row;
    if (from.at("kept_repetition").get<std::size_t>() == k + 1)
      CHECK(p == Approx(from.at("models").at("LogGPS").at("predicted_s").get<double>()).epsilon(1e-9));
    // The computation compared is the recording's time outside MPI between MPI_Init and
    // MPI_Finalize, as its report gives it (it used to hold MPI_Init's time as well).
    const Result rep = run({kMstep, "report", from.at("repetition_traces").at(k).get<std::string>(), "--format", "json"},
                           no_default_params(dir));
    REQUIRE(rep.code == 0);
    const json rj = parse_json(rep.out);
    double spans = 0;
    for (const json& v : rj.at("rank_actual_s")) spans += v.get<double>();
    const double computation = spans - rj.at("mpi_time_s").get<double>() - rj.at("tool_time_s").get<double>();
    CHECK(c.at("computation_s").get<double>() == Approx(computation).epsilon(1e-6));
    CHECK(c.at("computation_s").get<double>() < spans);
  }
  // The computation of each recording against the other's: one pair sees one ratio both ways.
  const double d0 = cross.at(0).at("computation_diff_pct"), d1 = cross.at(1).at("computation_diff_pct");
  if (kept_pair[0] == kept_pair[1]) CHECK((1 + d0 / 100) * (1 + d1 / 100) == Approx(1));
  // Each is the recording's computation against the other transport's, by definition; a bound on
  // their size would be a timing assertion (the CI's load once took a tiny ring's to +217%).
  for (const json& c : cross) {
    const double here = c.at("computation_s"), there = c.at("computation_there_s");
    REQUIRE(there > 0);
    CHECK(c.at("computation_diff_pct").get<double>() == Approx(100 * (here - there) / there));
  }
  CHECK(std::isfinite(d0));
  CHECK(std::isfinite(d1));
}

TEST_CASE("validate calibrates, and calibrates again after the runs to see whether the machine changed speed",
          "[validate]") {
  const fs::path dir = test_dir();
  const fs::path suite = write(dir / "suite.json", suite_of(kRingCase));
  const fs::path out = dir / "out";
  const Result r = validate(dir, {"--suite", suite.string(), "--quick", "--no-s-moved", "--transport", "shm", "-o",
                                  out.string()});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.err.find("mstep: validate: calibrating again after the runs: ") != std::string::npos);
  CHECK(fs::exists(out / "params.json"));
  CHECK(fs::exists(out / "params-after.json"));
  const json j = read_json(out / "validation.json");
  const json& change = j.at("experiments").at(0).at("speed_change");
  // null when the two calibrations agree within 15%; else the sentence, also under the table.
  CHECK((change.is_null() || change.get<std::string>().rfind("the machine changed speed during these runs: ", 0) == 0));
  if (change.is_string()) CHECK(r.out.find("Warning: the machine changed speed") != std::string::npos);
  // Each row is predicted with the calibration of its run's period: of the first one, those made
  // during the runs (when a run came out of every period so far) and the one after, the first whose
  // period holds the run's half round trip (the geometric mean of its two probes, at most 1.3 and
  // at least 0.5 of the calibration's), else the nearest by ratio (the probe scaled as
  // model::nearest_period scales it); a calibration whose own probes (meta.probes_8B) differ by
  // more than 1.6 times ran in two periods and is taken in the run's period only where no other is.
  const json& x = j.at("experiments").at(0);
  REQUIRE(x.at("params_after").at("content").is_object());
  std::vector<std::pair<std::string, double>> pool{
      {"", x.at("params").at("content").at("meta").at("half_rtt_8B").get<double>()}};
  std::vector<bool> mixed;
  auto mixed_periods = [](const json& meta) {
    double low = 0, high = 0;
    for (const json& p : meta.value("probes_8B", json::array())) {
      const double h = p.at("half_rtt").get<double>();
      low = low == 0 ? h : std::min(low, h), high = std::max(high, h);
    }
    return low > 0 && high > 1.6 * low;
  };
  mixed.push_back(mixed_periods(x.at("params").at("content").at("meta")));
  for (const json& d : x.at("params_during")) {
    CHECK(fs::exists(d.at("file").get<std::string>()));
    pool.emplace_back(d.at("file"), d.at("content").at("meta").at("half_rtt_8B").get<double>());
    mixed.push_back(mixed_periods(d.at("content").at("meta")));
  }
  CHECK(x.at("params_during").size() <= 8);
  if (!x.at("params_during").empty())
    CHECK(r.err.find("out of every calibration's period: calibrating again in it") != std::string::npos);
  pool.emplace_back(x.at("params_after").at("file"), x.at("params_after").at("content").at("meta").at("half_rtt_8B").get<double>());
  mixed.push_back(mixed_periods(x.at("params_after").at("content").at("meta")));
  REQUIRE(!x.at("rows").empty());
  for (const json& row : x.at("rows")) {
    INFO(row.dump());
    const json& probe = row.at("probe_half_rtt_s");
    REQUIRE(probe.at(0).is_number());
    REQUIRE(probe.at(1).is_number());
    const double run_s = std::sqrt(probe.at(0).get<double>() * probe.at(1).get<double>());
    std::size_t chosen = pool.size();
    for (const bool take_mixed : {false, true})
      for (std::size_t i = 0; i < pool.size() && chosen == pool.size(); ++i)
        if ((take_mixed || !mixed[i]) && run_s <= 1.3 * pool[i].second && run_s >= 0.5 * pool[i].second) chosen = i;
    auto distance = [&](double calibrated) { return std::abs(std::log(run_s / (0.85 * calibrated))); };
    if (chosen == pool.size()) {
      chosen = 0;
      for (std::size_t i = 1; i < pool.size(); ++i)
        if (distance(pool[i].second) < distance(pool[chosen].second)) chosen = i;
    }
    CHECK(row.at("params_after") == (chosen == pool.size() - 1));
    CHECK(row.at("params_during") == (chosen > 0 && chosen < pool.size() - 1));
    if (chosen == 0) CHECK(row.at("params_file").is_null());
    else CHECK(row.at("params_file") == pool[chosen].first);
  }
}

TEST_CASE("validate calibrates again at once when a run comes out of every calibration's period, twice at most "
          "where those calibrations do not find it", "[validate]") {
  const fs::path dir = test_dir();
  // A run over TCP (about 7 us half round trip) in an experiment calibrated on shared memory (a
  // fraction of a microsecond): out of every period, and a calibration on shared memory will not
  // find it either.
  const fs::path ring = fs::path(kMstep).parent_path().parent_path() / "examples" / "ring";
  const fs::path script = write(dir / "ring_tcp.sh", "#!/bin/sh\nUCX_TLS=tcp,self exec " + ring.string() + " \"$@\"\n");
  fs::permissions(script, fs::perms::owner_all);
  const fs::path suite = write(dir / "suite.json", suite_of(R"({"name": "ring", "program": ")" + script.string() +
                                                            R"(", "sizes": [{"label": "tiny", "args": ["20", "1024"], "ranks": [2], "quick": true}]})"));
  const fs::path out = dir / "out";
  const Result r = validate(dir, {"--suite", suite.string(), "--quick", "--repeat", "3", "--no-s-moved", "--transport",
                                  "shm", "-o", out.string(), "--timeout", "20"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  for (const char* run : {"ring-tiny-n2-r1", "ring-tiny-n2-r2"}) {
    const auto at = r.err.find(std::string("mstep: validate: ") + run + ": 8-byte half round trip ");
    REQUIRE(at != std::string::npos);
    CHECK(r.err.find("us, out of every calibration's period: calibrating again in it: ", at) != std::string::npos);
  }
  CHECK(r.err.find("out/params-period-1.json --quick (log ") != std::string::npos);
  CHECK(r.err.find("out/params-period-2.json --quick (log ") != std::string::npos);
  const std::string missed = "mstep: validate: warning: the calibration in that period did not find it (8-byte half round trip ";
  const auto first_miss = r.err.find(missed);
  REQUIRE(first_miss != std::string::npos);
  CHECK(r.err.find(missed, first_miss + 1) != std::string::npos);
  CHECK(r.err.find("us): 2 such, no more calibrations during these runs\n") != std::string::npos);
  // The third repetition, as far out, calibrates no more.
  CHECK(r.err.find("ring-tiny-n2-r3: 8-byte half round trip") == std::string::npos);
  CHECK_FALSE(fs::exists(out / "params-period-3.json"));
  const json j = read_json(out / "validation.json");
  const json& during = j.at("experiments").at(0).at("params_during");
  REQUIRE(during.size() == 2);
  CHECK(during.at(0).at("file") == (out / "params-period-1.json").string());
  CHECK(during.at(1).at("file") == (out / "params-period-2.json").string());
  CHECK(j.at("experiments").at(0).at("rows").at(0).at("other_period") == true);
}

TEST_CASE("validate: the shipped suites parse (a rank count none of them has leaves nothing to run)", "[validate]") {
  const fs::path dir = test_dir();
  for (const char* name : {"suite.json", "suite-multicore.json"}) {
    const fs::path suite = fs::path(REPORT_SRC_DIR) / ".." / ".." / "share" / "validate" / name;
    const Result r = run({kMstep, "validate", "--suite", suite.string(), "--ranks", "3", "-o", (dir / "out").string()});
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(r.err == "mstep: nothing to run: no case of " + suite.string() + " matches the options\n");
  }
}

TEST_CASE("validate: runs of more ranks than cores are announced once, run, and marked, not summarised", "[validate]") {
  const fs::path dir = test_dir();
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int over = cores + 1;
  const std::string ring = R"({"name": "ring", "program": "ring", "sizes": [{"label": "tiny", "args": ["2", "8"], "ranks": [2, )" +
                           std::to_string(over) + "]}]}";
  const fs::path suite = write(dir / "suite.json", suite_of(ring));
  const fs::path params = write(dir / "params.json", kParams);
  const fs::path out = dir / "out";
  const Result r = validate(dir, {"--suite", suite.string(), "--repeat", "1", "--no-s-moved", "--transport", "shm",
                                  "--params", params.string(), "-o", out.string()});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const std::string c = std::to_string(cores);
  CHECK(r.err.find("mstep: validate: warning: runs of up to " + std::to_string(over) + " ranks on " + c +
                   " cores: those over " + c +
                   " ranks are oversubscribed, slow and marked so, not timed" +
                   (cores >= 2 ? " (--ranks 2 runs the others)\n" : "\n")) != std::string::npos);
  const json j = read_json(out / "validation.json");
  const json& rows = j.at("experiments").at(0).at("rows");
  REQUIRE(rows.size() == 2);
  CHECK(rows.at(0).at("oversubscribed") == (2 > cores));
  CHECK(rows.at(1).at("ranks") == over);
  CHECK(rows.at(1).at("oversubscribed") == true);
  CHECK(j.at("experiments").at(0).at("summaries_at_more_ranks").empty());
}
