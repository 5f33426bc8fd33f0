// Integration tests: one-sided communication and MPI-IO (rma_io.c) are recorded with exact counts,
// bytes, targets and communicators, the program computes what it computes without mstep, and the
// report says that every model keeps their time as recorded (the M-steps count it as computation).
#include "harness.hpp"

using namespace mstep_it;

namespace {

bool unmodelled(const std::string& op) { return op.rfind("MPI_Win_", 0) == 0 || op.rfind("MPI_File_", 0) == 0 ||
                                                 op == "MPI_Put" || op == "MPI_Get" || op == "MPI_Accumulate" ||
                                                 op == "MPI_Get_accumulate" || op == "MPI_Fetch_and_op" ||
                                                 op == "MPI_Compare_and_swap" || op == "MPI_Rput" || op == "MPI_Rget"; }

}  // namespace

TEST_CASE("rma_io: one-sided communication and MPI-IO, recorded and kept at their recorded time", "[rma][io]") {
  const fs::path dir = test_dir() / "trace", file = test_dir() / "rma_io.bin";
  const Result rec = record(dir, 2, {prog("rma_io"), file.string()});
  check_recorded(rec, 2);  // exit 0: every value the program moved was right under mstep
  CHECK(!fs::exists(file));
  const Stats s = stats(dir);
  check_complete(s, 2);

  for (int rank = 0; rank < 2; ++rank) {
    INFO("rank " << rank);
    // The header of rma_io.c (m = 4 B an int).
    Expect e;
    e.add("MPI_Init", 1);
    e.add("MPI_Comm_dup", 1);
    e.add("MPI_Win_allocate", 1);
    e.add("MPI_Win_fence", 3);
    e.add("MPI_Put", 3, 32 + 12 + 4, 0);
    e.add("MPI_Get", 1, 0, 16);
    e.add("MPI_Accumulate", 1, 8, 0);
    e.add("MPI_Win_free", 2);
    e.add("MPI_Win_create", 1);
    e.add("MPI_Win_lock", 1);
    e.add("MPI_Win_flush", 1);
    e.add("MPI_Get_accumulate", 1, 4, 4);
    e.add("MPI_Fetch_and_op", 1, 4, 4);
    e.add("MPI_Compare_and_swap", 1, 4, 4);
    e.add("MPI_Win_unlock", 1);
    e.add("MPI_Win_lock_all", 1);
    e.add("MPI_Rput", 1, 8, 0);
    e.add("MPI_Rget", 1, 0, 8);
    e.add("MPI_Wait", 2);  // requests mstep did not create: no bytes
    e.add("MPI_Win_flush_all", 1);
    e.add("MPI_Win_unlock_all", 1);
    e.add("MPI_Barrier", 3);
    e.add("MPI_Win_post", 1);
    e.add("MPI_Win_start", 1);
    e.add("MPI_Win_complete", 1);
    e.add("MPI_Win_wait", 1);
    e.add("MPI_Comm_free", 1);
    e.add("MPI_File_open", 1);
    e.add("MPI_File_write_at_all", 1, 1024, 0);
    e.add("MPI_File_sync", 2);
    e.add("MPI_File_read_at", 1, 0, 1024);  // the bytes the status reports
    e.add("MPI_File_seek", 1);
    e.add("MPI_File_write", 1, 64, 0);
    e.add("MPI_File_close", 1);
    if (rank == 0) e.add("MPI_File_delete", 1);
    e.add("MPI_Finalize", 1);
    check_rank(s.j, rank, e);

    const json d = dump_rank(dir, rank);
    check_all_callsites_in(d, "rma_io.c");
    // The first window is the duplicate's (a communicator of its own), the second MPI_COMM_WORLD's;
    // every transfer names the other rank as its target, the epoch calls on the whole window none.
    const auto dups = events_of(d, "MPI_Comm_dup");
    REQUIRE(dups.size() == 1);
    const auto puts = events_of(d, "MPI_Put");
    REQUIRE(puts.size() == 3);
    CHECK(puts[0].at("comm") != 0);
    CHECK(puts[1].at("comm") == 0);
    CHECK(puts[2].at("comm") == 0);
    for (const char* op : {"MPI_Put", "MPI_Get", "MPI_Accumulate", "MPI_Get_accumulate", "MPI_Fetch_and_op",
                           "MPI_Compare_and_swap", "MPI_Rput", "MPI_Rget", "MPI_Win_lock", "MPI_Win_unlock", "MPI_Win_flush"})
      for (const auto& x : events_of(d, op)) {
        INFO(x.dump());
        CHECK(x.at("peer") == 1 - rank);
      }
    for (const auto& x : events_of(d, "MPI_Win_fence")) CHECK(x.at("peer") == -1);
    for (const auto& x : events_of(d, "MPI_Win_fence")) CHECK(x.at("comm") == puts[0].at("comm"));

    // The M-steps count the time of these calls as computation: their MPI time is the other calls'.
    double modelled_mpi = 0, steps_mpi = 0;
    for (const auto& x : d.at("events")) {
      const std::string op = x.at("op");
      if ((x.at("flags").get<int>() & 1) || op == "mstep_flush" || unmodelled(op)) continue;
      modelled_mpi += x.at("duration_s").get<double>();
    }
    for (const auto& st : d.at("steps")) steps_mpi += st.at("mpi_s").get<double>();
    CHECK(steps_mpi == Approx(modelled_mpi).epsilon(1e-6).margin(1e-9));
  }

  // The report says what it did with them: 27 one-sided calls a rank, 8 MPI-IO calls a rank and
  // rank 0's File_delete.
  const fs::path params = write_model_params(test_dir() / "params.json");
  const json rep = mstep_json("report", dir, {"--params", params.string()}, no_default_params(test_dir()));
  bool said = false;
  for (const auto& n : rep.at("notes")) {
    const std::string text = n;
    if (text.rfind("recorded, not modelled: ", 0) != 0) continue;
    said = true;
    INFO(text);
    CHECK(text.find("54 one-sided (RMA) calls (") != std::string::npos);
    CHECK(text.find("17 MPI-IO calls (") != std::string::npos);
  }
  CHECK(said);
  CHECK(rep.at("mpi_time").at("MPI_Put").at("calls") == 6);
  CHECK(rep.at("problems").empty());
}
