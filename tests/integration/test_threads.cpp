// Integration tests: MPI_THREAD_MULTIPLE, two threads per rank exchanging messages (threads.c).
// (see harness.hpp; expected numbers come from the header comment of threads.c)
#include "harness.hpp"

using namespace mstep_it;

namespace {

// A rank of threads.c with `n` ping-pongs per thread: Init_thread; 2 threads x n x (Send 8 B,
// Recv 8 B); Finalize.
Expect threads_calls(int n) {
  Expect e;
  e.add("MPI_Init_thread", 1);
  e.add("MPI_Send", 2 * n, 16 * n, 0);
  e.add("MPI_Recv", 2 * n, 0, 16 * n);
  e.add("MPI_Finalize", 1);
  return e;
}

}  // namespace

TEST_CASE("threads: two threads per rank ping-pong under MPI_THREAD_MULTIPLE", "[threads]") {
  const fs::path dir = test_dir() / "trace";
  const int n = 200;  // ping-pongs per thread
  if (!record_threads(dir, n)) return;

  const Stats s = stats(dir);
  check_complete(s, 2);
  for (int rank = 0; rank < 2; ++rank) {
    check_rank(s.j, rank, threads_calls(n));
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

  // The report says which figures hold for multi-threaded ranks and computes no model: never a
  // time in MPI over 100% of the run, a model error from replaying interleaved threads as one
  // sequence, or MPM's "steps depend on each other in a cycle".
  const fs::path params = dir.parent_path() / "params.json";
  std::ofstream(params) << R"({"format": "mstep-params", "L": 3e-6, "o": 1e-6, "Os": 0, "Or": 0, "g": 1e-6,
    "Gs": 1e-10, "Gl": 1e-10, "s": 1024, "S": 65536, "mpm": {"g": 1e-10, "L": 2e-6},
    "linear": {"boundary": 1024, "below": {"T0": 2e-6, "B": 1e9}, "above": {"T0": 5e-6, "B": 5e9}}})";
  const json rep = mstep_json("report", dir, {"--params", params.string()}, no_default_params(dir.parent_path()));
  for (const char* model : {"MPM", "BSPWB", "LogGP", "LogGPS", "linear"}) {
    INFO(model);
    const json& m = rep.at("models").at(model);
    CHECK(m.at("predicted_s").is_null());
    CHECK(m.at("note").get<std::string>().rfind("not available for multi-threaded ranks: ranks 0, 1 made MPI calls", 0) == 0);
  }
  CHECK(rep.at("steps").empty());
  CHECK(rep.at("mpi_time_s").get<double>() <= rep.at("actual_s").get<double>() * 2);
  bool noted = false;
  for (const auto& note : rep.at("notes")) noted = noted || note.get<std::string>().rfind("MPI_THREAD_MULTIPLE: ranks 0, 1", 0) == 0;
  CHECK(noted);
  const Result text = run({kMstep, "report", dir.string(), "--params", params.string()}, no_default_params(dir.parent_path()));
  CHECK(text.code == 0);
  CHECK(text.out.find("cycle") == std::string::npos);
}

// Two application threads per rank fill their own buffers and hand them to one writer thread,
// concurrently: every call arrives, in order per thread.
TEST_CASE("threads: many small frames from two threads through libmstep's writer thread", "[threads][frames]") {
  const fs::path dir = test_dir() / "trace";
  const int n = 2000;
  if (!record_threads(dir, n, {{"MSTEP_WRITER", "thread"}, {"MSTEP_BUFFER", "4k"}})) return;
  const Stats s = stats(dir);
  check_complete(s, 2);
  CHECK(read_meta(dir).at("writer") == "thread");
  for (int rank = 0; rank < 2; ++rank) {
    check_rank(s.j, rank, threads_calls(n));
    // 8000 calls in halves of 64 events: more than 100 handoffs, each with its flush record.
    CHECK(s.j["per_rank"][rank].at("events").get<int>() > 4 * n + 2 + 100);
  }
  for (int rank = 0; rank < 2; ++rank) {
    const json d = dump_rank(dir, rank);
    std::map<int, int> per_tag;
    for (const auto& e : events_of(d, "MPI_Recv")) ++per_tag[e.at("tag").get<int>()];
    CHECK(per_tag[1] == n);
    CHECK(per_tag[2] == n);
  }
}
