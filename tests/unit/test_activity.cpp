// Where each rank's time went, by pixel (model/analysis/activity.hpp), on two ranks worked by
// hand: a late sender, a wait at a barrier, M-step ends, rows that share ranks.
#include <catch2/catch.hpp>

#include <filesystem>
#include <numeric>
#include <string>

#include <unistd.h>

#include "model/analysis/activity.hpp"
#include "model/trace/trace_dir.hpp"
#include "trace_builders.hpp"

using namespace mstep;
using mstep::test::ev;
namespace fs = std::filesystem;

namespace {

// rank 0: Init [0,10], computes, Send to 1 [100,110], computes, Barrier [500,520], Finalize [520,530]
// rank 1: Init [0,10], Recv from 0 [20,120] (the message was sent at 100: 80 ns late sender),
//         computes, Barrier [300,520] (rank 0 enters at 500: 200 ns of wait), Finalize [520,530]
// In ns after zero (the MPI_Init exit, 10) on a picture of 520 ns, 52 bins of 10 ns:
//   rank 0: computation 90 + 390 = 480; MPI 10 + 20 + 10 = 40; wait 0
//   rank 1: computation 10 + 180 = 190; MPI 20 + 20 + 10 = 50; wait 80 + 200 = 280
//   M-steps end: rank 0 at 510 (the barrier) and 520 (Finalize); rank 1 at 110 (its receive, as the
//   barrier sends), 510 and 520.
std::vector<RankTrace> two_ranks() {
  std::vector<RankTrace> traces;
  traces.push_back(test::rank(0, 2, {ev(Op::Init, kNoPeer, 0, 10), ev(Op::Send, 1, 100, 110),
                                     ev(Op::Barrier, kNoPeer, 500, 520), ev(Op::Finalize, kNoPeer, 520, 530)}));
  traces.push_back(test::rank(1, 2, {ev(Op::Init, kNoPeer, 0, 10), ev(Op::Recv, 0, 20, 120),
                                     ev(Op::Barrier, kNoPeer, 300, 520), ev(Op::Finalize, kNoPeer, 520, 530)}));
  return traces;
}

model::ActivityPicture picture(int max_rows, double ends_per_bin = 1.0 / 3, fs::path* keep = nullptr) {
  const std::vector<RankTrace> traces = two_ranks();
  // Unique per process and call: ctest runs the test cases of this file side by side.
  static int calls = 0;
  const fs::path dir = fs::temp_directory_path() / "mstep-unit" /
                       ("activity-" + std::to_string(::getpid()) + "-" + std::to_string(++calls));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::vector<std::string> files;
  std::vector<RankTrace> metas;
  for (std::size_t r = 0; r < traces.size(); ++r) {
    files.push_back((dir / rank_file_name(static_cast<int>(r))).string());
    write_rank_trace(files.back(), traces[r], 2);
    metas.push_back(read_rank_metadata(files.back()));
  }
  const std::vector<const RankTrace*> ptrs{&metas[0], &metas[1]};
  model::ActivityOptions o;
  o.width = 52;
  o.max_rows = max_rows;
  o.span_s = 520e-9;
  o.max_step_ends_per_bin = ends_per_bin;
  model::ActivityPicture p = model::measure_activity(ptrs, files, o);
  if (keep) *keep = dir;
  else fs::remove_all(dir);
  return p;
}

double row_sum(const model::ActivityPicture& p, const std::vector<float>& kind, int row) {
  double s = 0;
  for (int b = 0; b < p.width; ++b) s += kind[p.at(row, b)];
  return s;
}

}  // namespace

TEST_CASE("activity: computation, MPI and waits per rank and pixel, worked by hand", "[activity]") {
  const model::ActivityPicture p = picture(128);
  REQUIRE(p.rows == 2);
  CHECK(p.ranks_per_row == 1);
  CHECK(p.records == 8);
  CHECK(p.zero_s == Approx(10e-9));
  CHECK(row_sum(p, p.compute, 0) == Approx(480e-9));
  CHECK(row_sum(p, p.mpi, 0) == Approx(40e-9));
  CHECK(row_sum(p, p.wait, 0) == Approx(0).margin(1e-15));
  CHECK(row_sum(p, p.compute, 1) == Approx(190e-9));
  CHECK(row_sum(p, p.mpi, 1) == Approx(50e-9));
  CHECK(row_sum(p, p.wait, 1) == Approx(280e-9));
  // Pixel by pixel: rank 1 waits in bins 1..8 ([10, 90) ns) for the late sender, all of each bin.
  for (int b = 1; b <= 8; ++b) CHECK(p.wait[p.at(1, b)] == Approx(10e-9));
  CHECK(p.wait[p.at(1, 9)] == Approx(0).margin(1e-15));
  CHECK(p.mpi[p.at(1, 9)] == Approx(10e-9));      // [90, 100): the message has arrived
  CHECK(p.compute[p.at(0, 9)] == Approx(0).margin(1e-15));
  CHECK(p.mpi[p.at(0, 9)] == Approx(10e-9));      // rank 0's Send [90, 100)
  CHECK(p.steps == std::vector<std::uint64_t>{2, 3});
  CHECK(p.steps_drawn == std::vector<bool>{true, true});
  REQUIRE(p.step_ends[1].size() == 3);
  CHECK(p.step_ends[1][0] == Approx(110e-9));
  CHECK(p.step_ends[1][1] == Approx(510e-9));
  CHECK(p.step_ends[0][0] == Approx(510e-9));
}

TEST_CASE("activity: ranks share rows beyond max_rows, and crowded step ends are not kept", "[activity]") {
  const model::ActivityPicture one = picture(1);
  REQUIRE(one.rows == 1);
  CHECK(one.ranks_per_row == 2);
  CHECK(row_sum(one, one.compute, 0) == Approx(670e-9));
  CHECK(row_sum(one, one.wait, 0) == Approx(280e-9));
  CHECK(one.steps == std::vector<std::uint64_t>{5});
  CHECK(one.step_ends[0].size() == 5);
  // At most 52 / 26 = 2 step ends a row: rank 1's 3 are counted, not kept.
  const model::ActivityPicture crowded = picture(128, 1.0 / 26);
  CHECK(crowded.steps == std::vector<std::uint64_t>{2, 3});
  CHECK(crowded.steps_drawn == std::vector<bool>{true, false});
  CHECK(crowded.step_ends[1].empty());
}

TEST_CASE("activity: the run as the LogGPS replay predicts it, worked by hand with free messages", "[activity]") {
  fs::path dir;
  model::ActivityPicture p = picture(128, 1.0 / 3, &dir);
  const TraceDir trace = load_trace_dir(dir.string(), std::nullopt, {}, true);
  model::CalibrationParams params;
  params.loggps = model::LogGPSParams{};  // L = o = g = G = 0: a message costs nothing
  model::add_loggps_prediction(p, trace, params);
  fs::remove_all(dir);
  // After zero (10): rank 0 computes 90, sends at once, computes 390 and meets rank 1 in the
  // barrier at 480, which ends then; rank 1 computes 10, receives from 10 until the message is
  // sent at 90, computes 180, enters the barrier at 270 and waits in it until 480.
  REQUIRE(p.predicted_compute.size() == p.compute.size());
  CHECK(row_sum(p, p.predicted_compute, 0) == Approx(480e-9));
  CHECK(row_sum(p, p.predicted_mpi, 0) == Approx(0).margin(1e-15));
  CHECK(row_sum(p, p.predicted_compute, 1) == Approx(190e-9));
  CHECK(row_sum(p, p.predicted_mpi, 1) == Approx(290e-9));
  CHECK(p.predicted_mpi[p.at(1, 30)] == Approx(10e-9));  // [300, 310): in the barrier
  CHECK(p.predicted_mpi[p.at(1, 49)] == Approx(0).margin(1e-15));  // [490, 500): after Finalize's entry
}
