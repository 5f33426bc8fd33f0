// make_plan: the trace and its matching flattened into per-rank arrays of indices, once, before
// the replay loop runs (model/replay/replay.cpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <unordered_map>

#include "model/replay/replay_plan.hpp"

namespace mstep::model::detail {
namespace {

std::uint8_t send_mode(Op op) {
  switch (op) {
    case Op::Ssend:
    case Op::Issend: return kSynchronous;
    case Op::Bsend:
    case Op::Ibsend: return kBuffered;
    default: return kBySize;
  }
}

}  // namespace

ReplayPlan make_plan(const ReplayInput& in) {
  ReplayPlan plan;
  const std::size_t P = in.ranks.size();
  const std::vector<const RankTrace*> ranks(in.ranks.begin(), in.ranks.end());
  const auto comm_ids = global_comm_ids(ranks);
  plan.ranks.resize(P);

  // Per rank: records, clock, start (MPI_Init exit) and recorded end (MPI_Finalize entry).
  double zero = std::numeric_limits<double>::infinity();
  for (std::size_t r = 0; r < P; ++r) {
    const RankTrace* t = ranks[r];
    PlanRank& pr = plan.ranks[r];
    if (!t || t->events.empty()) continue;
    const int rank = static_cast<int>(r);
    pr.present = true;
    pr.ev = t->events.data();
    pr.n = static_cast<std::uint32_t>(t->events.size());
    pr.link.assign(pr.n, kNone);
    pr.spt = in.timeline.clock(rank).ns_per_tick * 1e-9;
    // Several threads: their frames interleave in the file; replay in order of entry (stable, so
    // a call's continuation records stay behind their first record).
    const bool threads = std::any_of(t->event_thread.begin(), t->event_thread.end(),
                                     [&](std::uint16_t th) { return th != t->event_thread.front(); });
    if (threads) {
      plan.multithreaded = true;
      pr.order.resize(pr.n);
      for (std::uint32_t i = 0; i < pr.n; ++i) pr.order[i] = i;
      std::stable_sort(pr.order.begin(), pr.order.end(),
                       [&](std::uint32_t a, std::uint32_t b) { return pr.ev[a].t_enter < pr.ev[b].t_enter; });
    }
    auto at = [&](std::uint32_t pos) { return pr.order.empty() ? pos : pr.order[pos]; };
    pr.start_pos = 0;
    pr.start_ticks = pr.ev[at(0)].t_enter;
    for (std::uint32_t pos = 0; pos < pr.n; ++pos) {
      const Event& e = pr.ev[at(pos)];
      if (e.op == Op::Init || e.op == Op::Init_thread) {
        pr.start_pos = pos + 1;
        pr.start_ticks = e.t_exit;
        break;
      }
    }
    pr.start_s = in.timeline.seconds(rank, pr.start_ticks);
    zero = std::min(zero, pr.start_s);
    std::uint64_t end = t->events.back().t_exit;
    for (auto it = t->events.rbegin(); it != t->events.rend(); ++it)
      if (it->op == Op::Finalize) {
        end = it->t_enter;
        break;
      }
    pr.actual_end_s = in.timeline.seconds(rank, end);
  }
  plan.zero_s = std::isfinite(zero) ? zero : 0.0;

  // Messages: each matched send, post and completion record points at its message.
  const auto& messages = in.matching.messages;
  plan.messages = messages.data();
  plan.msgs.resize(messages.size());
  plan.msg_mode.resize(messages.size());
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const Message& m = messages[i];
    auto& src = plan.ranks[static_cast<std::size_t>(m.src)];
    auto& dst = plan.ranks[static_cast<std::size_t>(m.dst)];
    if (!src.present || !dst.present || m.send_event >= src.n || m.post_event >= dst.n || m.recv_event >= dst.n)
      continue;  // not a message of these traces: its records keep their recorded durations
    plan.msg_mode[i] = send_mode(src.ev[m.send_event].op);
    const auto index = static_cast<std::uint32_t>(i);
    src.link[m.send_event] = index;
    dst.link[m.post_event] = index;
    dst.link[m.recv_event] = index;
  }

  // Wait/Test records that completed an Isend: the Isend's message. Request ids are unique per
  // rank and handed out in sequence, so a flat table serves unless the ids look implausible.
  std::vector<std::uint32_t> isend_at;
  for (std::size_t r = 0; r < P; ++r) {
    PlanRank& pr = plan.ranks[r];
    if (!pr.present) continue;
    std::uint32_t max_request = 0;
    for (std::uint32_t i = 0; i < pr.n; ++i) max_request = std::max(max_request, pr.ev[i].request);
    const bool flat = max_request <= 4ull * pr.n + 1024;
    std::unordered_map<std::uint32_t, std::uint32_t> isend_of_request;
    if (flat) isend_at.assign(max_request + 1ull, kNone);
    for (std::uint32_t i = 0; i < pr.n; ++i) {
      const Event& e = pr.ev[i];
      if (!e.request) continue;
      const Role role = op_role(e.op);
      if (role == Role::Isend) {
        if (flat) isend_at[e.request] = i;
        else isend_of_request[e.request] = i;
      } else if (role == Role::Complete && !(e.flags & (kRecvHalf | kIncomplete))) {
        std::uint32_t isend = kNone;
        if (flat) {
          isend = isend_at[e.request];
        } else if (const auto it = isend_of_request.find(e.request); it != isend_of_request.end()) {
          isend = it->second;
        }
        if (isend != kNone) pr.link[i] = pr.link[isend];
      }
    }
  }

  // Collectives: the k-th collective on one communicator (global id) at every member is one instance.
  std::unordered_map<std::uint64_t, std::uint32_t> instance_of;
  std::map<std::uint32_t, std::uint32_t> comm_offset;  // global communicator -> its member list
  for (std::size_t r = 0; r < P; ++r) {
    PlanRank& pr = plan.ranks[r];
    if (!pr.present) continue;
    const RankTrace& t = *ranks[r];
    std::vector<const CommDef*> def_of;
    for (const CommDef& c : t.comms) {
      if (c.id >= def_of.size()) def_of.resize(c.id + 1u, nullptr);
      def_of[c.id] = &c;
    }
    pr.crank_of.assign(def_of.size(), kNone);
    for (std::size_t id = 0; id < def_of.size(); ++id) {
      if (!def_of[id] || def_of[id]->inter) continue;
      const auto& w = def_of[id]->world_ranks;
      const auto it = std::find(w.begin(), w.end(), static_cast<std::int32_t>(r));
      if (it != w.end()) pr.crank_of[id] = static_cast<std::uint32_t>(it - w.begin());
    }
    std::unordered_map<std::uint32_t, std::uint32_t> count;
    for (std::uint32_t i = 0; i < pr.n; ++i) {
      const Event& e = pr.ev[i];
      if (!is_collective_call(e)) continue;
      const std::uint32_t gcomm = global_comm(comm_ids, r, e.comm);
      const std::uint32_t k = count[gcomm]++;
      const auto [it, fresh] = instance_of.try_emplace((std::uint64_t{gcomm} << 32) | k,
                                                       static_cast<std::uint32_t>(plan.instances.size()));
      if (fresh) plan.instances.emplace_back();
      PlanInstance& inst = plan.instances[it->second];
      pr.link[i] = it->second;
      ++inst.registered;
      const CommDef* def = e.comm < def_of.size() ? def_of[e.comm] : nullptr;
      const std::uint32_t me = e.comm < pr.crank_of.size() ? pr.crank_of[e.comm] : kNone;
      if (!def || def->inter || me == kNone) {
        inst.bad = true;
        continue;
      }
      const auto n = static_cast<std::uint32_t>(def->world_ranks.size());
      pr.max_comm = std::max(pr.max_comm, n);
      std::uint32_t root = 0;
      const Role role = op_role(e.op);
      if (role == Role::CollRootOut || role == Role::CollRootIn) {
        if (e.flags & kRoot) {
          root = me;
        } else {
          const auto& w = def->world_ranks;
          const auto rt = std::find(w.begin(), w.end(), e.peer);
          if (rt == w.end()) {
            inst.bad = true;
            continue;
          }
          root = static_cast<std::uint32_t>(rt - w.begin());
        }
      }
      if (fresh) {
        auto [off, added] = comm_offset.try_emplace(gcomm, static_cast<std::uint32_t>(plan.comm_world.size()));
        if (added) plan.comm_world.insert(plan.comm_world.end(), def->world_ranks.begin(), def->world_ranks.end());
        inst.members_off = off->second;
        inst.shape = choose_collective(e.op, n, root, collective_block_bytes(e, n));
      } else if (inst.shape.op != e.op || inst.shape.n != n || inst.shape.root != root) {
        inst.bad = true;  // the members disagree on what this collective is
      } else if (e.flags & kRoot) {
        inst.shape = choose_collective(e.op, n, root, collective_block_bytes(e, n));  // the root's sizes win
      }
    }
  }
  for (PlanInstance& inst : plan.instances) {
    inst.usable = !inst.bad && inst.shape.n > 0 && inst.registered == inst.shape.n &&
                  inst.shape.algo != CollAlgo::Unsupported;
    if (!inst.usable) {
      plan.unusable_collectives += inst.registered;
      continue;
    }
    inst.rounds = coll_rounds(inst.shape);
    inst.member_base = plan.members_total;
    plan.members_total += inst.shape.n;
  }
  return plan;
}

}  // namespace mstep::model::detail
