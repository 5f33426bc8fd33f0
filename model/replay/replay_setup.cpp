// make_ranks: what the replay knows of each rank before reading its records: its clock, and its
// communicators with their global ids and its rank in each (model/replay/replay.cpp).
#include <algorithm>

#include "model/replay/replay_plan.hpp"

namespace mstep::model::detail {

RunInfo make_ranks(const ReplayInput& in) {
  RunInfo run;
  run.substitutes = in.substitutes;
  run.collective_times = in.collective_times;
  const std::size_t P = in.ranks.size();
  const std::vector<const RankTrace*> ranks(in.ranks.begin(), in.ranks.end());
  run.comm_ids = global_comm_ids(ranks);
  run.ranks.resize(P);
  for (std::size_t r = 0; r < P; ++r) {
    const RankTrace* t = ranks[r];
    RankInfo& info = run.ranks[r];
    if (!t || t->events.empty()) continue;
    info.present = true;
    info.spt = in.timeline.clock(static_cast<int>(r)).ns_per_tick * 1e-9;
    if (t->several_threads || std::any_of(t->event_thread.begin(), t->event_thread.end(),
                                          [&](std::uint16_t th) { return th != t->event_thread.front(); }))
      run.multithreaded = true;
    for (const CommDef& c : t->comms) {
      if (c.id >= info.def_of.size()) info.def_of.resize(c.id + 1u, nullptr);
      info.def_of[c.id] = &c;
    }
    info.crank_of.assign(info.def_of.size(), kNone);
    for (std::size_t id = 0; id < info.def_of.size(); ++id) {
      const CommDef* def = info.def_of[id];
      if (!def || def->inter) continue;
      const auto& w = def->world_ranks;
      // MPI_COMM_WORLD and its duplicates list every rank in order: no search (ranks squared).
      const std::int64_t me = w.rank_of(static_cast<std::int32_t>(r));
      if (me < 0) continue;
      info.crank_of[id] = static_cast<std::uint32_t>(me);
      run.members.try_emplace(run.gcomm(r, static_cast<std::uint16_t>(id)), w);
    }
  }
  return run;
}

}  // namespace mstep::model::detail
