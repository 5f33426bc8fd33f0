// Integration test: libmstep's substitute collectives (MSTEP_BARRIER, MSTEP_BCAST, MSTEP_ALLREDUCE;
// interpose/substitute.hpp) on collectives.c at 4 ranks (a round on MPI_COMM_WORLD with a
// Bcast of 10 ints from root 0 and a Barrier, the same round on each half of a parity split, and
// a Comm_dup/Comm_free). The program checks its own results; pmpi_count_shim counts the
// point-to-point PMPI calls below libmstep, which are exactly the substitutes' messages (the
// program makes no point-to-point call, and MPICH's own collectives make no PMPI call).
#include "harness.hpp"
#include "substitute_support.hpp"

using namespace mstep_it;

namespace {

// collectives.c at 4 ranks under `setting`=`algo`, the count shim below libmstep: every rank made
// `sendrecvs` PMPI_Sendrecv calls. Returns the trace; for "mpi", checks that meta.json names no
// substitute and returns an empty path.
fs::path counted_collectives(const char* setting, const char* algo, long sendrecvs) {
  INFO(setting << "=" << algo);
  const fs::path dir = test_dir() / (std::string("count_") + algo);
  const Result r = record(dir, 4, {prog("collectives")}, {{"LD_PRELOAD", kCountShim}, {setting, algo}});
  check_recorded(r, 4);
  const auto c = counts_of(r.err);
  REQUIRE(c.size() == 4);
  for (const auto& [rank, k] : c) CHECK(k == (Counts{0, 0, sendrecvs}));
  if (std::string(algo) != "mpi") return dir;
  CHECK_FALSE(meta_of(dir).contains("collectives"));
  return {};
}

Result run_with(const fs::path& dir, const std::string& barrier, const std::string& bcast) {
  return record(dir, 4, {prog("collectives")},
                {{"LD_PRELOAD", kCountShim}, {"MSTEP_BARRIER", barrier}, {"MSTEP_BCAST", bcast}});
}

}  // namespace

TEST_CASE("substitute collectives: the same results, exactly the algorithm's messages, recorded in meta.json") {
  {
    INFO("MPICH's own (the default): no point-to-point call below libmstep, no \"collectives\" in meta.json");
    const fs::path dir = test_dir() / "mpi";
    const Result r = run_with(dir, "mpi", "mpi");
    check_recorded(r, 4);
    const auto c = counts_of(r.err);
    REQUIRE(c.size() == 4);
    for (const auto& [rank, k] : c) CHECK(k == Counts{});
    CHECK_FALSE(meta_of(dir).contains("collectives"));
  }
  {
    // Bcast, flat: the root sends to each other member (3 on WORLD, 1 on a half). Barrier,
    // central: rank 0 receives from each other member, then releases each (3 + 3 on WORLD, 1 + 1
    // on a half); the others send once and receive once. Ranks 0 and 1 are the roots (comm rank
    // 0) of the two halves.
    INFO("MSTEP_BARRIER=central, MSTEP_BCAST=flat");
    const fs::path dir = test_dir() / "central";
    const Result r = run_with(dir, "central", "flat");
    check_recorded(r, 4);
    const std::map<int, Counts> want{{0, {8, 4, 0}}, {1, {3, 3, 0}}, {2, {2, 4, 0}}, {3, {2, 4, 0}}};
    CHECK(counts_of(r.err) == want);
    const json m = meta_of(dir);
    CHECK(m.at("collectives") == json{{"barrier", "central"}, {"bcast", "flat"}, {"allreduce", "mpi"}, {"alltoall", "mpi"}, {"allgather", "mpi"}, {"reduce", "mpi"}, {"gather", "mpi"}, {"scatter", "mpi"}, {"reduce_scatter", "mpi"}, {"scan", "mpi"}});
    // The report charges what ran: the substitutes, not MPICH's choice.
    const fs::path params = dir.parent_path() / "params.json";
    std::ofstream(params) << R"({"L": 2e-6, "o": 1e-6, "Os": 0, "Or": 0, "g": 5e-7, "Gs": 1e-9, "Gl": 1e-9,
      "s": null, "S": 1000})";
    const std::vector<std::string> algos = report_algorithms(dir, params);
    const auto has = [&](const std::string& line) { return std::find(algos.begin(), algos.end(), line) != algos.end(); };
    CHECK(has("MPI_Barrier: central counter (libmstep's substitute for 4 ranks; 1 call)"));
    CHECK(has("MPI_Barrier: central counter (libmstep's substitute for 2 ranks; 2 calls)"));
    CHECK(has("MPI_Bcast: flat tree (libmstep's substitute for 4 ranks, 40 bytes; 1 call)"));
    // Everything else is still MPICH's.
    for (const auto& line : algos)
      if (line.rfind("MPI_Barrier", 0) != 0 && line.rfind("MPI_Bcast", 0) != 0)
        CHECK(line.find("(MPICH default for") != std::string::npos);
  }
  {
    // Bcast, MPICH's binomial tree of 4 from 0: 0 sends to 2 and 1, 2 sends to 3. Barrier,
    // dissemination: 2 Sendrecv rounds on WORLD, 1 on a half, on every rank.
    INFO("MSTEP_BARRIER=dissemination, MSTEP_BCAST=binomial");
    const fs::path dir = test_dir() / "dissemination";
    const Result r = run_with(dir, "dissemination", "binomial");
    check_recorded(r, 4);
    const std::map<int, Counts> want{{0, {3, 0, 3}}, {1, {1, 1, 3}}, {2, {1, 2, 3}}, {3, {0, 2, 3}}};
    CHECK(counts_of(r.err) == want);
    CHECK(meta_of(dir).at("collectives") == json{{"barrier", "dissemination"}, {"bcast", "binomial"}, {"allreduce", "mpi"}, {"alltoall", "mpi"}, {"allgather", "mpi"}, {"reduce", "mpi"}, {"gather", "mpi"}, {"scatter", "mpi"}, {"reduce_scatter", "mpi"}, {"scan", "mpi"}});
  }
  {
    // Barrier, combining tree of arity 2: children of 0 are 1 and 2, of 1 is 3; gather up, then
    // release down the binomial tree (0 to 2 and 1, 2 to 3). Bcast flat as above.
    INFO("MSTEP_BARRIER=tree:2, MSTEP_BCAST=flat");
    const fs::path dir = test_dir() / "tree";
    const Result r = run_with(dir, "tree:2", "flat");
    check_recorded(r, 4);
    const std::map<int, Counts> want{{0, {7, 3, 0}}, {1, {3, 4, 0}}, {2, {3, 4, 0}}, {3, {2, 4, 0}}};
    CHECK(counts_of(r.err) == want);
    CHECK(meta_of(dir).at("collectives") == json{{"barrier", "tree:2"}, {"bcast", "flat"}, {"allreduce", "mpi"}, {"alltoall", "mpi"}, {"allgather", "mpi"}, {"reduce", "mpi"}, {"gather", "mpi"}, {"scatter", "mpi"}, {"reduce_scatter", "mpi"}, {"scan", "mpi"}});
  }
  {
    // L = 1 us, o = g = 0, and MPICH's barrier calibrated at 2 us (1 us a round beyond its
    // messages): on 4 ranks the central counter (2 L) ties dissemination's two rounds and wins the
    // tie, 2 us against MPICH's 4; on the halves (2 ranks) one dissemination round (L), 1 us
    // against MPICH's 2: libmstep's dissemination.
    INFO("MSTEP_BARRIER=auto: the adaptive choice per communicator size, recomputed by the report");
    const fs::path dir = test_dir() / "auto";
    const fs::path params = dir.parent_path() / "auto.json";
    std::ofstream(params) << R"({"L": 1e-6, "o": 0, "g": 0, "Os": 0, "Or": 0, "Gs": 0, "Gl": 0, "s": null, "S": null,
      "collectives": {"MPI_Barrier": {"bytes": [0], "measured_s": [2e-6], "model_s": [1e-6]}}})";
    const Result r = record(dir, 4, {prog("collectives")},
                            {{"LD_PRELOAD", kCountShim}, {"MSTEP_BARRIER", "auto"}, {"MSTEP_PARAMS", params.string()}});
    check_recorded(r, 4);
    const std::map<int, Counts> want{{0, {3, 3, 1}}, {1, {1, 1, 1}}, {2, {1, 1, 1}}, {3, {1, 1, 1}}};
    CHECK(counts_of(r.err) == want);
    const json c = meta_of(dir).at("collectives");
    CHECK(c.at("barrier") == "auto");
    CHECK(c.at("logp").at("L") == 1e-6);
    CHECK(c.at("logp").at("native_mpich") == true);
    CHECK(c.at("mpich").at("MPI_Barrier").at("measured_s") == json::array({2e-6}));
    const std::vector<std::string> algos = report_algorithms(dir, params);
    const auto has = [&](const std::string& line) { return std::find(algos.begin(), algos.end(), line) != algos.end(); };
    CHECK(has("MPI_Barrier: central counter (libmstep's substitute for 4 ranks; 1 call)"));
    CHECK(has("MPI_Barrier: dissemination (libmstep's substitute for 2 ranks; 2 calls)"));

    // The same parameters without MPICH's calibrated barrier: no gain on 2 ranks (dissemination is
    // MPICH's own algorithm) nor on 4 (the tie): MPICH's barrier everywhere, no message of libmstep's.
    const fs::path bare = dir.parent_path() / "auto_bare.json";
    std::ofstream(bare) << R"({"L": 1e-6, "o": 0, "g": 0, "Os": 0, "Or": 0, "Gs": 0, "Gl": 0, "s": null, "S": null})";
    const fs::path dir2 = test_dir() / "auto_bare";
    const Result r2 = record(dir2, 4, {prog("collectives")},
                             {{"LD_PRELOAD", kCountShim}, {"MSTEP_BARRIER", "auto"}, {"MSTEP_PARAMS", bare.string()}});
    check_recorded(r2, 4);
    const std::map<int, Counts> none_sent{{0, {0, 0, 0}}, {1, {0, 0, 0}}, {2, {0, 0, 0}}, {3, {0, 0, 0}}};
    CHECK(counts_of(r2.err) == none_sent);
    const std::vector<std::string> algos2 = report_algorithms(dir2, bare);
    CHECK(std::find(algos2.begin(), algos2.end(), "MPI_Barrier: dissemination (MPICH default for 4 ranks; 1 call)") != algos2.end());

    const Result none = record(test_dir() / "auto_none", 2, {prog("collectives")},
                               {{"MSTEP_BARRIER", "auto"}, {"MSTEP_PARAMS", (dir / "missing.json").string()}});
    check_recorded(none, 2);
    CHECK(none.err.find("mstep: MSTEP_BARRIER=auto needs calibrated parameters: cannot read") != std::string::npos);
  }
  {
    // L = 1 us and nothing else, so D = 0 and w = 1 us; the delay apparatus adds 200 us between 0
    // and 2 and between 2 and 3, both ways. E-SSSP from 0 on WORLD: 1 and 3 at 1 us, 2 at 201 us;
    // then 1 relaxes 2 to 2 us and takes it; 3 (at 1 us) would give 202 us. The tree: 0 -> {1, 3},
    // 1 -> {2}. (MPICH's binomial tree would send 0 -> 2 -> 3 across both slow links.) The
    // halves {0, 2} and {1, 3}: the root sends to the other.
    INFO("MSTEP_BCAST=esssp on a network with slow links: the E-SSSP tree's messages");
    const fs::path dir = test_dir() / "esssp";
    const fs::path params = dir.parent_path() / "esssp.json";
    std::ofstream(params) << R"({"L": 1e-6, "o": 0, "Os": 0, "Or": 0, "g": 0, "Gs": 0, "Gl": 0, "s": null, "S": null})";
    const fs::path grid = dir.parent_path() / "grid.json";
    std::ofstream(grid) << R"({"matrix": [[0, 0, "200us", 0], [0, 0, 0, 0], ["200us", 0, 0, "200us"], [0, 0, "200us", 0]]})";
    const Result r = record(dir, 4, {prog("collectives")},
                            {{"LD_PRELOAD", kCountShim}, {"MSTEP_BCAST", "esssp"}, {"MSTEP_PARAMS", params.string()},
                             {"MSTEP_DELAY_PAIRS", grid.string()}});
    check_recorded(r, 4);
    const std::map<int, Counts> want{{0, {3, 0, 0}}, {1, {2, 1, 0}}, {2, {0, 2, 0}}, {3, {0, 2, 0}}};
    CHECK(counts_of(r.err) == want);
    const json c = meta_of(dir).at("collectives");
    CHECK(c.at("bcast") == "esssp");
    CHECK(c.at("loggps").at("S").is_null());

    const Result none = record(test_dir() / "esssp_none", 2, {prog("collectives")},
                               {{"MSTEP_BCAST", "esssp"}, {"MSTEP_PARAMS", (dir / "missing.json").string()}});
    check_recorded(none, 2);
    CHECK(none.err.find("mstep: MSTEP_BCAST=esssp needs calibrated parameters: cannot read") != std::string::npos);
  }
  {
    // MSTEP_BCAST=auto on the grid above (L = 1 us, D = 0): on WORLD from 0, E-SSSP 2 us against
    // MPICH's binomial tree 401 us (0 -> 2 -> 3) and the flat tree 201 us: the E-SSSP tree, the
    // same messages as esssp. On the halves (2 ranks: one message whatever the schedule) no gain,
    // so MPICH's broadcast would run, but the apparatus is on: libmstep's binomial tree, the same
    // one message.
    INFO("MSTEP_BCAST=auto on a network with slow links: the E-SSSP tree");
    const fs::path dir = test_dir() / "bcast_auto";
    const fs::path params = dir.parent_path() / "esssp.json", grid = dir.parent_path() / "grid.json";
    std::ofstream(params) << R"({"L": 1e-6, "o": 0, "Os": 0, "Or": 0, "g": 0, "Gs": 0, "Gl": 0, "s": null, "S": null})";
    std::ofstream(grid) << R"({"matrix": [[0, 0, "200us", 0], [0, 0, 0, 0], ["200us", 0, 0, "200us"], [0, 0, "200us", 0]]})";
    const Result r = record(dir, 4, {prog("collectives")},
                            {{"LD_PRELOAD", kCountShim}, {"MSTEP_BCAST", "auto"}, {"MSTEP_PARAMS", params.string()},
                             {"MSTEP_DELAY_PAIRS", grid.string()}});
    check_recorded(r, 4);
    const std::map<int, Counts> want{{0, {3, 0, 0}}, {1, {2, 1, 0}}, {2, {0, 2, 0}}, {3, {0, 2, 0}}};
    CHECK(counts_of(r.err) == want);
    const json c = meta_of(dir).at("collectives");
    CHECK(c.at("bcast") == "auto");
    CHECK(c.at("loggps").at("L") == 1e-6);
    CHECK(c.at("bcast_tie") == "binomial");  // the copy of the binomial tree where E-SSSP ties it
    // The replay plans these broadcasts again from meta.json (collectives.loggps, delay.pairs) as
    // libmstep did, and charges the trees that ran: the E-SSSP tree on WORLD, libmstep's binomial
    // tree on the halves; none keeps its recorded duration.
    const json rep = mstep_json("report", dir, {"--params", params.string()}, no_default_params(dir.parent_path()));
    INFO(rep.at("notes").dump() << rep.at("collective_algorithms").dump());
    const auto& algos = rep.at("collective_algorithms");
    CHECK(std::count(algos.begin(), algos.end(),
                     "MPI_Bcast: planned tree (E-SSSP or auto) (libmstep's substitute for 4 ranks, 40 bytes; 1 call)") == 1);
    CHECK(std::count(algos.begin(), algos.end(),
                     "MPI_Bcast: binomial tree (libmstep's substitute for 2 ranks, 40 bytes; 2 calls)") == 1);
    for (const auto& note : rep.at("notes")) CHECK(note.get<std::string>().find("MSTEP_BCAST") == std::string::npos);

    // o = 1 us, L = 0, g = 0: D = 1 us and w = 1 us on every pair; at 4 ranks flat 4 us, binomial
    // 4 us, at 2 ranks one message: no gain anywhere, and without the apparatus MPICH's own
    // broadcasts run, so libmstep sends nothing.
    const fs::path uniform = dir.parent_path() / "bcast_auto_uniform.json";
    std::ofstream(uniform) << R"({"L": 0, "o": 1e-6, "Os": 0, "Or": 0, "g": 0, "Gs": 0, "Gl": 0, "s": null, "S": null})";
    const Result u = record(test_dir() / "bcast_auto_mpich", 4, {prog("collectives")},
                            {{"LD_PRELOAD", kCountShim}, {"MSTEP_BCAST", "auto"}, {"MSTEP_PARAMS", uniform.string()}});
    check_recorded(u, 4);
    const auto none = counts_of(u.err);
    REQUIRE(none.size() == 4);
    for (const auto& [rank, k] : none) CHECK(k == Counts{});
  }
  {
    INFO("a malformed setting: one line on rank 0's stderr, MPICH's own collectives run");
    const fs::path dir = test_dir() / "bad";
    const Result r = run_with(dir, "tree:1", "flat");
    check_recorded(r, 4);
    CHECK(lines_equal(r.err, "mstep: MSTEP_BARRIER='tree:1' is not mpi, central, tree:N (2 <= N <= 255), "
                             "dissemination or auto; MPICH's own collectives run") == 1);
    for (const auto& [rank, k] : counts_of(r.err)) CHECK(k == Counts{});
    CHECK_FALSE(meta_of(dir).contains("collectives"));
  }
}

TEST_CASE("substitute collectives: a broadcast from every root at 3 ranks arrives whole") {
  // The shipped example rotates the root and checks every byte; 3 ranks is not a power of two.
  for (const char* bcast : {"flat", "binomial"}) {
    INFO(bcast);
    const fs::path dir = test_dir() / bcast;
    const Result r = record(dir, 3, {std::string(EXAMPLES_DIR) + "/collectives", "30", "1000", "1"},
                            {{"LD_PRELOAD", kShim}, {"MSTEP_BARRIER", "tree:4"}, {"MSTEP_BCAST", bcast}});
    check_recorded(r, 3);
    CHECK(r.out.find("collectives: 3 ranks, 30 iterations of 1000 bytes: ok") != std::string::npos);
  }
}

TEST_CASE("substitute collectives: the delay apparatus delays each of their messages") {
  // MSTEP_DELAY_L=50us: no message completes before its send plus 50 us. Rank 1's central barrier
  // is a message to rank 0 and rank 0's release after it, so every call takes at least 2 L,
  // however late either rank arrives (the apparatus's own lower bound; 5% is left for the clock
  // offset between the ranks). Its broadcast has no such bound (rank 0 may have sent long before
  // rank 1 arrives); it runs delayed too, through the same sends and receives.
  const fs::path dir = test_dir() / "delayed";
  const Result r = record(dir, 2, {std::string(EXAMPLES_DIR) + "/collectives", "100", "8"},
                          {{"MSTEP_DELAY_L", "50us"}, {"MSTEP_BARRIER", "central"}, {"MSTEP_BCAST", "flat"}});
  check_recorded(r, 2);
  const Stats s = stats(dir);
  const json& rank1 = s.j.at("per_rank").at(1);
  const auto per_call = [&](const char* f) {
    return rank1.at("time_s").at(f).get<double>() / rank1.at("calls").at(f).get<double>();
  };
  CHECK(per_call("MPI_Barrier") >= 0.95 * 100e-6);
  const json meta = meta_of(dir);
  CHECK(meta.at("delay").at("L") == 5e-5);
  CHECK(meta.at("collectives").at("barrier") == "central");
}

TEST_CASE("substitute allreduce: MPICH's results to the byte, its algorithms' messages, charged as they ran") {
  // allreduce_check compares every case with MPICH's own PMPI_Allreduce, byte for byte: 3 ranks
  // (one folded in) and 4 (two halving rounds), each algorithm.
  for (const char* algo : {"pt2pt", "recursive_doubling", "reduce_scatter_allgather"})
    for (int ranks : {3, 4}) check_against_mpich("allreduce_check", "MSTEP_ALLREDUCE", algo, ranks, 168);
  // collectives.c at 4 ranks makes 5 MPI_Allreduce calls: 24 and 8 bytes on WORLD and on each half
  // (2 ranks), 4 bytes on a duplicate of WORLD. Recursive doubling: 2 Sendrecv rounds on 4 ranks,
  // 1 on 2: 2 + 2 + 1 + 1 + 2 = 8 on every rank. pt2pt: MPICH's choice, which is Rabenseifner's
  // two rounds for the 24 bytes on 2 ranks (more than 8 bytes, 3 8-byte elements against 2^1) and
  // recursive doubling elsewhere: 9.
  const fs::path params = test_dir() / "allreduce_params.json";
  std::ofstream(params) << R"({"L": 2e-6, "o": 1e-6, "Os": 0, "Or": 0, "g": 5e-7, "Gs": 1e-9, "Gl": 1e-9, "s": null, "S": 1000})";
  for (const auto& [algo, sendrecvs] : {std::pair{"recursive_doubling", 8L}, {"pt2pt", 9L}, {"mpi", 0L}}) {
    INFO("MSTEP_ALLREDUCE=" << algo);
    const fs::path dir = counted_collectives("MSTEP_ALLREDUCE", algo, sendrecvs);
    if (dir.empty()) continue;
    CHECK(meta_of(dir).at("collectives") == json{{"barrier", "mpi"}, {"bcast", "mpi"}, {"allreduce", algo}, {"alltoall", "mpi"}, {"allgather", "mpi"}, {"reduce", "mpi"}, {"gather", "mpi"}, {"scatter", "mpi"}, {"reduce_scatter", "mpi"}, {"scan", "mpi"}});
    // The report charges what ran, without MPICH's calibrated cost beyond the messages.
    const std::vector<std::string> algos = report_algorithms(dir, params);
    const auto has = [&](const std::string& line) { return std::find(algos.begin(), algos.end(), line) != algos.end(); };
    CHECK(has("MPI_Allreduce: recursive doubling (libmstep's substitute for 4 ranks, 4 to 24 bytes; 3 calls)"));
    if (std::string(algo) == "pt2pt") {
      CHECK(has("MPI_Allreduce: reduce-scatter + allgather (Rabenseifner) (libmstep's substitute for 2 ranks, 24 bytes; 2 calls)"));
      CHECK(has("MPI_Allreduce: recursive doubling (libmstep's substitute for 2 ranks, 8 bytes; 2 calls)"));
    } else {
      CHECK(has("MPI_Allreduce: recursive doubling (libmstep's substitute for 2 ranks, 8 to 24 bytes; 4 calls)"));
    }
  }
  {
    INFO("a malformed setting: one line on rank 0's stderr, MPICH's own allreduce runs");
    const fs::path dir = test_dir() / "allreduce_bad";
    const Result r = record(dir, 2, {prog("collectives")}, {{"LD_PRELOAD", kCountShim}, {"MSTEP_ALLREDUCE", "rabenseifner"}});
    check_recorded(r, 2);
    CHECK(lines_equal(r.err, "mstep: MSTEP_ALLREDUCE='rabenseifner' is not mpi, recursive_doubling, "
                             "reduce_scatter_allgather or pt2pt; MPICH's own collectives run") == 1);
    for (const auto& [rank, k] : counts_of(r.err)) CHECK(k == Counts{});
  }
}

TEST_CASE("substitute alltoall: MPICH's results to the byte, its algorithms' messages, charged as they ran") {
  // alltoall_check compares every case with MPICH's own PMPI_Alltoall, byte for byte: 3 ranks and
  // 4 (2^k: pairwise's XOR partners), each algorithm (Bruck on any count when asked for).
  for (const char* algo : {"pt2pt", "bruck", "scattered", "pairwise"})
    for (int ranks : {3, 4}) check_against_mpich("alltoall_check", "MSTEP_ALLTOALL", algo, ranks, 104);
  // collectives.c at 4 ranks makes 2 MPI_Alltoall calls of 8-byte blocks: on WORLD and on its half
  // (2 ranks). Pairwise: a local copy (a Sendrecv to itself) and n - 1 Sendrecv: 4 + 2 = 6 on every
  // rank. pt2pt below 8 ranks: scattered, Isend and Irecv only (not counted); mpi: MPICH's own.
  // Its MPI_Alltoallv calls run scattered under either setting.
  const fs::path params = test_dir() / "alltoall_params.json";
  std::ofstream(params) << R"({"L": 2e-6, "o": 1e-6, "Os": 0, "Or": 0, "g": 5e-7, "Gs": 1e-9, "Gl": 1e-9, "s": null, "S": 1000})";
  for (const auto& [algo, sendrecvs] : {std::pair{"pairwise", 6L}, {"pt2pt", 0L}, {"mpi", 0L}}) {
    INFO("MSTEP_ALLTOALL=" << algo);
    const fs::path dir = counted_collectives("MSTEP_ALLTOALL", algo, sendrecvs);
    if (dir.empty()) continue;
    CHECK(meta_of(dir).at("collectives") == json{{"barrier", "mpi"}, {"bcast", "mpi"}, {"allreduce", "mpi"}, {"alltoall", algo}, {"allgather", "mpi"}, {"reduce", "mpi"}, {"gather", "mpi"}, {"scatter", "mpi"}, {"reduce_scatter", "mpi"}, {"scan", "mpi"}});
    // The report charges what ran, without MPICH's calibrated cost beyond the messages.
    const std::vector<std::string> algos = report_algorithms(dir, params);
    const auto has = [&](const std::string& line) { return std::find(algos.begin(), algos.end(), line) != algos.end(); };
    const std::string name = std::string(algo) == "pairwise" ? "pairwise exchange" : "scattered Isend/Irecv (32 at a time)";
    CHECK(has("MPI_Alltoall: " + name + " (libmstep's substitute for 4 ranks, 8 bytes; 1 call)"));
    CHECK(has("MPI_Alltoall: " + name + " (libmstep's substitute for 2 ranks, 8 bytes; 2 calls)"));
    CHECK(has("MPI_Alltoallv: scattered Isend/Irecv (32 at a time) (libmstep's substitute for 4 ranks, 12 bytes; 1 call)"));
  }
  {
    INFO("a malformed setting: one line on rank 0's stderr, MPICH's own collectives run");
    const fs::path dir = test_dir() / "alltoall_bad";
    const Result r = record(dir, 2, {prog("collectives")}, {{"LD_PRELOAD", kCountShim}, {"MSTEP_ALLTOALL", "ring"}});
    check_recorded(r, 2);
    CHECK(lines_equal(r.err, "mstep: MSTEP_ALLTOALL='ring' is not mpi, bruck, scattered, pairwise or pt2pt; "
                             "MPICH's own collectives run") == 1);
    for (const auto& [rank, k] : counts_of(r.err)) CHECK(k == Counts{});
  }
}

TEST_CASE("substitute alltoall: the delay apparatus delays each of its messages", "[report]") {
  // MSTEP_DELAY_L=50us at 2 ranks, 50 calls: as for the allreduce below, the two ranks' Alltoall
  // times add up to at least L a call (5% left for the clock offset); MPICH's own is not delayed.
  const DelayedRuns t = delayed_and_mpich("alltoall", "alltoall_check", "MPI_Alltoall", {0, 1},
                                          {{"MSTEP_ALLTOALL", "pt2pt"}});
  CHECK(t.delayed >= 0.95 * 50e-6 * 50);
  CHECK(t.mpich < 0.5 * t.delayed);  // a fraction of the delayed run's (a noisy VM: not an absolute bound)
}

TEST_CASE("substitute allreduce: the delay apparatus delays each of its messages") {
  // MSTEP_DELAY_L=50us at 2 ranks: in each call the rank that enters first cannot leave before the
  // other entered plus L (the other's send carries its start), so the two ranks' Allreduce times
  // add up to at least L a call (5% left for the clock offset). cg makes 2 or 3 a step.
  const auto allreduce_s = [](const fs::path& dir) {
    const Stats s = stats(dir);
    double sum = 0, calls = 0;
    for (const json& rank : s.j.at("per_rank")) {
      sum += rank.at("time_s").at("MPI_Allreduce").get<double>();
      calls = rank.at("calls").at("MPI_Allreduce").get<double>();
    }
    return std::pair{sum, calls};
  };
  const fs::path dir = test_dir() / "allreduce_delayed";
  const Result r = record(dir, 2, {std::string(EXAMPLES_DIR) + "/cg", "200", "100", "1"},
                          {{"MSTEP_DELAY_L", "50us"}, {"MSTEP_ALLREDUCE", "pt2pt"}});
  check_recorded(r, 2);
  const auto [sum, calls] = allreduce_s(dir);
  REQUIRE(calls >= 100);
  CHECK(sum >= 0.95 * 50e-6 * calls);
  CHECK(meta_of(dir).at("collectives").at("allreduce") == "pt2pt");
}
