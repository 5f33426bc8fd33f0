// Integration tests: the `mstep record` command line: exit codes, settings, -o, --.
// (see harness.hpp; expected numbers come from the header comment of each test program)
#include "harness.hpp"

using namespace mstep_it;

TEST_CASE("exit codes of the recorded command pass through mstep record", "[record]") {
  const fs::path base = test_dir();
  SECTION("an MPI program that returns 3 after MPI_Finalize") {
    const fs::path dir = base / "exit3";
    const Result rec = record(dir, 2, {prog("p2p"), "2", "3"});
    CHECK(rec.code == 3);
    // The trace itself is complete: the program did finalize.
    const Stats s = stats(dir);
    check_complete(s, 2);
    CHECK(s.j["per_rank"][0]["calls"].value("MPI_Send", 0) == 3);  // 2 pings + 1 probed
  }
  SECTION("a command that is no MPI program") {
    const fs::path dir = base / "sh";
    const Result r = run(record_argv(dir, {}, {"sh", "-c", "exit 7"}), {}, base);
    CHECK(r.code == 7);
    CHECK(r.err.find("mstep: no trace was written to") != std::string::npos);
    CHECK_FALSE(fs::exists(dir / "meta.json"));
  }
  SECTION("a command that does not exist") {
    const Result r = run(record_argv(base / "none", {}, {(base / "no-such-program").string()}), {}, base);
    CHECK(r.code == 127);
    CHECK(r.err.find("mstep: cannot run") != std::string::npos);
  }
}

// =============================================================================================
// Nonblocking

TEST_CASE("run-time settings: MSTEP_ENABLE=0 and a bad MSTEP_BUFFER record nothing", "[record][settings]") {
  const fs::path base = test_dir();
  SECTION("MSTEP_ENABLE=0: the wrappers pass through") {
    const Result r = record(base / "off", 2, {prog("p2p"), "3"}, {{"MSTEP_ENABLE", "0"}});
    // p2p checked its own results and exited 0, but nothing was recorded: record fails.
    CHECK(r.code == 1);
    CHECK(r.out.find("iprobe_calls=") != std::string::npos);
    CHECK(any_line_has(r.err, "mstep: no trace was written to ", ": MSTEP_ENABLE=0 turns recording off"));
    CHECK_FALSE(fs::exists(base / "off" / "rank-00000.mst"));
  }
  SECTION("a buffer below 4k: one line from rank 0, the run goes on unrecorded") {
    const Result r = record(base / "bad", 2, {prog("p2p"), "3"}, {}, {"--buffer", "1k"});
    CHECK(r.code == 1);  // the program exited 0; no trace was written
    // record says why: the setting libmstep refused, not the program.
    CHECK(any_line_has(r.err, "mstep: no trace was written to ",
                       ": MSTEP_BUFFER='1k' is not a size from 4k to 1024M, so libmstep did not record"));
    int lines = 0;
    for (const auto& l : lines_of(r.err))
      if (l.rfind("mstep: MSTEP_BUFFER='1k'", 0) == 0) ++lines;
    CHECK(lines == 1);
    CHECK_FALSE(fs::exists(base / "bad" / "rank-00000.mst"));
  }
  SECTION("an unknown MSTEP_WRITER: one line from rank 0, the run goes on unrecorded") {
    const Result r = record(base / "writer", 2, {prog("p2p"), "3"}, {{"MSTEP_WRITER", "background"}});
    CHECK(r.code == 1);
    CHECK(r.out.find("iprobe_calls=") != std::string::npos);
    int lines = 0;
    for (const auto& l : lines_of(r.err))
      if (l.find("mstep: MSTEP_WRITER='background' is not auto, thread or inline; recording off") == 0) ++lines;
    CHECK(lines == 1);
    CHECK(any_line_has(r.err, "mstep: no trace was written to ",
                       ": MSTEP_WRITER='background' is not auto, thread or inline, so libmstep did not record"));
    CHECK_FALSE(fs::exists(base / "writer" / "rank-00000.mst"));
  }
  SECTION("record --writer takes only auto, thread and inline") {
    const Result r = run({kMstep, "record", "-o", (base / "w2").string(), "--writer", "fast", "--", "true"});
    CHECK(r.code == 2);
    CHECK(lines_of(r.err).size() == 1);
    CHECK(r.err.find("--writer") != std::string::npos);
  }
  SECTION("a deeper call stack still names the calling line") {
    const fs::path dir = base / "deep";
    check_recorded(record(dir, 2, {prog("p2p"), "3"}, {}, {"--depth", "4"}), 2);
    const Stats s = stats(dir);
    check_complete(s, 2);
    CHECK(s.j["per_rank"][0]["calls"].value("MPI_Send", 0) == 4);
    check_all_callsites_in(dump_rank(dir, 0), "p2p.c");
  }
}

TEST_CASE("record refuses to overwrite a trace unless forced", "[record]") {
  const fs::path dir = test_dir() / "trace";
  check_recorded(record(dir, 2, {prog("p2p"), "1"}), 2);
  const Result again = record(dir, 2, {prog("p2p"), "1"});
  check_one_line_error(again, 2);
  CHECK(again.err.find("already holds a trace") != std::string::npos);
  const Result forced = record(dir, 2, {prog("p2p"), "2"}, {}, {"-f"});
  check_recorded(forced, 2);
  const Stats s = stats(dir);
  check_complete(s, 2);
  CHECK(s.j["per_rank"][0]["calls"].value("MPI_Send", 0) == 3);  // the new run: 2 pings + 1
}

TEST_CASE("record takes the command with or without -- before it", "[record]") {
  const fs::path base = test_dir();
  const Result with = run({kMstep, "record", "-o", (base / "a").string(), "--", "sh", "-c", "exit 5"}, {}, base);
  CHECK(with.code == 5);
  CHECK(with.err.find("no trace was written") != std::string::npos);
  // Without "--", the options after the program's name are the program's, not mstep's.
  const Result without = run({kMstep, "record", "-o", (base / "b").string(), "sh", "-c", "exit 6"}, {}, base);
  CHECK(without.code == 6);
  CHECK(without.err.find("no trace was written") != std::string::npos);
  const fs::path dir = base / "c";
  const Result mpi = run({kMstep, "record", "-o", dir.string(), kMpiexec, "-n", "2", prog("p2p"), "1"}, {}, base);
  check_recorded(mpi, 2);
  check_complete(stats(dir), 2);
}

// Only the "--" that ends record's own options is taken away (CLI11 needs that): the recorded
// program's own "--" reaches it, `mstep record -o DIR sh -c 'echo "$0"' -- x` prints "--".
TEST_CASE("record passes the command's own -- through", "[record]") {
  const fs::path base = test_dir();
  const Result r = run({kMstep, "record", "-o", (base / "t").string(), "sh", "-c", "echo \"$0\"", "--", "x"}, {}, base);
  CHECK(r.code == 1);  // sh exited 0, but no trace was written
  CHECK(r.err.find("mstep: no trace was written") != std::string::npos);
  CHECK(r.out == "--\n");
}

// A job that goes on after every rank has written its whole trace (as MPICH over UCX's TCP
// transport can, hung in MPI_Finalize): record says so once, after MSTEP_HUNG_AFTER seconds, and
// nothing of the kind when the job ends in time.
TEST_CASE("record says once when a job goes on after its whole trace is written", "[record]") {
  const fs::path base = test_dir();
  const std::string job = kMpiexec + " -n 2 " + prog("p2p") + " 1";
  const Result late = run({kMstep, "record", "-o", (base / "late").string(), "--", "sh", "-c", job + " && sleep 3"},
                          {{"MSTEP_HUNG_AFTER", "1"}}, base);
  INFO(late.err);
  CHECK(late.code == 0);
  const std::string note =
      "mstep: every rank has written its whole trace, but the job has not ended 1 s later: it may hang in "
      "MPI_Finalize (MPICH over UCX's TCP transport does, openucx/ucx#8738); the trace is usable, and Ctrl-C ends "
      "the job\n";
  CHECK(late.err.find(note) != std::string::npos);
  CHECK(late.err.find(note) == late.err.rfind(note));  // once
  check_complete(stats(base / "late"), 2);
  const Result prompt = run({kMstep, "record", "-o", (base / "prompt").string(), "--", "sh", "-c", job},
                            {{"MSTEP_HUNG_AFTER", "1"}}, base);
  CHECK(prompt.code == 0);
  CHECK(prompt.err.find("has not ended") == std::string::npos);
  const Result bad = run({kMstep, "record", "-o", (base / "bad").string(), "--", "sh", "-c", job},
                         {{"MSTEP_HUNG_AFTER", "soon"}}, base);
  CHECK(bad.code == 2);
  CHECK(bad.err == "mstep: MSTEP_HUNG_AFTER='soon' is not a number of seconds above 0\n");
  CHECK_FALSE(fs::exists(base / "bad"));
}

// MSTEP_COMPRESS=later: frames written as stored zstd frames (a copy instead of compressing on the
// application's thread); each rank compresses its own file in MPI_Finalize, and `mstep record` (or
// `mstep compress`) those of ranks that ended without it.
TEST_CASE("frames compressed after the run: by each rank at MPI_Finalize, by record or mstep compress for the others", "[record][compress]") {
  const fs::path base = test_dir();
  SECTION("each rank compresses its own file at MPI_Finalize: nothing left for record") {
    const fs::path dir = base / "later";
    const Result r = record(dir, 2, {prog("p2p"), "3"}, {}, {"--compress", "later"});
    CHECK(r.code == 0);
    CHECK_FALSE(any_line_has(r.err, "mstep: compressed "));
    CHECK(read_meta(dir).at("compress") == "later");
    const Stats s = stats(dir);
    check_complete(s, 2);
    CHECK(s.j.at("compress") == "later");
    CHECK(s.j["per_rank"][0]["calls"].value("MPI_Send", 0) == 4);  // 3 pings + 1 probed
    const Result again = run({kMstep, "compress", dir.string()});
    CHECK(again.code == 0);
    CHECK(again.out == "nothing to compress in 2 rank files\n");
  }
  SECTION("auto: later where the frames are written on the ranks' own thread, with or without record") {
    const fs::path dir = base / "auto";
    const Result r = record(dir, 2, {prog("p2p"), "3"});
    CHECK(r.code == 0);
    const json meta = read_meta(dir);
    CHECK(meta.at("compress") == (meta.at("writer") == "inline" ? "later" : "now"));
    const fs::path pre = base / "auto-preloaded";
    CHECK(plain(base, 2, {prog("p2p"), "3"}, {{"LD_PRELOAD", kLib}, {"MSTEP_DIR", pre.string()}}).code == 0);
    const json pre_meta = read_meta(pre);
    CHECK(pre_meta.at("compress") == (pre_meta.at("writer") == "inline" ? "later" : "now"));
    CHECK(run({kMstep, "compress", pre.string()}).out == "nothing to compress in 2 rank files\n");
  }
  SECTION("ranks that end without MPI_Finalize keep their frames stored, readable; record compresses them") {
    // Hydra's -disable-auto-cleanup lets the second rank exit on its own too.
    const fs::path dir = base / "unfinished";
    const Result r = record(dir, 2, {"-disable-auto-cleanup", prog("no_finalize")}, {}, {"--compress", "later"});
    CHECK(any_line_has(r.err, "mstep: compressed ", " frames of 2 rank files: "));
    const Stats s = stats(dir);
    CHECK(s.j["per_rank"][0]["calls"].value("MPI_Send", 0) == 3);
    CHECK(run({kMstep, "compress", dir.string()}).out == "nothing to compress in 2 rank files\n");
  }
  SECTION("a preloaded run without MPI_Finalize: readable as it is, then compressed by mstep compress") {
    const fs::path dir = base / "preloaded";
    plain(base, 2, {"-disable-auto-cleanup", prog("no_finalize")},
          {{"LD_PRELOAD", kLib}, {"MSTEP_DIR", dir.string()}, {"MSTEP_COMPRESS", "later"}});
    const auto stored_bytes = fs::file_size(dir / "rank-00000.mst");
    const Stats before = stats(dir);
    CHECK(before.j["per_rank"][0]["calls"].value("MPI_Send", 0) == 3);
    const Result c = run({kMstep, "compress", dir.string()});
    CHECK(c.code == 0);
    CHECK_THAT(c.out, Catch::StartsWith("compressed ") && Catch::Contains(" frames of 2 rank files: "));
    CHECK(fs::file_size(dir / "rank-00000.mst") < stored_bytes);
    const Stats after = stats(dir);
    CHECK(after.j["per_rank"][0]["calls"] == before.j["per_rank"][0]["calls"]);
    CHECK(after.j["per_rank"][1]["events"] == before.j["per_rank"][1]["events"]);
    CHECK(after.j["per_rank"][1]["status"] == before.j["per_rank"][1]["status"]);
  }
  SECTION("bad input: a wrong setting, a directory that is not a trace") {
    const Result r = run({kMstep, "record", "-o", (base / "c2").string(), "--compress", "soon", "--", "true"});
    CHECK(r.code == 2);
    CHECK(lines_of(r.err).size() == 1);
    CHECK(r.err.find("--compress") != std::string::npos);
    const Result missing = run({kMstep, "compress", (base / "no-such-trace").string()});
    CHECK(missing.code == 2);
    CHECK(missing.err == "mstep: " + (base / "no-such-trace").string() + ": no such trace directory\n");
    fs::create_directories(base / "empty");
    const Result empty = run({kMstep, "compress", (base / "empty").string()});
    CHECK(empty.code == 1);
    CHECK(empty.err == "mstep: " + (base / "empty").string() + ": no rank files (rank-*.mst)\n");
  }
}
