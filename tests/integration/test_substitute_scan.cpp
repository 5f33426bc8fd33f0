// Integration test: libmstep's MPI_Scan and MPI_Exscan over point-to-point messages (MSTEP_SCAN;
// interpose/substitute_scan.hpp): MPICH's results byte for byte (scan_check), exactly MPICH's
// algorithms' messages on one host (pmpi_count_shim below libmstep), charged by the report as they
// ran, refused in one line when the setting is malformed, and delayed by the apparatus.
#include "harness.hpp"
#include "substitute_support.hpp"

using namespace mstep_it;

TEST_CASE("substitute scan: MPICH's results to the byte, its algorithms' messages, charged as they ran") {
  // 6 sizes x 6 kinds x 2 (Scan, Exscan) x 2 (in place or not) on WORLD and on a half: 288.
  for (const int ranks : {3, 4}) check_against_mpich("scan_check", "MSTEP_SCAN", "pt2pt", ranks, 288);
  // scan_check loop 1 at 3 ranks: one MPI_Scan and one MPI_Exscan of one int. Recursive doubling:
  // round 0 pairs 0 and 1, round 1 pairs 0 and 2 (1 XOR 2 = 3 is no rank): Sendrecvs 2, 1, 1 for
  // each call. MPI_Scan then: rank 2 sends its result to rank 0, and rank 0 sends the one-int
  // flag to 2 and then to 1 (binomial tree).
  const fs::path dir = test_dir() / "count_scan";
  const Result r = record(dir, 3, {prog("scan_check"), "loop", "1"}, {{"LD_PRELOAD", kCountShim}, {"MSTEP_SCAN", "pt2pt"}});
  check_recorded(r, 3);
  CHECK(r.out.find("scan_check: 3 ranks, 1 calls: ok") != std::string::npos);
  CHECK(counts_of(r.err) == std::map<int, Counts>{{0, Counts{2, 1, 4}}, {1, Counts{0, 1, 2}}, {2, Counts{1, 1, 2}}});
  CHECK(meta_of(dir).at("collectives").at("scan") == "pt2pt");
  const fs::path params = test_dir() / "scan_params.json";
  std::ofstream(params) << R"({"L": 2e-6, "o": 1e-6, "Os": 0, "Or": 0, "g": 5e-7, "Gs": 1e-9, "Gl": 1e-9, "s": null, "S": 1000})";
  const std::vector<std::string> algos = report_algorithms(dir, params);
  const auto has = [&](const std::string& line) { return std::find(algos.begin(), algos.end(), line) != algos.end(); };
  CHECK(has("MPI_Scan: recursive doubling, the node's total to rank 0, a flag broadcast (libmstep's substitute for 3 "
            "ranks, 4 bytes; 1 call)"));
  CHECK(has("MPI_Exscan: recursive doubling (libmstep's substitute for 3 ranks, 4 bytes; 1 call)"));
  {
    INFO("a malformed setting: one line on rank 0's stderr, MPICH's own collectives run");
    const fs::path bad = test_dir() / "scan_bad";
    const Result b = record(bad, 2, {prog("scan_check"), "loop", "1"}, {{"LD_PRELOAD", kCountShim}, {"MSTEP_SCAN", "recursive_doubling"}});
    check_recorded(b, 2);
    CHECK(lines_equal(b.err, "mstep: MSTEP_SCAN='recursive_doubling' is not mpi or pt2pt; MPICH's own collectives run") == 1);
    for (const auto& [rank, k] : counts_of(b.err)) CHECK(k == Counts{});
  }
}

TEST_CASE("substitute scan: the delay apparatus delays each of its messages", "[report]") {
  // MSTEP_DELAY_L=50us at 2 ranks: each MPI_Exscan is one exchange, whose message cannot complete
  // before its send plus L; the two ranks' times a call add up to at least L. MPICH's own are not
  // delayed.
  const DelayedRuns t = delayed_and_mpich("scan", "scan_check", "MPI_Exscan", {0, 1}, {{"MSTEP_SCAN", "pt2pt"}});
  CHECK(t.delayed >= 0.95 * 50e-6 * 50);
  CHECK(t.mpich < 0.5 * t.delayed);  // a fraction of the delayed run's (a noisy VM: not an absolute bound)
}
