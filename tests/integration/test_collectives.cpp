// Integration tests: collectives (collectives.c) at 2 and 4 ranks.
// (see harness.hpp; expected numbers come from the header comment of each test program)
#include "harness.hpp"

using namespace mstep_it;

namespace {

// ---------------------------------------------------------------------------------------------
// Expected results of collectives.c

// One round of collectives.c on a communicator of size n where this process has rank r.
void add_collective_round(Expect& e, std::uint64_t n, std::uint64_t r) {
  const std::uint64_t o = n - 1;  // the others
  auto blocks_of_others = [&](std::uint64_t except) {  // sum over i != except of 4 (i+1) bytes
    std::uint64_t s = 0;
    for (std::uint64_t i = 0; i < n; ++i)
      if (i != except) s += 4 * (i + 1);
    return s;
  };
  const bool root0 = r == 0, root_last = r == n - 1;
  e.add("MPI_Bcast", 1, root0 ? 40 * o : 0, root0 ? 0 : 40);                    // 10 int
  e.add("MPI_Reduce", 1, root_last ? 0 : 16, root_last ? 16 * o : 0);           // 4 int
  e.add("MPI_Allreduce", 2, 24 * o + 8 * o, 24 * o + 8 * o);                   // 3 double; 2 int
  e.add("MPI_Gather", 1, root0 ? 0 : 8, root0 ? 8 * o : 0);                     // 2 int
  e.add("MPI_Gatherv", 1, root0 ? 0 : 4 * (r + 1), root0 ? blocks_of_others(0) : 0);
  e.add("MPI_Scatter", 1, root0 ? 12 * o : 0, root0 ? 0 : 12);                  // 3 int
  e.add("MPI_Scatterv", 1, root0 ? blocks_of_others(0) : 0, root0 ? 0 : 4 * (r + 1));
  e.add("MPI_Allgather", 1, 4 * o, 4 * o);                                      // 1 int
  e.add("MPI_Allgatherv", 1, 4 * (r + 1) * o, blocks_of_others(r));
  e.add("MPI_Alltoall", 1, 8 * o, 8 * o);                                       // 2 int each
  e.add("MPI_Alltoallv", 1, blocks_of_others(r), 4 * (r + 1) * o);
  e.add("MPI_Reduce_scatter", 1, blocks_of_others(r), 4 * (r + 1) * o);
  e.add("MPI_Reduce_scatter_block", 1, 8 * o, 8 * o);                           // 2 int
  e.add("MPI_Barrier", 1);
}

// collectives.c at `size` ranks for world rank `w`.
Expect collectives_expect(int size, int w, bool all) {
  Expect e;
  e.add("MPI_Init", 1);
  const std::uint64_t half_n = w % 2 == 0 ? (size + 1) / 2 : size / 2, half_r = w / 2;
  if (all) add_collective_round(e, size, w);
  e.add("MPI_Comm_split", 1);
  add_collective_round(e, half_n, half_r);
  if (all) {
    e.add("MPI_Comm_dup", 1);
    e.add("MPI_Allreduce", 1, 4 * (size - 1), 4 * (size - 1));  // 1 int on the duplicate
  }
  e.add("MPI_Comm_free", all ? 2 : 1);
  e.add("MPI_Finalize", 1);
  return e;
}

}  // namespace

TEST_CASE("collectives at 2 ranks: calls, logical bytes, roots and communicators", "[collectives]") {
  const fs::path dir = test_dir() / "trace";
  const Result rec = record(dir, 2, {prog("collectives")});
  check_recorded(rec, 2);
  CHECK(rec.out.find("collectives: 2 ranks, ok") != std::string::npos);
  const Stats s = stats(dir);
  check_complete(s, 2);
  for (int w = 0; w < 2; ++w) check_rank(s.j, w, collectives_expect(2, w, true));

  for (int w = 0; w < 2; ++w) {
    INFO("rank " << w);
    const json d = dump_rank(dir, w);
    // Every collective closes the step it is in: 2 rounds of 15, the Allreduce on the duplicate,
    // and the last step {Comm_free, Comm_free, Finalize}.
    CHECK(d.at("steps").size() == 32);
    CHECK(s.j["per_rank"][w].at("steps") == 32);
    check_all_callsites_in(d, "collectives.c");
    // Communicators: world (0, both ranks), the split one (this rank alone), the duplicate.
    std::map<int, std::vector<int>> comms;
    for (const auto& c : d.at("comms")) comms[c.at("id")] = c.at("world_ranks").get<std::vector<int>>();
    REQUIRE(comms.count(0) == 1);
    CHECK(comms[0] == std::vector<int>{0, 1});
    const auto split = events_of(d, "MPI_Comm_split");
    REQUIRE(split.size() == 1);
    const int half_id = split[0].at("peer");  // the new communicator's id
    CHECK(half_id > 0);
    CHECK(comms[half_id] == std::vector<int>{w});
    const auto dup = events_of(d, "MPI_Comm_dup");
    REQUIRE(dup.size() == 1);
    const int dup_id = dup[0].at("peer");
    CHECK(dup_id != half_id);
    CHECK(comms[dup_id] == std::vector<int>{0, 1});
    // The Bcasts: world first (root 0), then the split communicator (root: this rank).
    const auto bc = events_of(d, "MPI_Bcast");
    REQUIRE(bc.size() == 2);
    CHECK(bc[0].at("comm") == 0);
    CHECK(bc[0].at("peer") == 0);
    CHECK(bc[0].at("flags") == (w == 0 ? 4 : 0));
    CHECK(bc[1].at("comm") == half_id);
    CHECK(bc[1].at("peer") == w);
    CHECK(bc[1].at("flags") == 4);
    // Reduce to the last rank of world: rank 1 is the root.
    const auto red = events_of(d, "MPI_Reduce");
    REQUIRE(red.size() == 2);
    CHECK(red[0].at("peer") == 1);
    CHECK(red[0].at("flags") == (w == 1 ? 4 : 0));
    // The Allreduce on the duplicate names the duplicate.
    const auto ar = events_of(d, "MPI_Allreduce");
    REQUIRE(ar.size() == 5);
    CHECK(ar[4].at("comm") == dup_id);
    const auto fr = events_of(d, "MPI_Comm_free");
    REQUIRE(fr.size() == 2);
    CHECK(fr[0].at("comm") == dup_id);
    CHECK(fr[1].at("comm") == half_id);
  }
}

TEST_CASE("collectives at 4 ranks: partners of a split communicator are world ranks", "[collectives][4ranks]") {
  const fs::path dir = test_dir() / "trace";
  // Stacked after libmstep.so: blocking calls yield instead of spinning (4 ranks, 2 cores).
  const Result rec = record(dir, 4, {prog("collectives")}, {{"LD_PRELOAD", kShim}});
  check_recorded(rec, 4);
  CHECK(rec.out.find("collectives: 4 ranks, ok") != std::string::npos);
  const Stats s = stats(dir);
  check_complete(s, 4);
  for (int w = 0; w < 4; ++w) check_rank(s.j, w, collectives_expect(4, w, true));

  for (int w = 0; w < 4; ++w) {
    INFO("rank " << w);
    const json d = dump_rank(dir, w);
    const std::vector<int> same_parity{w % 2, w % 2 + 2};
    std::map<int, std::vector<int>> comms;
    for (const auto& c : d.at("comms")) comms[c.at("id")] = c.at("world_ranks").get<std::vector<int>>();
    CHECK(comms[0] == std::vector<int>{0, 1, 2, 3});
    const int half_id = events_of(d, "MPI_Comm_split").at(0).at("peer");
    CHECK(comms[half_id] == same_parity);
    // On the split communicator, Bcast's root is its rank 0 and Reduce's its rank 1: world ranks
    // w%2 and w%2+2.
    const auto bc = events_of(d, "MPI_Bcast");
    REQUIRE(bc.size() == 2);
    CHECK(bc[1].at("comm") == half_id);
    CHECK(bc[1].at("peer") == w % 2);
    CHECK(bc[1].at("flags") == (w < 2 ? 4 : 0));
    CHECK(bc[1].at("send_bytes") == (w < 2 ? 40 : 0));
    const auto red = events_of(d, "MPI_Reduce");
    REQUIRE(red.size() == 2);
    CHECK(red[0].at("peer") == 3);
    CHECK(red[1].at("peer") == w % 2 + 2);
    CHECK(red[1].at("flags") == (w >= 2 ? 4 : 0));
    const auto gv = events_of(d, "MPI_Gatherv");
    REQUIRE(gv.size() == 2);
    CHECK(gv[0].at("recv_bytes") == (w == 0 ? 4 * (2 + 3 + 4) : 0));
    CHECK(gv[1].at("recv_bytes") == (w < 2 ? 4 * 2 : 0));
  }
}

TEST_CASE("collectives on a split communicator only: M-step partners are world ranks", "[collectives][4ranks][steps]") {
  const fs::path dir = test_dir() / "trace";
  const Result rec = record(dir, 4, {prog("collectives"), "split"}, {{"LD_PRELOAD", kShim}});
  check_recorded(rec, 4);
  const Stats s = stats(dir);
  check_complete(s, 4);
  for (int w = 0; w < 4; ++w) {
    INFO("rank " << w);
    check_rank(s.j, w, collectives_expect(4, w, false));
    const json d = dump_rank(dir, w);
    CHECK(d.at("steps").size() == 16);  // 15 collectives, each closing a step; {Comm_free, Finalize}
    // Every collective of the run is on {w%2, w%2+2}: no step may name another rank, and the
    // other member of the pair must appear (a comm-rank instead of a world rank would give {0,1}).
    std::set<int> partners;
    for (const auto& st : d.at("steps"))
      for (int p : st.at("partners")) partners.insert(p);
    const int mate = w % 2 == 0 ? (w == 0 ? 2 : 0) : (w == 1 ? 3 : 1);
    CHECK(partners.count(mate) == 1);
    for (int p : partners) {
      INFO("partner " << p);
      CHECK(p % 2 == w % 2);
    }
  }
}

// =============================================================================================
// Corner cases
