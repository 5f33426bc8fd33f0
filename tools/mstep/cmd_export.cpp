// mstep export: a trace in the formats of other tools. --goal: LogGOPSim's GOAL schedule
// (model/export/goal.hpp), to simulate the recorded run with LogGOPSim.
#include <cstdio>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/export/goal.hpp"
#include "tools/mstep/commands.hpp"
#include "tools/mstep/progress.hpp"

namespace mstep::cli {
namespace {

struct ExportOptions {
  std::string dir;
  std::string goal;
  std::string unit = "ns";
};

int run_export(const ExportOptions& o) {
  const TraceDir trace = [&] {
    Progress progress("reading", static_cast<std::uint64_t>(read_run_meta(o.dir).ranks));
    return load_trace_dir(o.dir, std::nullopt, [&](std::size_t r) { progress.update(r); });
  }();
  std::ofstream out(o.goal, std::ios::binary);
  if (!out) {
    std::fprintf(stderr, "mstep: cannot write %s\n", o.goal.c_str());
    return 1;
  }
  const model::GoalSummary s = model::write_goal(trace, out, o.unit == "ps" ? 1e12 : o.unit == "us" ? 1e6 : 1e9);
  out.close();
  if (!out) {
    std::fprintf(stderr, "mstep: cannot write %s (disk full?)\n", o.goal.c_str());
    return 1;
  }
  if (!s.cut_short.empty())
    std::fprintf(stderr, "mstep: warning: rank%s %s did not reach MPI_Finalize (or have no trace): their schedules end early\n",
                 s.cut_short.size() == 1 ? "" : "s", fmt::format("{}", fmt::join(s.cut_short, ", ")).c_str());
  if (!s.multithreaded.empty())
    std::fprintf(stderr, "mstep: warning: rank%s %s made MPI calls from several threads: exported as one sequence in file order\n",
                 s.multithreaded.size() == 1 ? "" : "s", fmt::format("{}", fmt::join(s.multithreaded, ", ")).c_str());
  std::printf("mstep: wrote %s: %zu ranks, %llu sends (%llu of them in collectives), %llu receives, %llu calcs\n",
              o.goal.c_str(), trace.ranks.size(), static_cast<unsigned long long>(s.sends),
              static_cast<unsigned long long>(s.collective_messages), static_cast<unsigned long long>(s.recvs),
              static_cast<unsigned long long>(s.calcs));
  return 0;
}

}  // namespace

void add_export(CLI::App& app) {
  auto o = std::make_shared<ExportOptions>();
  auto* cmd = app.add_subcommand("export", "Write a trace in another tool's format (--goal: LogGOPSim)");
  cmd->add_option("trace", o->dir, "Trace directory")->required();
  cmd->add_option("--goal", o->goal, "Write a LogGOPSim GOAL schedule (text) to FILE")->required();
  cmd->add_option("--time-unit", o->unit, "Time unit of the GOAL schedule's calc (ns, ps or us; default ns)")
      ->check(CLI::IsMember({"ns", "ps", "us"}));
  cmd->callback([o] {
    if (const int code = run_export(*o)) throw CLI::RuntimeError(code);
  });
}

}  // namespace mstep::cli
