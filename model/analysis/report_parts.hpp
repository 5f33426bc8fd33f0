// What build_report and build_report_streamed share: a model's row, and how many unmatched
// messages the problems list names one by one.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

#include "model/analysis/exact_sum.hpp"
#include "model/analysis/report.hpp"
#include "model/cost/bspwb.hpp"
#include "model/trace/timeline.hpp"

namespace mstep::model::detail {

inline constexpr std::size_t kMaxUnmatchedShown = 10;

// Calls, bytes and measured time per MPI function, time in MPI and in the tool, record by record
// in any order of ranks: the seconds are summed exactly (ExactSeconds) and written by finish().
class MeasuredTimes {
 public:
  void add(Report& rep, const Timeline& tl, int rank, const Event& e) {
    const auto op = static_cast<std::size_t>(e.op);
    FunctionTime& f = rep.mpi[op];
    f.bytes += e.send_bytes + e.recv_bytes;
    if (e.continuation()) return;
    const double d = tl.duration(rank, e.t_exit - e.t_enter);
    ++f.calls;
    seconds_[op].add(d);
    // MPI_Init and MPI_Finalize lie outside the run time (Init exit to Finalize entry).
    if (e.op == Op::ToolFlush) tool_.add(d);
    else if (e.op != Op::Init && e.op != Op::Init_thread && e.op != Op::Finalize) mpi_.add(d);
  }
  void finish(Report& rep) const {
    for (std::size_t op = 0; op < kOpCount; ++op) rep.mpi[op].seconds = seconds_[op].value();
    rep.mpi_s = mpi_.value();
    rep.tool_s = tool_.value();
  }

 private:
  std::array<ExactSeconds, kOpCount> seconds_{};
  ExactSeconds mpi_, tool_;
};

inline ModelResult result(std::string name, double actual, double predicted) {
  ModelResult m;
  m.name = std::move(name);
  m.available = true;
  m.predicted_s = predicted;
  m.error_pct = error_pct(actual, predicted);
  return m;
}

inline ModelResult missing(std::string name, std::string note) {
  ModelResult m;
  m.name = std::move(name);
  m.note = std::move(note);
  return m;
}

}  // namespace mstep::model::detail
