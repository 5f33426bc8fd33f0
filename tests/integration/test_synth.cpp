// mstep synth: synthetic traces as real trace directories, read end to end by stats and report
// (counts from the generator's documented shapes, model/trace/synthetic.hpp), and its bad input.
#include "harness.hpp"

using namespace mstep_it;

namespace {

Result synth(const fs::path& dir, const std::string& pattern, int ranks, int events) {
  return run({kMstep, "synth", "-o", dir.string(), "--ranks", std::to_string(ranks), "--events",
              std::to_string(events), "--pattern", pattern, "--seed", "3"});
}

}  // namespace

TEST_CASE("mstep synth writes a ring that stats and report read whole") {
  const fs::path dir = test_dir() / "ring";
  const Result r = synth(dir, "ring", 4, 1000);
  REQUIRE(r.code == 0);
  CHECK(r.out == "mstep: wrote " + dir.string() + ": ring pattern, 4 ranks, 988 events\n");
  // Per rank: MPI_Init, MPI_Barrier, MPI_Finalize and (1000 / 4 - 3) / 4 = 61 iterations of
  // Irecv, Isend and a Waitall of two records: 247 records, 4 * 247 = 988.
  const Stats s = stats(dir);
  REQUIRE(s.r.code == 0);
  CHECK(s.j.at("complete") == true);
  CHECK(s.j.at("events") == 988);
  const json rep = mstep_json("report", dir, {}, no_default_params(test_dir()));
  CHECK(rep.at("complete") == true);
  CHECK(rep.at("ranks") == 4);
  CHECK(rep.at("messages") == 4 * 61);  // one per rank and iteration, every one matched
  CHECK(rep.at("problems").empty());
  // meta.json says what made it.
  std::ifstream in(dir / "meta.json");
  std::stringstream text;
  text << in.rdbuf();
  const json meta = parse_json(text.str());
  CHECK(meta.at("synthetic").at("pattern") == "ring");
  CHECK(meta.at("synthetic").at("seed") == 3);
  CHECK(meta.at("format_version") == 4);  // kTraceVersion
}

TEST_CASE("mstep synth: pingpong, random and alltoall traces replay under every model without problems") {
  for (const char* pattern : {"pingpong", "random", "alltoall"}) {
    INFO(pattern);
    const fs::path dir = test_dir() / pattern;
    REQUIRE(synth(dir, pattern, 6, 3000).code == 0);
    const fs::path params = write_model_params(test_dir() / "params.json");
    const json rep = mstep_json("report", dir, {"--params", params.string()}, no_default_params(test_dir()));
    CHECK(rep.at("problems").empty());
    REQUIRE(rep.at("models").size() == 5);
    for (const auto& [name, m] : rep.at("models").items()) {
      INFO(name);
      CHECK(m.at("predicted_s").get<double>() > 0);
    }
  }
}

TEST_CASE("mstep synth --pack: many ranks a file, read as a file per rank is") {
  const fs::path flat = test_dir() / "flat", packed = test_dir() / "packed";
  REQUIRE(synth(flat, "random", 7, 6000).code == 0);
  REQUIRE(run({kMstep, "synth", "-o", packed.string(), "--ranks", "7", "--events", "6000", "--pattern", "random", "--seed",
               "3", "--pack", "3"})
              .code == 0);
  // Ranks 0-2, 3-5 and 6 in three pack files, an index, and meta.json's format version 3.
  for (const char* f : {"ranks-000000.msp", "ranks-000001.msp", "ranks-000002.msp", "packs.idx"}) CHECK(fs::exists(packed / f));
  CHECK_FALSE(fs::exists(packed / "rank-00000.mst"));
  std::ifstream in(packed / "meta.json");
  std::stringstream text;
  text << in.rdbuf();
  const json meta = parse_json(text.str());
  CHECK(meta.at("format_version") == 4);
  CHECK(meta.at("packed").at("ranks_per_file") == 3);
  // The same stats and the same report, whole and streamed.
  CHECK(stats(flat).j.at("events") == stats(packed).j.at("events"));
  const fs::path params = write_model_params(test_dir() / "params.json");
  const Env env = no_default_params(test_dir());
  for (const char* stream : {"yes", "no"}) {
    INFO(stream);
    const json a = mstep_json("report", flat, {"--params", params.string(), "--stream", stream}, env);
    const json b = mstep_json("report", packed, {"--params", params.string(), "--stream", stream}, env);
    CHECK(a.at("models") == b.at("models"));
    CHECK(a.at("messages") == b.at("messages"));
    CHECK(b.at("complete") == true);
  }
  // The last pack cut in the middle of rank 6's stream: rank 6 is cut short and named by its place
  // in the pack; ranks 0-5 are whole.
  const fs::path last = packed / "ranks-000002.msp";
  fs::resize_file(last, fs::file_size(last) / 2);
  const Result cut = run({kMstep, "stats", packed.string()});
  CHECK(cut.code != 0);
  CHECK(cut.err.find("ranks-000002.msp@0+") != std::string::npos);
  CHECK(cut.err.find("cut short") != std::string::npos);
  // A damaged index: the whole trace is one line.
  std::ofstream(packed / "packs.idx") << "not an index";
  const Result bad = run({kMstep, "report", packed.string()}, env);
  check_one_line_error(bad, 1);
  CHECK(bad.err.find("packs.idx: not a pack index") != std::string::npos);
  fs::remove(packed / "packs.idx");
  const Result missing = run({kMstep, "stats", packed.string()});
  check_one_line_error(missing, 1);
  CHECK(missing.err.find("packs.idx: missing or unreadable (a packed trace needs it)") != std::string::npos);
}

TEST_CASE("mstep synth: bad requests are one line and a non-zero exit") {
  const fs::path dir = test_dir() / "bad";
  const Result unknown = synth(dir, "spiral", 4, 100);
  check_one_line_error(unknown, 2);
  CHECK(unknown.err == "mstep: unknown pattern 'spiral' (patterns: ring, pingpong, random, alltoall, halo2d, halo3d, bcast, allreduce)\n");
  check_one_line_error(synth(dir, "ring", 0, 100), 2);
  // Too big to generate here: refused before anything is written, with the estimate.
  const Result huge = synth(dir, "ring", 4, 2000000000);
  check_one_line_error(huge, 1);
  CHECK(huge.err.rfind("mstep: 2000000000 events over 4 ranks need about ", 0) == 0);
  CHECK(huge.err.find("of memory to generate") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "meta.json"));
  // An existing trace is kept unless -f.
  REQUIRE(synth(dir, "ring", 2, 100).code == 0);
  const Result again = synth(dir, "ring", 2, 100);
  check_one_line_error(again, 1);
  CHECK(again.err == "mstep: " + dir.string() + " exists and is not empty (use -f to overwrite)\n");
}

TEST_CASE("progress bars: on a terminal only, erased before the result") {
  const fs::path dir = test_dir() / "tty";
  const std::string cmd = kMstep + " synth -o " + dir.string() + " --ranks 20 --events 2000";
  // `script` gives the command a terminal; MSTEP_PROGRESS_AFTER=0 draws at once.
  const Result tty = run({"script", "-qec", cmd, "/dev/null"}, {{"MSTEP_PROGRESS_AFTER", "0"}});
  REQUIRE(tty.code == 0);
  const auto bar = tty.out.find("writing [");
  const auto result = tty.out.find("mstep: wrote ");
  REQUIRE(bar != std::string::npos);
  REQUIRE(result != std::string::npos);
  CHECK(bar < result);
  CHECK(tty.out.find("% (0 of 20)") != std::string::npos);
  // Piped: nothing but the result, and report reads the trace without a bar either.
  const Result piped = run({kMstep, "synth", "-f", "-o", dir.string(), "--ranks", "20", "--events", "2000"},
                           {{"MSTEP_PROGRESS_AFTER", "0"}});
  CHECK(piped.out == "mstep: wrote " + dir.string() + ": ring pattern, 20 ranks, 1980 events\n");
  CHECK(piped.err.empty());
}

TEST_CASE("mstep synth: an allreduce of 70 ranks names the world in each step, dump lists it whole") {
  // 70 ranks, 2000 records: per rank MPI_Init, MPI_Barrier, 25 Allreduce, MPI_Finalize (1960 in
  // all). Every step of a collective of the whole world (70 members, from 64 on) names
  // communicator 0 instead of listing 70 ranks (share/trace-format.md, Steps).
  const fs::path dir = test_dir() / "allreduce70";
  REQUIRE(synth(dir, "allreduce", 70, 2000).code == 0);
  const Result text = run({kMstep, "dump", dir.string(), "-r", "3"});
  REQUIRE(text.code == 0);
  CHECK_THAT(text.out, Catch::Contains("    69     1  {3} + all of communicator 0\n"));
  CHECK_THAT(text.out, Catch::Contains("    0 world ranks {0..69}\n"));  // a range, not 70 numbers
  const Result r = run({kMstep, "dump", dir.string(), "-r", "3", "--format", "json"});
  REQUIRE(r.code == 0);
  const json j = parse_json(r.out);
  std::vector<std::int32_t> world(70);
  for (int i = 0; i < 70; ++i) world[static_cast<std::size_t>(i)] = i;
  int named = 0;
  for (const json& s : j.at("steps")) {
    if (s.at("whole_comm").is_null()) continue;
    ++named;
    CHECK(s.at("whole_comm") == 0);
    CHECK(s.at("partners").get<std::vector<std::int32_t>>() == world);
    CHECK(s.at("msgs_in") == 69);
  }
  CHECK(named == 26);  // the Barrier and every Allreduce
  CHECK(j.at("steps").size() == 27);  // and MPI_Finalize's
  // The report's step rows name the world the same way (70 ranks x 27 steps), whole and streamed.
  for (const char* stream : {"no", "yes"}) {
    INFO("--stream " << stream);
    const json rep = mstep_json("report", dir, {"--stream", stream}, no_default_params(test_dir()));
    CHECK(rep.at("problems").empty());
    const json& rows = rep.at("steps");
    REQUIRE(rows.size() == (std::string(stream) == "no" ? 70 * 27 : 1000));  // streamed: the first 1000 without MPM
    // Steps 1-26 end with the Barrier or an Allreduce, step 27 is MPI_Finalize's and hears nobody.
    int named_rows = 0;
    for (const json& row : rows) {
      const int rank = row.at("rank"), step = row.at("step");
      INFO("rank " << rank << " step " << step);
      CHECK(row.at("partners") == std::vector<int>{rank});
      if (step <= 26) {
        CHECK(row.at("partners_all_of") == json{{"size", 70}, {"identity", true}, {"members", nullptr}});
        ++named_rows;
      } else {
        CHECK(row.at("partners_all_of").is_null());
      }
    }
    CHECK(named_rows > 900);
  }
}

TEST_CASE("report --stream yes: the same sums as the whole report to the bit, and rows that do not depend on reading order") {
  // 300 ranks of random pairs: the streaming pass hands records, messages and waits over in an
  // order of its reading (windows of time, ranks in turn), not the whole report's.
  const fs::path dir = test_dir() / "random";
  REQUIRE(synth(dir, "random", 300, 60000).code == 0);
  const fs::path params = write_model_params(test_dir() / "params.json");
  const Env env = no_default_params(test_dir());
  const json whole = mstep_json("report", dir, {"--params", params.string(), "--stream", "no"}, env);
  const json streamed = mstep_json("report", dir, {"--params", params.string(), "--stream", "yes"}, env);
  // Seconds summed over many calls in another order: exact sums, so equal (a sum of doubles
  // differed in its last digits).
  CHECK(whole.at("mpi_time_s") == streamed.at("mpi_time_s"));
  CHECK(whole.at("mpi_time") == streamed.at("mpi_time"));
  CHECK(whole.at("hotspots") == streamed.at("hotspots"));
  CHECK(whole.at("models") == streamed.at("models"));
  // Without MPM parameters the streamed table keeps the 1000 steps that end first (ties by rank
  // and step), the same whatever order the steps were predicted in.
  const json plain = mstep_json("report", dir, {"--stream", "no"}, env);
  const json plain_streamed = mstep_json("report", dir, {"--stream", "yes"}, env);
  std::vector<std::tuple<double, int, int>> ends;
  for (const json& row : plain.at("steps")) ends.emplace_back(row.at("actual_end_s"), row.at("rank"), row.at("step"));
  std::sort(ends.begin(), ends.end());
  REQUIRE(ends.size() > 1000);
  ends.resize(1000);
  std::vector<std::tuple<double, int, int>> kept;
  for (const json& row : plain_streamed.at("steps")) kept.emplace_back(row.at("actual_end_s"), row.at("rank"), row.at("step"));
  std::sort(kept.begin(), kept.end());
  CHECK(kept == ends);
  bool noted = false;
  for (const json& n : plain_streamed.at("notes"))
    noted = noted || n.get<std::string>().find("the 1000 of ") != std::string::npos &&
                         n.get<std::string>().find("steps that end first") != std::string::npos;
  CHECK(noted);
}

// tools/allocator/large_pages.cpp: the commands that read traces run again with mimalloc's large
// OS pages on (mimalloc says which options it runs with when MIMALLOC_VERBOSE is set), a user's
// own MIMALLOC_LARGE_OS_PAGES is left to decide, and the commands that start MPI jobs keep the
// environment they were given.
TEST_CASE("the trace readers allocate on huge pages, a user's setting and the MPI commands are left alone") {
  if (!HAVE_MIMALLOC) {
    WARN("built without mimalloc: nothing to check");
    return;
  }
  const fs::path dir = test_dir() / "ring";
  REQUIRE(synth(dir, "ring", 2, 100).code == 0);
  const Result on = run({kMstep, "stats", dir.string()}, {{"MIMALLOC_VERBOSE", "1"}});
  REQUIRE(on.code == 0);
  CHECK(on.err.find("option 'large_os_pages': 1") != std::string::npos);
  const Result off = run({kMstep, "stats", dir.string()}, {{"MIMALLOC_VERBOSE", "1"}, {"MIMALLOC_LARGE_OS_PAGES", "0"}});
  REQUIRE(off.code == 0);
  CHECK(off.err.find("option 'large_os_pages': 0") != std::string::npos);
  CHECK(off.err.find("option 'large_os_pages': 1") == std::string::npos);
  // `mstep record` is not run again: its mpiexec and the application get the environment as it was.
  const Result rec = run({kMstep, "record", "--help"}, {{"MIMALLOC_VERBOSE", "1"}});
  CHECK(rec.code == 0);
  CHECK(rec.err.find("option 'large_os_pages': 0") != std::string::npos);
}
