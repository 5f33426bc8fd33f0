// mstep calibrate's watchdog: a phase that does not finish is named, and stopped. The test hook
// MSTEP_CALIB_STALL=<phase> makes the calibration program's rank 0 stop in that phase.
#include "harness.hpp"

using namespace mstep_it;

TEST_CASE("mstep calibrate names a stuck phase and stops it") {
  const fs::path dir = test_dir();
  const fs::path out = dir / "params.json";
  // 5 s per phase: the phases before the stalled one must get through it on a loaded machine
  // (the suite runs two tests at once on two cores).
  const Result r = run({kMstep, "calibrate", "--quick", "-q", "--timeout", "5", "-o", out.string()},
                       {{"MSTEP_CALIB_STALL", "patterns"}}, dir, 60);
  CHECK_FALSE(r.timed_out);
  CHECK(r.code == 1);
  CHECK(r.err.find("mstep: calibration stuck in phase 'patterns' for 5 s: stopped it (no parameter file written)\n") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(out));
  CHECK_FALSE(fs::exists(out.string() + ".partial"));
  CHECK_FALSE(fs::exists(out.string() + ".phase"));
}

TEST_CASE("mstep calibrate keeps whole parameters when only MPI_Finalize does not return") {
  const fs::path dir = test_dir();
  const fs::path out = dir / "params.json";
  const Result r = run({kMstep, "calibrate", "--quick", "-q", "--timeout", "5", "-o", out.string()},
                       {{"MSTEP_CALIB_STALL", "finalize"}}, dir, 60);
  CHECK(r.code == 0);
  CHECK(r.err.find("mstep: warning: the calibration did not get through MPI_Finalize in 5 s and was stopped; its "
                   "parameters were already written\n") != std::string::npos);
  REQUIRE(fs::exists(out));
  const Result show = run({kMstep, "params", "show", out.string()});
  CHECK(show.code == 0);
  // The rendezvous as calibrated (model/cost/loggps.hpp): written and shown.
  std::ifstream in(out);
  const json p = json::parse(in);
  CHECK(p.at("rendezvous") == "delivered");
  CHECK(p.at("H").get<double>() >= 0);
  CHECK(p.at("rendezvous_push").is_boolean());
  CHECK(show.out.find("  H   rendezvous handshake ") != std::string::npos);
  CHECK(show.out.find("rendezvous as calibrated: its bytes move once at Gl") != std::string::npos);
  CHECK(p.at("meta").at("notes").dump().find("rendezvous progress: a receiver's Wait for ") != std::string::npos);
  // The machine's period probed at the start and after each phase, in order (model::mixed_periods).
  const json& probes = p.at("meta").at("probes_8B");
  REQUIRE(probes.size() == 3);
  CHECK(probes[0].at("at") == "start");
  CHECK(probes[1].at("at") == "after point-to-point");
  CHECK(probes[2].at("at") == "after collectives");
  for (const auto& x : probes) CHECK(x.at("half_rtt").get<double>() > 0);
  // Both exchanges with the other rank, MPI_Sendrecv and MPI_Irecv + MPI_Isend + MPI_Waitall, at the
  // same sizes around S.
  const json& c = p.at("collectives");
  REQUIRE(c.contains("MPI_Sendrecv"));
  REQUIRE(c.contains("MPI_Waitall"));
  CHECK(c.at("MPI_Waitall").at("bytes") == c.at("MPI_Sendrecv").at("bytes"));
  CHECK(c.at("MPI_Waitall").at("bytes").size() >= 4);
  CHECK(show.out.find("  MPI_Waitall (Irecv+Isend)  8 B: ") != std::string::npos);
  // Every operation but MPI_Barrier at those sizes: 8 B, 1 KiB, 64 KiB, 1 MiB and S/2, S, 4 S (those
  // up to 1 MiB), so that no interpolation spans S.
  const bool finite = !p.at("S").is_null();
  const std::uint64_t S = finite ? p.at("S").get<std::uint64_t>() : 0;
  std::vector<std::uint64_t> ladder{8, 1024, 65536, 1048576};
  if (finite && S > 2048)
    for (const std::uint64_t m : {S / 2, S, 4 * S})
      if (m <= 1048576) ladder.push_back(m);
  std::sort(ladder.begin(), ladder.end());
  ladder.erase(std::unique(ladder.begin(), ladder.end()), ladder.end());
  INFO("S = " << p.at("S").dump());
  for (const auto& [name, entry] : c.items())
    if (name != "MPI_Barrier") CHECK(entry.at("bytes").get<std::vector<std::uint64_t>>() == ladder);
  // libmstep's substitutes timed at the sizes of MPICH's own (mstep_calib --sizes), for every collective they run, and
  // not for the exchanges (which have none).
  for (const char* op : {"MPI_Barrier", "MPI_Bcast", "MPI_Allreduce", "MPI_Reduce", "MPI_Alltoall", "MPI_Alltoallv",
                         "MPI_Allgather", "MPI_Allgatherv", "MPI_Gather", "MPI_Gatherv", "MPI_Scatter", "MPI_Scatterv",
                         "MPI_Reduce_scatter", "MPI_Reduce_scatter_block", "MPI_Scan", "MPI_Exscan"}) {
    INFO(op);
    REQUIRE(c.contains(op));
    REQUIRE(c.at(op).contains("substitute_s"));
    CHECK(c.at(op).at("substitute_s").size() == c.at(op).at("bytes").size());
    // and in the isolated loop too
    REQUIRE(c.at(op).contains("isolated"));
    REQUIRE(c.at(op).at("isolated").contains("substitute_s"));
    CHECK(c.at(op).at("isolated").at("substitute_s").size() == c.at(op).at("bytes").size());
  }
  CHECK_FALSE(c.at("MPI_Sendrecv").contains("substitute_s"));
  CHECK_FALSE(c.at("MPI_Sendrecv").at("isolated").contains("substitute_s"));
  CHECK(p.at("meta").at("notes").dump().find("substitutes: libmstep's collectives (MPICH's choice over point-to-point) "
                                             "timed per call for 16 operations") != std::string::npos);
  CHECK_FALSE(fs::exists(out.string() + ".substitutes"));  // its runs' directory is gone
}

TEST_CASE("mstep calibrate --no-substitutes leaves libmstep's substitutes untimed") {
  const fs::path dir = test_dir();
  const fs::path out = dir / "params.json";
  const Result r = run({kMstep, "calibrate", "--quick", "-q", "--no-substitutes", "-o", out.string()}, {}, dir, 60);
  REQUIRE(r.code == 0);
  std::ifstream in(out);
  const json p = json::parse(in);
  CHECK(p.at("collectives").at("MPI_Allreduce").at("measured_s").size() >= 1);
  CHECK_FALSE(p.at("collectives").at("MPI_Allreduce").contains("substitute_s"));
  CHECK(p.at("meta").at("notes").dump().find("substitutes: ") == std::string::npos);
  // Each collective and both exchanges isolated too (100 us of computation before each call; before
  // the MPI_Irecv of MPI_Waitall's).
  for (const auto& [name, t] : p.at("collectives").items()) {
    INFO(name);
    REQUIRE(t.contains("isolated"));
    CHECK(t.at("isolated").at("gap_s").get<double>() == Approx(100e-6));
    CHECK(t.at("isolated").at("measured_s").size() == t.at("bytes").size());
    CHECK(t.at("isolated").at("model_s").size() == t.at("bytes").size());
  }
}

TEST_CASE("mstep calibrate starts the launcher named by MSTEP_MPIEXEC, and says so when it cannot") {
  const fs::path dir = test_dir();
  const fs::path out = dir / "params.json";
  const Result r = run({kMstep, "calibrate", "--quick", "-q", "-o", out.string()},
                       {{"MSTEP_MPIEXEC", "/nonexistent/mpiexec"}}, dir, 60);
  CHECK(r.code == 127);
  CHECK(r.err.find("mstep: cannot run '/nonexistent/mpiexec': No such file or directory\n") != std::string::npos);
  CHECK(r.err.find("mstep: calibration failed: /nonexistent/mpiexec exited with code 127\n") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
}
