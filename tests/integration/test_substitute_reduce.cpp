// Integration test: libmstep's MPI_Reduce over point-to-point messages (MSTEP_REDUCE;
// interpose/substitute_reduce.hpp): MPICH's results byte for byte from every root
// (allreduce_check reduce), exactly MPICH's algorithms' messages (pmpi_count_shim below libmstep on
// collectives.c), charged by the report as they ran, and delayed by the apparatus; the same for
// MPI_Reduce_scatter(_block) (MSTEP_REDUCE_SCATTER; interpose/substitute_reduce_scatter.hpp,
// reduce_scatter_check).
#include "harness.hpp"
#include "substitute_support.hpp"

using namespace mstep_it;

TEST_CASE("substitute reduce: MPICH's results to the byte, its algorithms' messages, charged as they ran") {
  // allreduce_check's cases as MPI_Reduce from every root: 3 ranks (one folded in by
  // Rabenseifner's, and from root 1 the folded root's exchange) and 4, each setting.
  for (const char* algo : {"pt2pt", "binomial", "reduce_scatter_gather"}) {
    INFO("MSTEP_REDUCE=" << algo);
    for (const auto& [ranks, cases] : {std::pair{3, 420}, {4, 504}}) {
      const Result r = record(test_dir() / fmt_name(algo, ranks), ranks, {prog("allreduce_check"), "reduce"},
                              {{"LD_PRELOAD", kShim}, {"MSTEP_REDUCE", algo}});
      check_recorded(r, ranks);
      CHECK(r.out.find("allreduce_check: " + std::to_string(ranks) + " ranks, " + std::to_string(cases) + " cases: ok") !=
            std::string::npos);
    }
  }
  // collectives.c at 4 ranks: MPI_Reduce of 4 ints to the last rank, on WORLD and on each half (2
  // ranks). Binomial on WORLD, relative to root 3: 3 receives from 0 and from 1, which received
  // from 2 first; on a half the root (world 2, 3) receives from the other. So world rank 0: 2 sends;
  // 1: 2 sends and a receive; 2: a send and a receive; 3: 3 receives. reduce_scatter_gather runs
  // binomial on 4 ranks (2 8-byte elements, fewer than 4) and Rabenseifner's on 2: one Sendrecv
  // more each (the halving), then the gather's send or receive.
  const fs::path params = test_dir() / "reduce_params.json";
  std::ofstream(params) << R"({"L": 2e-6, "o": 1e-6, "Os": 0, "Or": 0, "g": 5e-7, "Gs": 1e-9, "Gl": 1e-9, "s": null, "S": 1000})";
  for (const auto& [algo, sendrecvs] : {std::pair{"pt2pt", 0L}, {"reduce_scatter_gather", 1L}}) {
    INFO("MSTEP_REDUCE=" << algo);
    const fs::path dir = test_dir() / (std::string("count_") + algo);
    const Result r = record(dir, 4, {prog("collectives")}, {{"LD_PRELOAD", kCountShim}, {"MSTEP_REDUCE", algo}});
    check_recorded(r, 4);
    CHECK(counts_of(r.err) == std::map<int, Counts>{{0, {2, 0, sendrecvs}}, {1, {2, 1, sendrecvs}},
                                                     {2, {1, 1, sendrecvs}}, {3, {0, 3, sendrecvs}}});
    CHECK(meta_of(dir).at("collectives").at("reduce") == algo);
    const std::vector<std::string> algos = report_algorithms(dir, params);
    const auto has = [&](const std::string& line) { return std::find(algos.begin(), algos.end(), line) != algos.end(); };
    CHECK(has("MPI_Reduce: binomial tree (libmstep's substitute for 4 ranks, 16 bytes; 1 call)"));
    CHECK(has(std::string("MPI_Reduce: ") +
              (sendrecvs ? "reduce-scatter + gather (Rabenseifner)" : "binomial tree") +
              " (libmstep's substitute for 2 ranks, 16 bytes; 2 calls)"));
  }
  {
    INFO("a malformed setting: one line on rank 0's stderr, MPICH's own collectives run");
    const fs::path dir = test_dir() / "reduce_bad";
    const Result r = record(dir, 2, {prog("collectives")}, {{"LD_PRELOAD", kCountShim}, {"MSTEP_REDUCE", "rabenseifner"}});
    check_recorded(r, 2);
    CHECK(lines_equal(r.err, "mstep: MSTEP_REDUCE='rabenseifner' is not mpi, binomial, reduce_scatter_gather or pt2pt; "
                             "MPICH's own collectives run") == 1);
    for (const auto& [rank, k] : counts_of(r.err)) CHECK(k == Counts{});
  }
}

TEST_CASE("substitute reduce: the delay apparatus delays each of its messages", "[report]") {
  // MSTEP_DELAY_L=50us at 2 ranks, 50 rounds of MPI_Reduce to rank 0 and MPI_Bcast back (both
  // libmstep's): rank 1's contribution leaves after it received the broadcast before, which arrived
  // no earlier than its send plus L, and reaches rank 0 no earlier than its own send plus L; so rank
  // 0 waits about 2 L in each reduce but the first. Asked: at least L a call (5% left for the clock
  // offset). MPICH's own are not delayed.
  const DelayedRuns t = delayed_and_mpich("reduce", "allreduce_check", "MPI_Reduce", {0},
                                          {{"MSTEP_REDUCE", "pt2pt"}, {"MSTEP_BCAST", "binomial"}});
  CHECK(t.delayed >= 0.95 * 50e-6 * 50);
  CHECK(t.mpich < 0.5 * t.delayed);  // a fraction of the delayed run's (a noisy VM: not an absolute bound)
}

// Runs alone ([report]): its pt2pt runs do without the yield shim (below), so their ranks spin.
TEST_CASE("substitute reduce_scatter: MPICH's results to the byte, its algorithms' messages, charged as they ran",
          "[report]") {
  // reduce_scatter_check compares every case with MPICH's own, byte for byte: MPICH's choice at 3
  // ranks (one folded in) and 4, its doubles not integral (the same partial sums in the same order
  // give the same bits). Without the yield shim, which runs MPICH's blocking reduce-scatters as
  // its nonblocking ones, whose schedules sum in other orders. Then each algorithm forced once
  // (recursive halving at 3, pairwise at 4; integral doubles), under the shim.
  for (int ranks : {3, 4}) {
    INFO("MSTEP_REDUCE_SCATTER=pt2pt at " << ranks << " ranks");
    const Result r = record(test_dir() / fmt_name("pt2pt", ranks), ranks, {prog("reduce_scatter_check")},
                            {{"MSTEP_REDUCE_SCATTER", "pt2pt"}});
    check_recorded(r, ranks);
    CHECK(r.out.find("reduce_scatter_check: " + std::to_string(ranks) + " ranks, 288 cases: ok") != std::string::npos);
  }
  check_against_mpich("reduce_scatter_check", "MSTEP_REDUCE_SCATTER", "recursive_halving", 3, 288);
  check_against_mpich("reduce_scatter_check", "MSTEP_REDUCE_SCATTER", "pairwise", 4, 288);
  // collectives.c at 4 ranks: MPI_Reduce_scatter (blocks of r + 1 ints) and
  // MPI_Reduce_scatter_block (2 ints) on WORLD and on each half (2 ranks). Recursive halving: 2
  // Sendrecv rounds on 4 ranks, 1 on 2 (no block empty, nothing folded); pairwise: 3 and 1. So 6
  // and 8 Sendrecvs on every rank, nothing else (the copies of MPI_INT vectors are memcpys).
  const fs::path params = test_dir() / "reduce_scatter_params.json";
  std::ofstream(params) << R"({"L": 2e-6, "o": 1e-6, "Os": 0, "Or": 0, "g": 5e-7, "Gs": 1e-9, "Gl": 1e-9, "s": null, "S": 1000})";
  for (const auto& [algo, sendrecvs, name] :
       {std::tuple{"pt2pt", 6L, "recursive halving"}, {"pairwise", 8L, "pairwise exchange"}}) {
    INFO("MSTEP_REDUCE_SCATTER=" << algo);
    const fs::path dir = test_dir() / (std::string("count_rs_") + algo);
    const Result r = record(dir, 4, {prog("collectives")}, {{"LD_PRELOAD", kCountShim}, {"MSTEP_REDUCE_SCATTER", algo}});
    check_recorded(r, 4);
    const Counts each{0, 0, sendrecvs};
    CHECK(counts_of(r.err) == std::map<int, Counts>{{0, each}, {1, each}, {2, each}, {3, each}});
    CHECK(meta_of(dir).at("collectives").at("reduce_scatter") == algo);
    const std::vector<std::string> algos = report_algorithms(dir, params);
    const auto has = [&](const std::string& line) { return std::find(algos.begin(), algos.end(), line) != algos.end(); };
    CHECK(has(std::string("MPI_Reduce_scatter: ") + name + " (libmstep's substitute for 4 ranks, 4 bytes; 1 call)"));
    CHECK(has(std::string("MPI_Reduce_scatter_block: ") + name + " (libmstep's substitute for 2 ranks, 8 bytes; 2 calls)"));
  }
  {
    INFO("a malformed setting: one line on rank 0's stderr, MPICH's own collectives run");
    const fs::path dir = test_dir() / "reduce_scatter_bad";
    const Result r =
        record(dir, 2, {prog("collectives")}, {{"LD_PRELOAD", kCountShim}, {"MSTEP_REDUCE_SCATTER", "halving"}});
    check_recorded(r, 2);
    CHECK(lines_equal(r.err, "mstep: MSTEP_REDUCE_SCATTER='halving' is not mpi, recursive_halving, pairwise or pt2pt; "
                             "MPICH's own collectives run") == 1);
    for (const auto& [rank, k] : counts_of(r.err)) CHECK(k == Counts{});
  }
}

TEST_CASE("substitute reduce_scatter: the delay apparatus delays each of its messages", "[report]") {
  // MSTEP_DELAY_L=50us at 2 ranks: each MPI_Reduce_scatter_block is one exchange, whose message
  // cannot complete before its send plus L; the two ranks' times a call add up to at least L
  // (whichever came first waits for the other's message). MPICH's own are not delayed.
  const DelayedRuns t = delayed_and_mpich("reduce_scatter", "reduce_scatter_check", "MPI_Reduce_scatter_block", {0, 1},
                                          {{"MSTEP_REDUCE_SCATTER", "pt2pt"}});
  CHECK(t.delayed >= 0.95 * 50e-6 * 50);
  CHECK(t.mpich < 0.5 * t.delayed);  // a fraction of the delayed run's (a noisy VM: not an absolute bound)
}
