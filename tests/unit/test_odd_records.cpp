// Records libmstep never writes, as a damaged or hand-made trace can hold them: every analysis
// ends with a result, none indexes a step that does not exist. Found by tests/fuzz/fuzz_model.cpp.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "model/analysis/report.hpp"
#include "model/params/params.hpp"
#include "model/trace/matching.hpp"
#include "model/trace/trace_dir.hpp"
#include "trace_builders.hpp"

using namespace mstep;
using mstep::test::ev;
namespace fs = std::filesystem;

TEST_CASE("a collective record flagged incomplete is MPI time only, not a collective call", "[matching][odd]") {
  Event barrier = ev(Op::Barrier, kNoPeer, 10, 20);
  CHECK(is_collective_call(barrier));
  barrier.flags = kIncomplete;
  CHECK_FALSE(is_collective_call(barrier));
}

// Rank 0's first call after MPI_Init is a Barrier flagged incomplete: the step tracker charges it
// as MPI time of step 1 and closes nothing. The streamed step table took it for the collective that
// closed the step before step 1 (index 2^32 - 1) and allocated entries up to it: gigabytes.
TEST_CASE("report, whole and streamed, of a trace with an incomplete collective before any step closed", "[report][odd]") {
  std::vector<RankTrace> traces;
  Event odd = ev(Op::Barrier, kNoPeer, 20, 30);
  odd.flags = kIncomplete;
  traces.push_back(test::rank(0, 2, {ev(Op::Init, kNoPeer, 0, 10), odd, ev(Op::Send, 1, 100, 110),
                                     ev(Op::Finalize, kNoPeer, 520, 530)}));
  traces.push_back(test::rank(1, 2, {ev(Op::Init, kNoPeer, 0, 10), ev(Op::Recv, 0, 20, 120),
                                     ev(Op::Finalize, kNoPeer, 520, 530)}));
  const fs::path dir = fs::temp_directory_path() / "mstep-unit" / ("odd-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (RankTrace& t : traces) {
    t.header.clock_kind = 1;
    t.event_thread.assign(t.events.size(), 0);
    t.clocks.push_back(ClockSync{ClockSync::AtInit, 10, 10, 0, 100});
    t.clocks.push_back(ClockSync{ClockSync::AtFinalize, 530, 530, 0, 100});
    write_rank_trace((dir / rank_file_name(t.header.rank)).string(), t, 2);
  }
  std::ofstream(dir / kMetaFileName) << R"({"format_version": )" << kTraceVersion
                                     << R"(, "ranks": 2, "clock": "monotonic", "ticks_per_second": 1e9, "complete": true})";
  const model::CalibrationParams params = model::parse_params(
      R"({"L": 2e-7, "o": 2e-7, "Os": 0, "Or": 0, "g": 2e-7, "Gs": 1e-10, "Gl": 1e-10, "s": 8256, "S": 8256,
          "mpm": {"g": 1e-10, "L": 1e-6}})",
      "test");
  const model::Report whole = model::build_report(load_trace_dir(dir.string()), &params);
  const TraceDir meta = load_trace_dir(dir.string(), std::nullopt, {}, true);
  REQUIRE(model::can_stream(meta));
  const model::Report streamed = model::build_report_streamed(meta, &params);
  CHECK(whole.actual_s == streamed.actual_s);
  CHECK(whole.actual_s == Approx(510e-9));
  CHECK(streamed.step_count == whole.step_count);
  CHECK(streamed.messages == 1);
  for (const auto& m : streamed.models) {
    INFO(m.name);
    if (m.available) CHECK(std::isfinite(m.predicted_s));
  }
  fs::remove_all(dir);
}
