// The report's step rows (model/analysis/report.hpp, StepRow): a communicator of kListedMembers or
// more that a step heard whole is named by its member list, not listed in the row; a smaller one
// is listed as before. The in-memory and the streamed report give the same rows.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "model/analysis/report.hpp"
#include "model/trace/trace_dir.hpp"
#include "trace_builders.hpp"

using namespace mstep;
using mstep::test::ev;
namespace fs = std::filesystem;

namespace {

// n ranks: MPI_Init, an Allreduce of 8 bytes on MPI_COMM_WORLD, MPI_Finalize.
fs::path allreduce_trace(int n) {
  const fs::path dir = fs::temp_directory_path() / "mstep-unit" / ("rows-" + std::to_string(n) + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (int r = 0; r < n; ++r) {
    Event allreduce = ev(Op::Allreduce, kNoPeer, 20, 30 + static_cast<std::uint64_t>(r));
    allreduce.send_bytes = allreduce.recv_bytes = 8;
    RankTrace t = test::rank(r, n, {ev(Op::Init, kNoPeer, 0, 10), allreduce, ev(Op::Finalize, kNoPeer, 520, 530)});
    t.header.clock_kind = 1;
    t.event_thread.assign(t.events.size(), 0);
    t.clocks.push_back(ClockSync{ClockSync::AtInit, 10, 10, 0, 100});
    t.clocks.push_back(ClockSync{ClockSync::AtFinalize, 530, 530, 0, 100});
    write_rank_trace((dir / rank_file_name(r)).string(), t, 2);
  }
  std::ofstream(dir / kMetaFileName) << R"({"format_version": )" << kTraceVersion << R"(, "ranks": )" << n
                                     << R"(, "clock": "monotonic", "ticks_per_second": 1e9, "complete": true})";
  return dir;
}

void check_rows(const std::vector<model::StepRow>& rows, int n) {
  REQUIRE(rows.size() == static_cast<std::size_t>(2 * n));  // the Allreduce's step and MPI_Finalize's
  std::vector<std::int32_t> world(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) world[static_cast<std::size_t>(i)] = i;
  for (const model::StepRow& row : rows) {
    INFO("rank " << row.rank << " step " << row.step);
    if (row.step == 2) {
      CHECK(row.partners == std::vector<std::int32_t>{row.rank});
      CHECK(row.partners_all_of.empty());
    } else if (n >= static_cast<int>(kListedMembers)) {
      CHECK(row.partners == std::vector<std::int32_t>{row.rank});
      CHECK(row.partners_all_of.vector() == world);
    } else {
      CHECK(row.partners == world);
      CHECK(row.partners_all_of.empty());
    }
  }
}

}  // namespace

TEST_CASE("step rows: a world of 64 is named, of 63 listed, whole and streamed alike", "[report][steps]") {
  for (const int n : {63, 64}) {
    INFO(n << " ranks");
    const fs::path dir = allreduce_trace(n);
    const model::Report whole = model::build_report(load_trace_dir(dir.string()), nullptr);
    CHECK(whole.problems.empty());
    check_rows(whole.steps, n);
    const TraceDir meta = load_trace_dir(dir.string(), std::nullopt, {}, true);
    REQUIRE(model::can_stream(meta));
    const model::Report streamed = model::build_report_streamed(meta, nullptr);
    check_rows(streamed.steps, n);
    fs::remove_all(dir);
  }
}
