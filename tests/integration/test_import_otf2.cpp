// mstep import --otf2: OTF2 archives as mstep traces. A round trip through mstep export --otf2
// gives the same report; EZTrace 2's archive of a program gives the calls and bytes mstep records
// of the same program, and a report that predicts it; damaged or missing archives are one line.
#include "harness.hpp"

using namespace mstep_it;

namespace {

// Per rank: function -> (calls, bytes sent, bytes received), from `mstep stats`.
std::map<int, std::map<std::string, std::tuple<long, long, long>>> calls_by_rank(const fs::path& dir) {
  const Stats st = stats(dir);
  std::map<int, std::map<std::string, std::tuple<long, long, long>>> out;
  for (const json& rank : st.j.at("per_rank"))
    for (const auto& [name, n] : rank.at("calls").items())
      out[rank.at("rank").get<int>()][name] = {n.get<long>(), rank.at("bytes_sent").at(name).get<long>(),
                                               rank.at("bytes_received").at(name).get<long>()};
  return out;
}

// The most by which a member left a collective of all ranks (MPI_Allreduce, MPI_Barrier) before
// another member entered it, over the instances of a run, on the common timeline of `mstep export
// --perfetto`: positive means the ranks' clocks disagree.
double worst_collective_overlap_us(const fs::path& trace, const fs::path& json_file) {
  REQUIRE(run({kMstep, "export", trace.string(), "--perfetto", json_file.string()}).code == 0);
  std::ifstream in(json_file);
  const json doc = json::parse(in);
  std::map<std::pair<std::string, int>, std::vector<std::pair<double, double>>> calls;  // (name, rank) -> [enter, exit]
  for (const json& e : doc.at("traceEvents"))
    if (e.at("ph") == "X" && (e.at("name") == "MPI_Allreduce" || e.at("name") == "MPI_Barrier")) {
      const double t = e.at("ts"), d = e.at("dur");
      calls[{e.at("name"), e.at("pid")}].push_back({t, t + d});
    }
  double worst = -1e300;
  for (const std::string name : {"MPI_Allreduce", "MPI_Barrier"}) {
    const auto& a = calls.at({name, 0});
    const auto& b = calls.at({name, 1});
    REQUIRE(a.size() == b.size());
    for (std::size_t k = 0; k < a.size(); ++k)
      worst = std::max(worst, std::max(a[k].first, b[k].first) - std::min(a[k].second, b[k].second));
  }
  return worst;
}

}  // namespace

TEST_CASE("mstep import --otf2 of mstep's own export: the same calls, M-steps and report") {
  const fs::path work = test_dir();
  const fs::path dir = work / "random";
  REQUIRE(run({kMstep, "synth", "-o", dir.string(), "--ranks", "6", "--events", "6000", "--pattern", "random"}).code == 0);
  const fs::path archive = work / "otf2", back = work / "back";
  REQUIRE(run({kMstep, "export", dir.string(), "--otf2", archive.string()}).code == 0);
  const Result r = run({kMstep, "import", "--otf2", archive.string(), "-o", back.string()});
  REQUIRE(r.code == 0);
  CHECK(r.err.empty());
  CHECK(r.out.rfind("mstep: wrote " + back.string() + ": 6 ranks, ", 0) == 0);
  CHECK(r.out.find("(written by mstep)") != std::string::npos);
  CHECK(calls_by_rank(back) == calls_by_rank(dir));
  const Stats a = stats(dir), b = stats(back);
  for (std::size_t i = 0; i < 6; ++i) {
    CHECK(b.j.at("per_rank")[i].at("steps") == a.j.at("per_rank")[i].at("steps"));
    CHECK(b.j.at("per_rank")[i].at("events") == a.j.at("per_rank")[i].at("events"));
  }
  write_model_params(dir / "params.json");
  write_model_params(back / "params.json");
  const Env env = no_default_params(work);
  const json ra = mstep_json("report", dir, {}, env), rb = mstep_json("report", back, {}, env);
  CHECK(rb.at("messages") == ra.at("messages"));
  CHECK(rb.at("actual_s").get<double>() == Approx(ra.at("actual_s").get<double>()).epsilon(1e-9));
  for (const auto& [name, m] : ra.at("models").items()) {
    INFO(name);
    CHECK(rb.at("models").at(name).at("predicted_s").get<double>() == Approx(m.at("predicted_s").get<double>()).epsilon(1e-9));
  }
}

TEST_CASE("mstep import --otf2 of EZTrace 2: mstep's calls and bytes, and a prediction of the run") {
  const fs::path work = test_dir();
  const std::string ring = std::string(EXAMPLES_DIR) + "/ring";
  const Result ez = run({kMpiexec, "-n", "2", "eztrace", "-t", "mpich", ring, "50", "4096"}, {}, work, 120);
  REQUIRE(ez.code == 0);
  const fs::path mine = work / "mine", back = work / "eztrace";
  check_recorded(record(mine, 2, {ring, "50", "4096"}), 2);
  const Result r = run({kMstep, "import", "--otf2", (work / "ring_trace").string(), "-o", back.string()});
  REQUIRE(r.code == 0);
  // EZTrace records neither MPI_Init nor MPI_Finalize, and wraps the program in a "Working" region.
  CHECK(r.err.find("mstep: note: 4 MPI_Init/MPI_Finalize records added") != std::string::npos);
  CHECK(r.err.find("mstep: skipped 4 calls of functions other than MPI") != std::string::npos);
  auto theirs = calls_by_rank(back), ours = calls_by_rank(mine);
  for (int rank = 0; rank < 2; ++rank) {
    INFO("rank " << rank);
    for (const std::string f : {"MPI_Send", "MPI_Recv"}) CHECK(theirs[rank].at(f) == ours[rank].at(f));
    // Collectives: the same calls; EZTrace counts a broadcast's buffer as sent and received by every rank.
    for (const std::string f : {"MPI_Bcast", "MPI_Barrier", "MPI_Allreduce"})
      CHECK(std::get<0>(theirs[rank].at(f)) == std::get<0>(ours[rank].at(f)));
    CHECK(theirs[rank].at("MPI_Allreduce") == ours[rank].at("MPI_Allreduce"));
  }
  // EZTrace stamps each process on its own clock: where its ranks disagree, the import aligns them
  // so that no member leaves a collective of all ranks before the other entered it.
  const bool aligned = r.err.find("mstep: note: the archive's clocks disagree") != std::string::npos;
  INFO("import said: " << r.err);
  CHECK(worst_collective_overlap_us(back, work / "eztrace.json") <= 0.001);
  const fs::path kept = work / "kept";
  REQUIRE(run({kMstep, "import", "--otf2", (work / "ring_trace").string(), "-o", kept.string(), "--keep-clocks"}).code == 0);
  CHECK((worst_collective_overlap_us(kept, work / "kept.json") > 0.001) == aligned);
  write_model_params(back / "params.json");
  const json rep = mstep_json("report", back, {}, no_default_params(work));
  CHECK(rep.at("messages") == 100);
  CHECK(rep.at("complete") == true);
  REQUIRE(rep.at("models").at("LogGPS").at("error_pct").is_number());
  // How close LogGPS comes is a timing claim, measured by hand (README), not asserted: under the
  // suite's load it moved from 4% to 16%.
}

TEST_CASE("mstep import --otf2: missing, empty and damaged archives are one line, and output is not overwritten") {
  const fs::path work = test_dir();
  const fs::path dir = work / "ring";
  REQUIRE(run({kMstep, "synth", "-o", dir.string(), "--ranks", "2", "--events", "200"}).code == 0);
  const fs::path archive = work / "otf2";
  REQUIRE(run({kMstep, "export", dir.string(), "--otf2", archive.string()}).code == 0);
  const Result missing = run({kMstep, "import", "--otf2", (work / "none").string(), "-o", "x"});
  check_one_line_error(missing, 1);
  CHECK(missing.err == "mstep: " + (work / "none").string() + ": no such file or directory\n");
  fs::create_directories(work / "empty");
  check_one_line_error(run({kMstep, "import", "--otf2", (work / "empty").string(), "-o", "x"}), 1);
  const Result exists = run({kMstep, "import", "--otf2", archive.string(), "-o", dir.string()});
  check_one_line_error(exists, 1);
  CHECK(exists.err == "mstep: " + dir.string() + " exists and is not empty (use -f to overwrite)\n");
  // An anchor file that is not OTF2, and an archive whose event file is cut short.
  std::ofstream(work / "bad.otf2") << "not an archive\n";
  const Result bad = run({kMstep, "import", "--otf2", (work / "bad.otf2").string(), "-o", (work / "b").string()});
  check_one_line_error(bad, 1);
  CHECK(bad.err.rfind("mstep: cannot import ", 0) == 0);
  fs::resize_file(archive / "traces" / "0.evt", fs::file_size(archive / "traces" / "0.evt") / 2);
  const Result cut = run({kMstep, "import", "--otf2", archive.string(), "-o", (work / "c").string()});
  check_one_line_error(cut, 1);
  CHECK(cut.err.rfind("mstep: cannot import ", 0) == 0);
  CHECK(!fs::exists(work / "c"));  // no half-written trace left behind
  CHECK(!fs::exists(work / "b"));
}
