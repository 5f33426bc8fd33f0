// Integration tests: MPI_THREAD_MULTIPLE, two threads per rank exchanging messages (threads.c).
// (see harness.hpp; expected numbers come from the header comment of threads.c)
#include "harness.hpp"

using namespace mstep_it;

TEST_CASE("threads: two threads per rank ping-pong under MPI_THREAD_MULTIPLE", "[threads]") {
  const fs::path dir = test_dir() / "trace";
  const int n = 200;  // ping-pongs per thread
  const Result rec = record(dir, 2, {prog("threads"), std::to_string(n)});
  if (rec.out.find("MPI_THREAD_MULTIPLE not provided") != std::string::npos) {
    WARN("threads: the MPI library does not provide MPI_THREAD_MULTIPLE; test skipped");
    return;
  }
  check_recorded(rec, 2);

  const Stats s = stats(dir);
  check_complete(s, 2);
  // Per rank: Init_thread; 2 threads x N x (Send 8 B, Recv 8 B); Finalize.
  for (int rank = 0; rank < 2; ++rank) {
    Expect e;
    e.add("MPI_Init_thread", 1);
    e.add("MPI_Send", 2 * n, 16 * n, 0);
    e.add("MPI_Recv", 2 * n, 0, 16 * n);
    e.add("MPI_Finalize", 1);
    check_rank(s.j, rank, e);
  }

  // Every message carries its thread's tag (1 or 2) and comes from the other rank.
  for (int rank = 0; rank < 2; ++rank) {
    INFO("rank " << rank);
    const json d = dump_rank(dir, rank);
    const auto recvs = events_of(d, "MPI_Recv");
    const auto sends = events_of(d, "MPI_Send");
    CHECK(recvs.size() == static_cast<std::size_t>(2 * n));
    CHECK(sends.size() == static_cast<std::size_t>(2 * n));
    std::map<int, int> per_tag;
    for (const auto& e : recvs) {
      INFO(e.dump());
      const int tag = e.at("tag");
      CHECK((tag == 1 || tag == 2));
      CHECK(e.at("peer") == 1 - rank);
      CHECK(e.at("comm") == 0);
      ++per_tag[tag];
    }
    CHECK(per_tag == std::map<int, int>{{1, n}, {2, n}});
    for (const auto& e : sends) {
      INFO(e.dump());
      CHECK(e.at("peer") == 1 - rank);
    }
    check_all_callsites_in(d, "threads.c");
  }
}
