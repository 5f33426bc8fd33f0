// mstep export --goal: a LogGOPSim GOAL schedule of a trace. Checked for what LogGOPSim needs:
// every send has its receive (same count, bytes and tag per pair), every label is defined before
// a dependency names it, and the counts are the trace's (matched messages, collective algorithm).
#include <map>
#include <regex>
#include <set>

#include "harness.hpp"

using namespace mstep_it;

namespace {

struct Goal {
  int num_ranks = -1;
  std::map<std::tuple<int, int, long, long>, int> sends, recvs;  // (from, to, bytes, tag) -> count
  int calcs = 0;
  bool labels_ok = true;
};

Goal parse_goal(const fs::path& file) {
  Goal g;
  std::ifstream in(file);
  std::string line;
  int rank = -1;
  std::set<std::string> labels;
  const std::regex op(R"((l\d+): (send|recv) (\d+)b (to|from) (\d+) tag (\d+))");
  const std::regex calc(R"((l\d+): calc (\d+))");
  const std::regex dep(R"((l\d+) (requires|irequires) (l\d+))");
  std::smatch m;
  while (std::getline(in, line)) {
    if (line.rfind("num_ranks ", 0) == 0) g.num_ranks = std::stoi(line.substr(10));
    else if (line.rfind("rank ", 0) == 0) rank = std::stoi(line.substr(5)), labels.clear();
    else if (std::regex_match(line, m, op)) {
      labels.insert(m[1]);
      const int peer = std::stoi(m[5]);
      const auto key = m[2] == "send" ? std::make_tuple(rank, peer, std::stol(m[3]), std::stol(m[6]))
                                      : std::make_tuple(peer, rank, std::stol(m[3]), std::stol(m[6]));
      ++(m[2] == "send" ? g.sends : g.recvs)[key];
    } else if (std::regex_match(line, m, calc)) {
      labels.insert(m[1]);
      ++g.calcs;
    } else if (std::regex_match(line, m, dep)) {
      g.labels_ok = g.labels_ok && labels.count(m[1]) && labels.count(m[3]);
    } else if (line != "}" && !line.empty()) {
      FAIL("unexpected GOAL line: " << line);
    }
  }
  return g;
}

}  // namespace

TEST_CASE("mstep export --goal: every message of a synthetic run, collectives as MPICH's algorithm") {
  const fs::path dir = test_dir() / "random";
  REQUIRE(run({kMstep, "synth", "-o", dir.string(), "--ranks", "8", "--events", "4000", "--pattern", "random"}).code == 0);
  const fs::path goal = test_dir() / "run.goal";
  const Result r = run({kMstep, "export", dir.string(), "--goal", goal.string()});
  REQUIRE(r.code == 0);
  CHECK(r.err.empty());
  const Goal g = parse_goal(goal);
  CHECK(g.num_ranks == 8);
  CHECK(g.labels_ok);
  CHECK(g.sends == g.recvs);  // LogGOPSim matches each send with one receive
  int sends = 0;
  for (const auto& [k, n] : g.sends) sends += n;
  // The report's matched messages, plus the decomposed collectives: the barrier on 8 ranks is a
  // dissemination of 3 rounds (24 messages) and each 8-byte Allreduce recursive doubling (24).
  const json rep = mstep_json("report", dir, {}, no_default_params(test_dir()));
  const int allreduces = static_cast<int>(rep.at("mpi_time").at("MPI_Allreduce").at("calls").get<int>() / 8);
  CHECK(sends == rep.at("messages").get<int>() + 24 + 24 * allreduces);
  CHECK(r.out.find("mstep: wrote " + goal.string() + ": 8 ranks, " + std::to_string(sends) + " sends (" +
                   std::to_string(24 + 24 * allreduces) + " of them in collectives)") == 0);
}

TEST_CASE("mstep export --goal names the ranks that were cut short, and refuses what it cannot write") {
  const fs::path dir = test_dir() / "ring";
  REQUIRE(run({kMstep, "synth", "-o", dir.string(), "--ranks", "3", "--events", "300"}).code == 0);
  fs::remove(dir / "rank-00002.mst");
  const Result r = run({kMstep, "export", dir.string(), "--goal", (test_dir() / "x.goal").string()});
  CHECK(r.code == 0);
  CHECK(r.err == "mstep: warning: rank 2 did not reach MPI_Finalize (or have no trace): their schedules end early\n");
  const Result bad = run({kMstep, "export", dir.string(), "--goal", "/nonexistent/x.goal"});
  check_one_line_error(bad, 1);
  CHECK(bad.err == "mstep: cannot write /nonexistent/x.goal\n");
  check_one_line_error(run({kMstep, "export", (test_dir() / "none").string(), "--goal", "x.goal"}), 1);
}
