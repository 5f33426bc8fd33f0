// Integration tests: the short reliability suite. Each fault (a full disk, a read-only directory,
// signals, MPI_Abort, no MPI_Finalize) ends with a readable trace or a clear error, and
// `mstep record` exits with the right code.
// (see harness.hpp; expected numbers come from the header comment of each test program)
#include "harness.hpp"

#include <sys/mount.h>
#include <sys/resource.h>

using namespace mstep_it;

namespace {

// A directory on a 64 KiB tmpfs (as root), unmounted at the end of the test.
struct SmallDisk {
  fs::path dir;
  bool mounted = false;
  explicit SmallDisk(const fs::path& d) : dir(d) {
    fs::create_directories(dir);
    mounted = ::geteuid() == 0 && ::mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=64k") == 0;
  }
  ~SmallDisk() {
    if (mounted) ::umount(dir.c_str());
  }
};

bool any_line_has(const std::string& text, const std::string& a, const std::string& b = "") {
  for (const auto& l : lines_of(text))
    if (l.find(a) != std::string::npos && l.find(b) != std::string::npos) return true;
  return false;
}

}  // namespace

// killed.c, 20000 rounds, no pause: 40 thousand calls per rank, some 200 KB of trace per rank.
TEST_CASE("a full disk: each rank says so, the trace is marked incomplete, record fails", "[faults]") {
  const fs::path base = test_dir();
  SmallDisk disk(base / "disk");
  const fs::path dir = disk.dir / "trace";
  const std::vector<std::string> argv = record_argv(dir, {"--buffer", "8k"},
                                              {kMpiexec, "-n", "2", prog("killed"), "100", "0", "20000"});
  if (!disk.mounted) {
    // A file size limit (RLIMIT_FSIZE) is no substitute: MPICH's shared-memory transport needs
    // files of its own and fails in MPI_Init.
    WARN("full disk case skipped: mounting a tmpfs needs root");
    return;
  }
  const std::string why = "No space left on device";
  const Result r = run(argv, {}, base);
  CHECK_FALSE(r.timed_out);
  CHECK(r.code == 1);  // the program itself exits 0
  for (const char* rank : {"mstep: rank 0: cannot write ", "mstep: rank 1: cannot write "}) {
    INFO(rank);
    CHECK(any_line_has(r.err, rank, why));
  }
  CHECK(any_line_has(r.err, "mstep: incomplete trace of 2 ranks in "));
  CHECK_FALSE(any_line_has(r.err, "mstep: trace of 2 ranks"));
  CHECK_FALSE(fs::exists(dir / "meta.json.tmp"));
  // What reached the disk is readable and said to be incomplete.
  const Stats s = stats(dir);
  CHECK(s.r.code == 1);
  CHECK(s.j.at("complete") == false);
  REQUIRE(s.j.at("per_rank").size() == 2);
  for (int rank = 0; rank < 2; ++rank) {
    INFO("rank " << rank);
    CHECK(s.j["per_rank"][rank].at("status") != "complete");
    CHECK(s.j["per_rank"][rank].at("calls").value("MPI_Send", 0) > 100);
  }
}
