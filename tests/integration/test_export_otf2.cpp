// mstep export --otf2: an OTF2 archive, read back by OTF2's own otf2-print (Debian's otf2-tools).
// Checked against the trace: an Enter/Leave per call, every send's receive found on the location
// otf2-print names through the communicator's group (so partners are communicator ranks), the
// collectives with their roots, and the request ids of nonblocking calls completed on their rank.
#include <map>
#include <regex>

#include "harness.hpp"

using namespace mstep_it;

namespace {

struct Otf2Print {
  std::map<std::string, int> kinds;  // first column -> lines
  // (from location, to location, communicator, tag, bytes) -> sends minus receives
  std::map<std::tuple<int, int, std::string, int, long>, int> balance;
  std::map<std::pair<int, long>, int> requests;  // (location, request) -> opened minus completed
  std::vector<std::string> collective_ends;
  int flushes = 0;  // Enter of mstep's trace flushes (not MPI calls: mstep stats does not count them)
  int mpi_enters() const { return kinds.at("ENTER") - flushes; }
};

// Location -> rank, from the definitions' LOCATION lines ("Group: "rank R" <R>").
std::map<int, int> rank_of_location(const fs::path& archive) {
  const Result defs = run({"otf2-print", "-G", (archive / "traces.otf2").string()});
  std::map<int, int> out;
  const std::regex loc(R"re(^LOCATION +(\d+) .*Group: "rank (\d+)")re");
  std::smatch m;
  for (const std::string& line : lines_of(defs.out))
    if (std::regex_search(line, m, loc)) out[std::stoi(m[1])] = std::stoi(m[2]);
  return out;
}

Otf2Print print(const fs::path& archive) {
  const Result r = run({"otf2-print", (archive / "traces.otf2").string()});
  REQUIRE(r.code == 0);
  const std::map<int, int> rank_of = rank_of_location(archive);
  auto rank = [&](const std::string& location) { return rank_of.at(std::stoi(location)); };
  Otf2Print p;
  const std::regex send(R"re(^MPI_I?SEND +(\d+) +\d+ +Receiver: \d+ \("rank (\d+)" <\d+>\), Communicator: "([^"]+)" <\d+>, Tag: (\d+), Length: (\d+)(, Request: (\d+))?)re");
  const std::regex recv(R"re(^MPI_I?RECV +(\d+) +\d+ +Sender: \d+ \("rank (\d+)" <\d+>\), Communicator: "([^"]+)" <\d+>, Tag: (\d+), Length: (\d+)(, Request: (\d+))?)re");
  const std::regex request(R"re(^(MPI_ISEND_COMPLETE|MPI_IRECV_REQUEST) +(\d+) +\d+ +Request: (\d+))re");
  std::smatch m;
  for (const std::string& line : lines_of(r.out)) {
    const auto space = line.find(' ');
    ++p.kinds[line.substr(0, space)];
    if (line.rfind("ENTER", 0) == 0 && line.find("Region: \"mstep_flush\"") != std::string::npos) ++p.flushes;
    if (std::regex_search(line, m, send)) {
      ++p.balance[{rank(m[1]), std::stoi(m[2]), m[3], std::stoi(m[4]), std::stol(m[5])}];
      if (m[7].matched) ++p.requests[{std::stoi(m[1]), std::stol(m[7])}];
    } else if (std::regex_search(line, m, recv)) {
      --p.balance[{std::stoi(m[2]), rank(m[1]), m[3], std::stoi(m[4]), std::stol(m[5])}];
      if (m[7].matched) --p.requests[{std::stoi(m[1]), std::stol(m[7])}];
    } else if (std::regex_search(line, m, request)) {
      const int sign = m[1] == "MPI_IRECV_REQUEST" ? 1 : -1;
      p.requests[{std::stoi(m[2]), std::stol(m[3])}] += sign;
    } else if (line.rfind("MPI_COLLECTIVE_END", 0) == 0) {
      p.collective_ends.push_back(line);
    }
  }
  return p;
}

long long total_calls(const fs::path& dir) {
  const Stats st = stats(dir);
  long long calls = 0;
  for (const json& rank : st.j.at("per_rank"))
    for (const auto& [name, n] : rank.at("calls").items()) calls += n.get<long long>();
  return calls;
}

}  // namespace

TEST_CASE("mstep export --otf2 of communicators in other orders: otf2-print pairs every send with its receive") {
  const fs::path dir = test_dir() / "comms";
  check_recorded(record(dir, 4, {prog("comms")}), 4);
  const fs::path archive = test_dir() / "otf2";
  const Result r = run({kMstep, "export", dir.string(), "--otf2", archive.string()});
  REQUIRE(r.code == 0);
  const Otf2Print p = print(archive);
  const long long calls = total_calls(dir);
  CHECK(p.mpi_enters() == calls);
  CHECK(p.kinds.at("LEAVE") == p.kinds.at("ENTER"));
  const json rep = mstep_json("report", dir, {}, no_default_params(test_dir()));
  CHECK(p.kinds.at("MPI_SEND") + (p.kinds.count("MPI_ISEND") ? p.kinds.at("MPI_ISEND") : 0) == rep.at("messages").get<int>());
  for (const auto& [key, n] : p.balance) {
    INFO("from " << std::get<0>(key) << " to " << std::get<1>(key) << " on " << std::get<2>(key) << " tag "
                 << std::get<3>(key));
    CHECK(n == 0);
  }
  // Step 5 of comms.c: a Bcast of 8 ints from world rank 3, rank 0 of its communicator.
  int bcasts = 0;
  for (const std::string& line : p.collective_ends)
    if (line.find("Operation: BCAST") != std::string::npos) {
      ++bcasts;
      CHECK(line.find("Root: 0 (\"rank 3\" <3>)") != std::string::npos);
    }
  CHECK(bcasts == 4);
  const Result defs = run({"otf2-print", "-G", (archive / "traces.otf2").string()});
  CHECK(defs.out.find("COMM                                   0  Name: \"MPI_COMM_WORLD\"") != std::string::npos);
  CHECK(defs.out.find("Ticks per Seconds: 1000000000") != std::string::npos);
  CHECK(r.out.find("mstep: wrote " + archive.string() + "/traces.otf2: 4 ranks, ") == 0);
}

TEST_CASE("mstep export --otf2 of nonblocking calls: every request opened and completed on its rank") {
  const fs::path dir = test_dir() / "nonblocking";
  check_recorded(record(dir, 2, {prog("nonblocking")}), 2);
  const fs::path archive = test_dir() / "otf2";
  REQUIRE(run({kMstep, "export", dir.string(), "--otf2", archive.string()}).code == 0);
  const Otf2Print p = print(archive);
  // nonblocking.c: 12 Irecv, 11 Isend and 1 Issend per rank.
  CHECK(p.kinds.at("MPI_ISEND") == 2 * 12);
  CHECK(p.kinds.at("MPI_IRECV_REQUEST") == 2 * 12);
  CHECK(p.kinds.at("MPI_IRECV") == 2 * 12);
  CHECK(p.kinds.at("MPI_ISEND_COMPLETE") == 2 * 12);
  for (const auto& [key, n] : p.requests) {
    INFO("location " << key.first << " request " << key.second);
    CHECK(n == 0);
  }
  for (const auto& [key, n] : p.balance) CHECK(n == 0);
  CHECK(p.mpi_enters() == total_calls(dir));
}

TEST_CASE("mstep export --otf2 of MPI_THREAD_MULTIPLE: a location per thread, every send paired with its receive") {
  const fs::path work = test_dir();
  const fs::path dir = work / "threads";
  if (!record_threads(dir, 10)) return;
  const fs::path archive = work / "otf2";
  REQUIRE(run({kMstep, "export", dir.string(), "--otf2", archive.string()}).code == 0);
  // threads.c: the main thread and 2 ping-pong threads per rank, each of the latter 10 sends and
  // 10 receives of 8 bytes with its own tag.
  const std::map<int, int> rank_of = rank_of_location(archive);
  CHECK(rank_of.size() == 6);
  CHECK(rank_of.at(0) == 0);
  CHECK(rank_of.at(1) == 1);
  const Otf2Print p = print(archive);
  CHECK(p.kinds.at("MPI_SEND") == 2 * 2 * 10);
  CHECK(p.kinds.at("MPI_RECV") == 2 * 2 * 10);
  for (const auto& [key, n] : p.balance) CHECK(n == 0);
  CHECK(p.mpi_enters() == total_calls(dir));
}

TEST_CASE("mstep export --otf2 refuses to overwrite an archive and names what it cannot write") {
  const fs::path dir = test_dir() / "ring";
  REQUIRE(run({kMstep, "synth", "-o", dir.string(), "--ranks", "3", "--events", "300"}).code == 0);
  const fs::path archive = test_dir() / "otf2";
  REQUIRE(run({kMstep, "export", dir.string(), "--otf2", archive.string()}).code == 0);
  const Result again = run({kMstep, "export", dir.string(), "--otf2", archive.string()});
  check_one_line_error(again, 1);
  CHECK(again.err == "mstep: " + archive.string() + " already holds an OTF2 archive (traces.otf2): remove it first\n");
  const Result bad = run({kMstep, "export", dir.string(), "--otf2", "/proc/nonexistent/otf2"});
  check_one_line_error(bad, 1);
  CHECK(bad.err.rfind("mstep: cannot write /proc/nonexistent/otf2: ", 0) == 0);
  check_one_line_error(run({kMstep, "export", dir.string(), "--otf2", "x", "--goal", "y"}));
}
