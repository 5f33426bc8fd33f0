// Integration test: `mstep advise` end to end, on a real 4-rank run of collectives.c (one round on
// MPI_COMM_WORLD, one on each half of a parity split) and on a synthetic broadcast trace, under a
// hand-written parameter file whose figures are worked out below from MODELS.md sections 3 and 4.
// Nothing depends on the run's timing: the advice is the model's, the call counts the program's.
#include "harness.hpp"

using namespace mstep_it;

namespace {

// L 100 us, o 1 us, g 0.5 us, 1 ns per byte, rendezvous from 1000 B. A k-byte eager message:
// the sender is busy D = o = 1 us, the receiver has it o + L + k ns + o after the send started.
constexpr const char* kSlowLatency = R"({"L": 1e-4, "o": 1e-6, "Os": 0, "Or": 0, "g": 5e-7, "Gs": 1e-9,
  "Gl": 1e-9, "s": null, "S": 1000})";

const json& site_of(const json& advice, const std::string& call, int comm_size, std::uint64_t bytes = 0) {
  for (const auto& s : advice.at("sites"))
    if (s.at("call") == call && s.at("comm_size") == comm_size && s.at("bytes") == bytes) return s;
  FAIL("no " << call << " site of " << comm_size << " ranks and " << bytes << " B in " << advice.dump(1));
  throw std::logic_error("unreachable");
}

double predicted(const json& site, const std::string& algorithm) {
  for (const auto& a : site.at("algorithms"))
    if (a.at("name") == algorithm) return a.at("predicted_s").get<double>();
  FAIL("no algorithm " << algorithm << " in " << site.dump(1));
  return 0;
}

}  // namespace

TEST_CASE("advise: every barrier and broadcast site of a real run, each algorithm's time, and bad input", "[advise]") {
  const fs::path dir = test_dir() / "trace";
  const Env env = no_default_params(dir.parent_path());
  check_recorded(record(dir, 4, {prog("collectives")}, {{"LD_PRELOAD", kShim}}), 4);

  {
    INFO("no parameters anywhere: one line naming mstep calibrate");
    const Result r = run({kMstep, "advise", dir.string()}, env);
    check_one_line_error(r, 1);
    CHECK(r.err.find("mstep calibrate") != std::string::npos);
  }
  const fs::path params = dir.parent_path() / "slow.json";
  std::ofstream(params) << kSlowLatency;
  const json j = mstep_json("advise", dir, {"--params", params.string()}, env);
  CHECK(j.at("ranks") == 4);
  CHECK(j.at("complete") == true);
  REQUIRE(j.at("sites").size() == 4);  // Bcast and Barrier, on 4 ranks and on 2 (both halves)

  {
    INFO("MPI_Bcast of 10 ints from root 0 on MPI_COMM_WORLD");
    const json& s = site_of(j, "MPI_Bcast", 4, 40);
    CHECK(s.at("location").get<std::string>().find("collectives.c:35") != std::string::npos);
    CHECK(s.at("root") == 0);
    CHECK(s.at("calls") == 4);
    CHECK(s.at("calls_per_rank") == 1.0);
    CHECK(s.at("network") == "uniform LogGPS");
    // D = 1, w = 102.04 - 1. MPICH's binomial tree of 4: 2 has it at 102.04, 1 at 103.04, 3 (from
    // 2) at 204.08 us. The flat tree: the third send ends at 3 us, + w = 104.04 us.
    CHECK(predicted(s, "MPICH default: binomial tree") == Approx(204.08e-6));
    CHECK(predicted(s, "binomial tree") == Approx(204.08e-6));
    CHECK(predicted(s, "flat tree") == Approx(104.04e-6));
    CHECK(s.at("best") == "flat tree");
    CHECK(s.at("gain_per_call_s").get<double>() == Approx(100.04e-6));
    CHECK(s.at("gain_s").get<double>() == Approx(100.04e-6));
  }
  {
    INFO("the same line on the halves of the split: 2 ranks each, one site, nothing to gain");
    const json& s = site_of(j, "MPI_Bcast", 2, 40);
    CHECK(s.at("calls") == 4);
    CHECK(s.at("ranks") == 4);
    CHECK(predicted(s, "MPICH default: binomial tree") == Approx(102.04e-6));
    CHECK(s.at("gain_s") == 0.0);
  }
  {
    INFO("MPI_Barrier of 4: dissemination, two rounds of o + L + o, is what MPICH runs");
    const json& s = site_of(j, "MPI_Barrier", 4);
    CHECK(s.at("location").get<std::string>().find("collectives.c:120") != std::string::npos);
    CHECK(s.at("root").is_null());
    CHECK(predicted(s, "MPICH default: dissemination") == Approx(204e-6));
    CHECK(predicted(s, "dissemination") == Approx(204e-6));
    CHECK(predicted(s, "central counter") == Approx(208e-6));          // 2 * 102 + 2 * 1 + 2 * 1
    CHECK(predicted(s, "combining tree (n=2)") == Approx(408e-6));     // 102 * 2 + 1 + 102 + 100 + 1
    CHECK(s.at("best") == "MPICH default: dissemination");
    CHECK(s.at("gain_s") == 0.0);
    CHECK(predicted(site_of(j, "MPI_Barrier", 2), "central counter") == Approx(204e-6));
  }
  {
    INFO("each site's instances measured (one per communicator and call), and MPICH's default is what ran");
    for (const auto& s : j.at("sites")) {
      INFO(s.dump());
      const json& span = s.at("span");
      CHECK(span.at("instances") == s.at("calls").get<int>() / s.at("comm_size").get<int>());
      CHECK(span.at("median_s").get<double>() > 0);
      CHECK(span.at("median_s").get<double>() < 1);
      CHECK(span.at("sampled") == false);
      CHECK(s.at("ran").get<std::string>().rfind("MPICH default: ", 0) == 0);
    }
  }
  {
    INFO("the sites that gain most come first; text and CSV say the same");
    CHECK(j.at("sites")[0].at("best") == "flat tree");
    const Result text = run({kMstep, "advise", dir.string(), "--params", params.string()}, env);
    CHECK(text.code == 0);
    CHECK(text.out.find("use flat tree: 100.040 us less per call") != std::string::npos);
    const Result csv = run({kMstep, "advise", dir.string(), "--params", params.string(), "--format", "csv"}, env);
    CHECK(csv.code == 0);
    const auto rows = lines_of(csv.out);
    // A header, then one row per algorithm: 5 + 5 broadcast, 6 + 6 barrier.
    REQUIRE(rows.size() == 1 + 22);
    CHECK(rows[0].rfind("call,location,comm_size,root,bytes,", 0) == 0);
    CHECK(rows[0].find(",span_median_s,span_mean_s,") != std::string::npos);
    CHECK(std::count_if(rows.begin(), rows.end(), [](const std::string& r) { return r.ends_with(",1"); }) == 4);  // ran
    CHECK(text.out.find("measured span per instance (from the last arrival it needed to the last exit): median ") !=
          std::string::npos);
  }
  {
    INFO("a run with libmstep's substitutes: the rows that ran are theirs");
    const fs::path sub = dir.parent_path() / "substituted";
    check_recorded(record(sub, 4, {prog("collectives")},
                          {{"LD_PRELOAD", kShim}, {"MSTEP_BARRIER", "tree:4"}, {"MSTEP_BCAST", "flat"}}),
                   4);
    const json w = mstep_json("advise", sub, {"--params", params.string()}, env);
    CHECK(site_of(w, "MPI_Barrier", 4).at("ran") == "combining tree (n=4)");
    CHECK(site_of(w, "MPI_Barrier", 2).at("ran") == "combining tree (n=4)");
    CHECK(site_of(w, "MPI_Bcast", 4, 40).at("ran") == "flat tree");
    const fs::path other = dir.parent_path() / "tree3";
    check_recorded(record(other, 4, {prog("collectives")}, {{"LD_PRELOAD", kShim}, {"MSTEP_BARRIER", "tree:3"}}), 4);
    const json t = mstep_json("advise", other, {"--params", params.string()}, env);
    CHECK(site_of(t, "MPI_Barrier", 4).at("ran").is_null());  // no row for a tree of arity 3
    CHECK(site_of(t, "MPI_Bcast", 4, 40).at("ran") == "MPICH default: binomial tree");
  }
  {
    INFO("what-if: with L = 1 us the binomial tree is no longer slower");
    const json w = mstep_json("advise", dir, {"--params", params.string(), "--set", "L=1us"}, env);
    REQUIRE(w.at("changes").size() == 1);
    // D = 1, e2e = 1 + 1.04 + 1 = 3.04: binomial 6.08 us, flat 3 + 2.04 = 5.04 us.
    CHECK(predicted(site_of(w, "MPI_Bcast", 4, 40), "MPICH default: binomial tree") == Approx(6.08e-6));
    CHECK(predicted(site_of(w, "MPI_Bcast", 4, 40), "flat tree") == Approx(5.04e-6));
  }
  {
    INFO("--pairs: two clusters {0, 1} and {2, 3} with 100 us between them");
    const fs::path grid = dir.parent_path() / "grid.json";
    std::ofstream(grid) << R"({"clusters": [[0, 1], [2, 3]], "inter": "100us"})";
    const json w = mstep_json("advise", dir, {"--params", params.string(), "--pairs", grid.string()}, env);
    const json& s = site_of(w, "MPI_Bcast", 4, 40);
    CHECK(s.at("network") == "uniform LogGPS + the per-pair latencies");
    // Flat: 1 at 102.04, 2 at 2 + 101.04 + 100, 3 at 3 + 201.04 us.
    CHECK(predicted(s, "flat tree") == Approx(204.04e-6));
    // The barrier as libmstep's programs on L + the pair's latency (100 us inside, 200 across):
    // dissemination, round 1: 0 and 2 hear across at 0 + 1 + 200 and take it at 202, 1 and 3 at
    // 102; round 2 (all across): 0 sends at 202 and 2 hears at 403, takes it at 404.
    const json& b = site_of(w, "MPI_Barrier", 4);
    CHECK(b.at("network") == "LogP from LogGPS (L, o_s = o_r = o, g) + the per-pair latencies");
    CHECK(predicted(b, "dissemination") == Approx(404e-6));
    CHECK(predicted(b, "MPICH default: dissemination") == Approx(404e-6));
    std::ofstream(grid) << R"({"clusters": [[0, 1]], "inter": "100us"})";
    const Result bad = run({kMstep, "advise", dir.string(), "--params", params.string(), "--pairs", grid.string()}, env);
    check_one_line_error(bad, 2);
    CHECK(bad.err == "mstep: --pairs " + grid.string() + ": rank 2 is in no cluster\n");
  }
  {
    INFO("bad input: one line each");
    check_one_line_error(run({kMstep, "advise", dir.string(), "--params", params.string(), "--set", "L=fast"}, env), 2);
    const fs::path mpm_only = dir.parent_path() / "mpm.json";
    std::ofstream(mpm_only) << R"({"mpm": {"g": 1e-9, "L": 1e-6}})";
    const Result r = run({kMstep, "advise", dir.string(), "--params", mpm_only.string()}, env);
    check_one_line_error(r, 1);
    CHECK(r.err.find("needs LogGPS parameters") != std::string::npos);
    check_one_line_error(run({kMstep, "advise", (dir / "nothing").string(), "--params", params.string()}, env), 1);
  }
  {
    INFO("a rank file cut short: advised on what was read, named once, exit 1");
    const fs::path cut = dir.parent_path() / "cut";
    fs::copy(dir, cut, fs::copy_options::recursive);
    const fs::path rank2 = cut / "rank-00002.mst";
    fs::resize_file(rank2, fs::file_size(rank2) / 2);
    const Result r = run({kMstep, "advise", cut.string(), "--params", params.string(), "--format", "json"}, env);
    CHECK(r.code == 1);
    const json cut_advice = parse_json(r.out);
    CHECK(cut_advice.at("complete") == false);
    const auto l = lines_of(r.err);
    REQUIRE(l.size() == 1);
    CHECK(l[0].find("mstep: warning: " + rank2.string() + ": frame") == 0);
  }
}

TEST_CASE("advise: a synthetic broadcast of 8 ranks, where a flat tree beats MPICH's binomial tree", "[advise]") {
  const fs::path dir = test_dir() / "bcast";
  const Env env = no_default_params(dir.parent_path());
  REQUIRE(run({kMstep, "synth", "-o", dir.string(), "--ranks", "8", "--events", "400", "--pattern", "bcast",
               "--seed", "3"}).code == 0);
  const fs::path params = dir.parent_path() / "slow.json";
  std::ofstream(params) << kSlowLatency;
  const json j = mstep_json("advise", dir, {"--params", params.string()}, env);
  const json& s = site_of(j, "MPI_Bcast", 8, 8);
  // D = 1, w = 101.008 us. Binomial of 8: 4 at 102.008, 2 at 103.008, 6 at 204.016, 3 and 5 at
  // 205.016, 7 at 306.024 us; the flat tree 7 * 1 + 101.008 us.
  CHECK(predicted(s, "MPICH default: binomial tree") == Approx(306.024e-6));
  CHECK(predicted(s, "flat tree") == Approx(108.008e-6));
  CHECK(s.at("best") == "flat tree");
  CHECK(s.at("gain_s").get<double>() == Approx(198.016e-6 * s.at("calls_per_rank").get<double>()));
  CHECK(s.at("calls").get<double>() == 8 * s.at("calls_per_rank").get<double>());
  CHECK(site_of(j, "MPI_Barrier", 8).at("calls") == 8);  // the generator's closing barrier
}
