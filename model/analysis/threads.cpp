#include "model/analysis/threads.hpp"

#include <algorithm>
#include <utility>

namespace mstep::model {
namespace {

bool counts_as_mpi(const Event& e) {
  return !e.continuation() && e.op != Op::ToolFlush && e.op != Op::Init && e.op != Op::Init_thread &&
         e.op != Op::Finalize;
}

}  // namespace

std::vector<int> multithreaded_ranks(std::span<const RankTrace* const> ranks) {
  std::vector<int> out;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const RankTrace* t = ranks[r];
    if (!t) continue;
    bool seen = false;
    std::uint16_t first = 0;
    for (std::size_t i = 0; i < t->events.size() && i < t->event_thread.size(); ++i) {
      if (t->events[i].op == Op::ToolFlush) continue;
      if (!seen) {
        seen = true;
        first = t->event_thread[i];
      } else if (t->event_thread[i] != first) {
        out.push_back(static_cast<int>(r));
        break;
      }
    }
  }
  return out;
}

double mpi_wall_seconds(const RankTrace& t, const Timeline& timeline, int rank) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> calls;
  for (const Event& e : t.events)
    if (counts_as_mpi(e) && e.t_exit > e.t_enter) calls.emplace_back(e.t_enter, e.t_exit);
  std::sort(calls.begin(), calls.end());
  std::uint64_t ticks = 0, begin = 0, end = 0;
  bool open = false;
  for (const auto& [b, e] : calls) {
    if (open && b <= end) {
      end = std::max(end, e);
      continue;
    }
    if (open) ticks += end - begin;
    begin = b, end = e, open = true;
  }
  if (open) ticks += end - begin;
  return timeline.duration(rank, ticks);
}

}  // namespace mstep::model
