// What build_report and build_report_streamed share: a model's row, and how many unmatched
// messages the problems list names one by one.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "model/analysis/exact_sum.hpp"
#include "model/analysis/report.hpp"
#include "model/cost/bspwb.hpp"
#include "model/trace/timeline.hpp"

namespace mstep::model::detail {

inline constexpr std::size_t kMaxUnmatchedShown = 10;

// One-sided communication and MPI-IO: what the run spent in them, and that no model moves it.
inline void note_unmodelled(Report& rep) {
  std::string what;
  for (const bool file : {false, true}) {
    std::uint64_t calls = 0;
    double seconds = 0;
    for (std::size_t op = 0; op < kOpCount; ++op)
      if (file ? is_file_io(static_cast<Op>(op)) : is_one_sided(static_cast<Op>(op)))
        calls += rep.mpi[op].calls, seconds += rep.mpi[op].seconds;
    if (!calls) continue;
    if (!what.empty()) what += " and ";
    what += fmt::format("{} {} call{} ({:.6f} s)", calls, file ? "MPI-IO" : "one-sided (RMA)", calls == 1 ? "" : "s", seconds);
  }
  if (!what.empty())
    rep.notes.push_back("recorded, not modelled: " + what +
                        ": every model keeps them at their recorded duration and the M-steps count them as "
                        "computation, so a what-if on another network does not move them");
}

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
    note_unmodelled(rep);
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
