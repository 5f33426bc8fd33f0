// Integration test: libmstep's MPI_Gather(v), MPI_Scatter(v) and MPI_Allgather over point-to-point
// messages (MSTEP_GATHER, MSTEP_SCATTER = pt2pt, interpose/substitute_rooted.hpp; MSTEP_ALLGATHER,
// interpose/substitute_allgather.hpp): MPICH's results byte for byte (rooted_check,
// allgather_check), exactly MPICH's algorithms' messages (pmpi_count_shim below libmstep on
// collectives.c), charged by the report as they ran, and delayed by the apparatus.
#include "harness.hpp"
#include "substitute_support.hpp"

using namespace mstep_it;

namespace {

// collectives.c at 4 ranks under `setting`=`algo`, the count shim below libmstep: the PMPI_Send,
// PMPI_Recv and PMPI_Sendrecv calls of each world rank (MPICH's Isend and Irecv are not counted;
// a local copy is a Sendrecv on MPI_COMM_SELF).
fs::path counted(const char* setting, const std::map<int, Counts>& want, const char* algo = "pt2pt") {
  INFO(setting << "=" << algo);
  const fs::path dir = test_dir() / (std::string("count_") + setting + "_" + algo);
  const Result r = record(dir, 4, {prog("collectives")}, {{"LD_PRELOAD", kCountShim}, {setting, algo}});
  check_recorded(r, 4);
  CHECK(counts_of(r.err) == want);
  return dir;
}

}  // namespace

TEST_CASE("substitute gather and scatter: MPICH's results to the byte, its algorithms' messages, charged as they ran") {
  // rooted_check compares every case from every root with MPICH's own, byte for byte: 3 ranks,
  // and 6, where a binomial tree has a forwarding rank that is not the root and, from root 3, a
  // subtree that wraps round the end of the root's buffer.
  for (const char* setting : {"MSTEP_GATHER", "MSTEP_SCATTER"}) {
    check_against_mpich("rooted_check", setting, "pt2pt", 3, 340);
    check_against_mpich("rooted_check", setting, "pt2pt", 6, 612);
  }
  // collectives.c at 4 ranks: a round on WORLD (root 0), then on each half of a parity split (2
  // ranks; roots world 0 and 1). Gather on WORLD's binomial tree: 0 copies its own block and
  // receives from 1 and from 2, which received from 3 before sending; Gatherv: each sends to 0,
  // which copies its own. On a half: the root copies and receives, the other sends. So world rank
  // 0: 3 receives, 4 copies; 1: 2 sends, a receive and 2 copies as its half's root; 2: a receive
  // and 4 sends; 3: 4 sends.
  const fs::path params = test_dir() / "rooted_params.json";
  std::ofstream(params) << R"({"L": 2e-6, "o": 1e-6, "Os": 0, "Or": 0, "g": 5e-7, "Gs": 1e-9, "Gl": 1e-9, "s": null, "S": 1000})";
  const fs::path gather = counted("MSTEP_GATHER", {{0, {0, 3, 4}}, {1, {2, 1, 2}}, {2, {4, 1, 0}}, {3, {4, 0, 0}}});
  // Scatter the reverse: 0 sends to 2 (2 blocks) then to 1; Scatterv's sends are Isends.
  const fs::path scatter = counted("MSTEP_SCATTER", {{0, {3, 0, 4}}, {1, {1, 2, 2}}, {2, {1, 4, 0}}, {3, {0, 4, 0}}});
  CHECK(meta_of(gather).at("collectives") == json{{"barrier", "mpi"}, {"bcast", "mpi"}, {"allreduce", "mpi"},
                                                  {"alltoall", "mpi"}, {"allgather", "mpi"}, {"reduce", "mpi"}, {"gather", "pt2pt"}, {"scatter", "mpi"}, {"reduce_scatter", "mpi"}, {"scan", "mpi"}});
  CHECK(meta_of(scatter).at("collectives").at("scatter") == "pt2pt");
  // The report charges what ran, without MPICH's calibrated cost beyond the messages.
  for (const auto& [dir, ran, mpich] : {std::tuple{gather, "Gather", "Scatter"}, {scatter, "Scatter", "Gather"}}) {
    const std::vector<std::string> algos = report_algorithms(dir, params);
    const auto has = [&](const std::string& line) { return std::find(algos.begin(), algos.end(), line) != algos.end(); };
    const std::string op = std::string("MPI_") + ran, other = std::string("MPI_") + mpich;
    const std::string bytes = op == "MPI_Gather" ? "8 bytes" : "12 bytes";
    CHECK(has(op + ": binomial tree (libmstep's substitute for 4 ranks, " + bytes + "; 1 call)"));
    CHECK(has(op + "v: linear (libmstep's substitute for 4 ranks, 12 bytes; 1 call)"));
    CHECK(has(op + "v: linear (libmstep's substitute for 2 ranks, 8 bytes; 2 calls)"));
    CHECK(has(other + "v: linear (MPICH default for 4 ranks, 12 bytes; 1 call)"));
  }
  {
    INFO("a malformed setting: one line on rank 0's stderr, MPICH's own collectives run");
    const fs::path dir = test_dir() / "gather_bad";
    const Result r = record(dir, 2, {prog("collectives")}, {{"LD_PRELOAD", kCountShim}, {"MSTEP_GATHER", "binomial"}});
    check_recorded(r, 2);
    CHECK(lines_equal(r.err, "mstep: MSTEP_GATHER='binomial' is not mpi or pt2pt; MPICH's own collectives run") == 1);
    for (const auto& [rank, k] : counts_of(r.err)) CHECK(k == Counts{});
  }
}

TEST_CASE("substitute gather and scatter: the delay apparatus delays each of their messages", "[report]") {
  // MSTEP_DELAY_L=50us at 2 ranks, 50 rounds of MPI_Gather then MPI_Scatter from rank 0: rank 1's
  // gathered block leaves after it received the scatter before, which arrived no earlier than its
  // send plus L, and reaches rank 0 no earlier than its own send plus L; so rank 0 waits about 2 L
  // in each gather but the first. Asked: at least L a call (5% left for the clock offset). MPICH's
  // own are not delayed.
  const DelayedRuns t = delayed_and_mpich("rooted", "rooted_check", "MPI_Gather", {0},
                                          {{"MSTEP_GATHER", "pt2pt"}, {"MSTEP_SCATTER", "pt2pt"}});
  CHECK(t.delayed >= 0.95 * 50e-6 * 50);
  CHECK(t.mpich < 0.5 * t.delayed);  // a fraction of the delayed run's (a noisy VM: not an absolute bound)
}

TEST_CASE("substitute allgather: MPICH's results to the byte, its algorithms' messages, charged as they ran", "[report]") {
  // allgather_check compares every case with MPICH's own, byte for byte: 3 ranks (Bruck, then the
  // ring from 80 KiB in all) and 4 (recursive doubling, then the ring from 512 KiB), each setting
  // (recursive doubling on 3 ranks runs Bruck); MPI_Allgather's 60 cases and MPI_Allgatherv's 80
  // (blocks of differing sizes, some empty, in reverse order with gaps; the ring's 32 KiB chunks).
  for (const char* algo : {"pt2pt", "recursive_doubling", "bruck", "ring"})
    for (int ranks : {3, 4}) check_against_mpich("allgather_check", "MSTEP_ALLGATHER", algo, ranks, 140);
  // collectives.c at 4 ranks: MPI_Allgather of one int and MPI_Allgatherv of r + 1 ints on WORLD
  // and on each half (2 ranks). For MPI_Allgather every rank copies its own block in (a Sendrecv
  // to itself), then recursive doubling and Bruck make 2 Sendrecv rounds on 4 ranks and 1 on 2,
  // the ring 3 and 1: 5, 5 and 6 on every rank. MPI_Allgatherv's recursive doubling and Bruck pack
  // the own block (no message), then 2 and 1 rounds; its ring copies it in, then 3 and 1 rounds
  // (no block is empty): 3, 3 and 6 more, 8, 8 and 12 in all.
  const fs::path params = test_dir() / "allgather_params.json";
  std::ofstream(params) << R"({"L": 2e-6, "o": 1e-6, "Os": 0, "Or": 0, "g": 5e-7, "Gs": 1e-9, "Gl": 1e-9, "s": null, "S": 1000})";
  for (const auto& [algo, sendrecvs, name] : {std::tuple{"pt2pt", 8L, "recursive doubling"}, {"bruck", 8L, "Bruck"},
                                              {"ring", 12L, "ring"}}) {
    const Counts each{0, 0, sendrecvs};
    const fs::path dir = counted("MSTEP_ALLGATHER", {{0, each}, {1, each}, {2, each}, {3, each}}, algo);
    CHECK(meta_of(dir).at("collectives").at("allgather") == algo);
    const std::vector<std::string> algos = report_algorithms(dir, params);
    const auto has = [&](const std::string& line) { return std::find(algos.begin(), algos.end(), line) != algos.end(); };
    CHECK(has(std::string("MPI_Allgather: ") + name + " (libmstep's substitute for 4 ranks, 4 bytes; 1 call)"));
    CHECK(has(std::string("MPI_Allgather: ") + name + " (libmstep's substitute for 2 ranks, 4 bytes; 2 calls)"));
    CHECK(has(std::string("MPI_Allgatherv: ") + name + " (libmstep's substitute for 4 ranks, 12 bytes; 1 call)"));
  }
  {
    INFO("a malformed setting: one line on rank 0's stderr, MPICH's own collectives run");
    const fs::path dir = test_dir() / "allgather_bad";
    const Result r = record(dir, 2, {prog("collectives")}, {{"LD_PRELOAD", kCountShim}, {"MSTEP_ALLGATHER", "rd"}});
    check_recorded(r, 2);
    CHECK(lines_equal(r.err, "mstep: MSTEP_ALLGATHER='rd' is not mpi, recursive_doubling, bruck, ring or pt2pt; "
                             "MPICH's own collectives run") == 1);
    for (const auto& [rank, k] : counts_of(r.err)) CHECK(k == Counts{});
  }
  {
    INFO("the delay apparatus: at 2 ranks each call is an exchange, so the two ranks' times add up to at least L");
    const DelayedRuns t = delayed_and_mpich("allgather", "allgather_check", "MPI_Allgather", {0, 1},
                                            {{"MSTEP_ALLGATHER", "pt2pt"}});
    CHECK(t.delayed >= 0.95 * 50e-6 * 50);
    CHECK(t.mpich < 0.5 * t.delayed);  // a fraction of the delayed run's (a noisy VM: not an absolute bound)
  }
}
