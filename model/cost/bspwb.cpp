#include "model/cost/bspwb.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace mstep::model {

namespace {

std::uint32_t partner_step(const Partner& p, std::size_t receiving_step) {
  return p.step == kSameStep ? static_cast<std::uint32_t>(receiving_step) : p.step;
}

// Every partner must name an existing step of an existing rank; checked once up front so that
// the evaluation below can index freely.
void check_partners(std::span<const RankSteps> ranks, std::span<const PartnerGroup> groups) {
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    for (std::size_t s = 0; s < ranks[i].size(); ++s) {
      for (const Partner& p : ranks[i][s].incoming) {
        const std::uint32_t t = partner_step(p, s);
        if (p.rank >= ranks.size() || t >= ranks[p.rank].size()) {
          throw std::invalid_argument(fmt::format(
              "MPM: step {} of rank {} names partner rank {} step {}, which does not exist", s, i,
              p.rank, t));
        }
      }
      for (const std::uint32_t g : ranks[i][s].groups)
        if (g >= groups.size())
          throw std::invalid_argument(fmt::format("MPM: step {} of rank {} names partner group {} of {}", s, i, g,
                                                  groups.size()));
    }
  }
  for (std::size_t g = 0; g < groups.size(); ++g)
    for (const Partner& p : groups[g].members)
      if (p.rank >= ranks.size() || p.step == kSameStep || p.step >= ranks[p.rank].size())
        throw std::invalid_argument(fmt::format("MPM: partner group {} names rank {} step {}, which does not exist", g,
                                                p.rank, p.step));
}

// Phi(t-1, j), with Phi(-1, j) = 0: when rank j could start computing its step t.
double step_start(const std::vector<std::vector<double>>& phi, std::size_t j, std::size_t t) {
  return t == 0 ? 0.0 : phi[j][t - 1];
}

// ws(t,j->i): the computation of the sender's step before the partner's message left (see
// mpm() in the header): the partner's send point, else the step's, else all of w, never above w.
double send_point(const Partner& p, const StepRecord& sender) {
  const double ws = p.w_send >= 0 ? p.w_send : sender.w_send;
  return ws >= 0 ? std::min(ws, sender.w) : sender.w;
}

}  // namespace

double h_relation(const StepRecord& step, HCombine combine) {
  return h_relation(step.in_bytes, step.out_bytes, combine);
}

BspwbPrediction bspwb(std::span<const RankSteps> ranks, const BspParams& params) {
  std::size_t step_count = 0;
  for (const RankSteps& r : ranks) step_count = std::max(step_count, r.size());

  BspwbPrediction out;
  out.T.reserve(step_count);
  double T = 0;
  for (std::size_t s = 0; s < step_count; ++s) {
    double max_w = 0;
    double max_comm = std::numeric_limits<double>::lowest();
    bool any_traffic = false;
    for (const RankSteps& r : ranks) {
      // A rank without step s is in a ghost step: w = 0, h = 0, so it still contributes L.
      const double w = s < r.size() ? r[s].w : 0.0;
      const double h = s < r.size() ? h_relation(r[s], params.combine) : 0.0;
      const double extra = s < r.size() ? r[s].extra : 0.0;
      max_w = std::max(max_w, w);
      max_comm = std::max(max_comm, params.g * h + params.L + extra);
      any_traffic = any_traffic || h > 0;
    }
    if (!any_traffic && !params.latency_on_empty_steps) {
      max_comm = 0;
      for (const RankSteps& r : ranks)
        if (s < r.size()) max_comm = std::max(max_comm, r[s].extra);
    }
    T += max_w + max_comm;
    out.T.push_back(T);
  }
  out.total = out.T.empty() ? 0.0 : out.T.back();
  return out;
}

MpmPrediction mpm(std::span<const RankSteps> ranks, const BspParams& params, std::span<const PartnerGroup> groups) {
  check_partners(ranks, groups);

  MpmPrediction out;
  out.phi.resize(ranks.size());
  std::vector<std::size_t> first_node(ranks.size() + 1, 0);  // flat node id of (i, 0)
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    out.phi[i].assign(ranks[i].size(), 0.0);
    first_node[i + 1] = first_node[i] + ranks[i].size();
  }

  // Phi(s,i) needs Phi(s-1,i) and Phi(t-1,j) of every partner (j,t), and a partner's step
  // index need not be below s after ghost-step alignment, so evaluate in dependency order by an
  // explicit-stack depth-first search (traces can have far more steps than the call stack
  // could recurse through). A partner group is a node of its own: it needs Phi(t-1,j) of each
  // member (j,t), and the steps that name it need its maxima.
  const std::size_t step_nodes = first_node.back();
  constexpr std::size_t kGroup = static_cast<std::size_t>(-1);  // Frame::rank of a group node
  enum : std::uint8_t { kUnseen, kOnStack, kDone };
  std::vector<std::uint8_t> state(step_nodes + groups.size(), kUnseen);
  struct GroupMax {
    double ready = 0, H = 0, comm = 0;
  };
  std::vector<GroupMax> group_max(groups.size());
  struct Frame {
    std::size_t rank, step, next_dependency;  // rank kGroup: step is the group's index
  };
  std::vector<Frame> stack;
  const auto node_of = [&](std::size_t rank, std::size_t step) {
    return rank == kGroup ? step_nodes + step : first_node[rank] + step;
  };
  const auto dependency_count = [&](const Frame& f) {
    if (f.rank == kGroup) return groups[f.step].members.size();
    const StepRecord& st = ranks[f.rank][f.step];
    return 1 + st.incoming.size() + st.groups.size();
  };

  // Dependency number k of a step (i,s): 0 is (i,s-1), then the step before each partner's step,
  // then each group. Of a group: the step before member k's. False when that dependency does not
  // exist (step 0 depends on nothing before it).
  const auto dependency = [&](const Frame& f, std::size_t k, std::size_t& j, std::size_t& t) {
    if (f.rank == kGroup) {
      const Partner& p = groups[f.step].members[k];
      j = p.rank;
      t = p.step;
    } else if (k == 0) {
      j = f.rank;
      t = f.step;
    } else if (const auto& own = ranks[f.rank][f.step]; k <= own.incoming.size()) {
      const Partner& p = own.incoming[k - 1];
      j = p.rank;
      t = partner_step(p, f.step);
    } else {
      j = kGroup;
      t = own.groups[k - 1 - own.incoming.size()];
      return true;
    }
    if (t == 0) return false;
    --t;
    return true;
  };

  const auto evaluate_group = [&](std::size_t g) {
    GroupMax m;
    for (const Partner& p : groups[g].members) {
      const StepRecord& sender = ranks[p.rank][p.step];
      m.ready = std::max(m.ready, step_start(out.phi, p.rank, p.step) + send_point(p, sender));
      const double h = h_relation(sender, params.combine);
      m.H = std::max(m.H, h);
      m.comm = std::max(m.comm, params.g * h + sender.extra);
    }
    group_max[g] = m;
  };

  const auto evaluate = [&](std::size_t i, std::size_t s) {
    const StepRecord& own = ranks[i][s];
    double ready = step_start(out.phi, i, s) + own.w;
    double H = h_relation(own, params.combine);
    double comm = params.g * H + own.extra;  // max of g*h + extra over Gamma: g*H without extras
    for (const Partner& p : own.incoming) {
      const std::size_t t = partner_step(p, s);
      const StepRecord& sender = ranks[p.rank][t];
      ready = std::max(ready, step_start(out.phi, p.rank, t) + send_point(p, sender));
      const double h = h_relation(sender, params.combine);
      H = std::max(H, h);
      comm = std::max(comm, params.g * h + sender.extra);
    }
    for (const std::uint32_t g : own.groups) {
      ready = std::max(ready, group_max[g].ready);
      H = std::max(H, group_max[g].H);
      comm = std::max(comm, group_max[g].comm);
    }
    const double latency = (H > 0 || params.latency_on_empty_steps) ? params.L : 0.0;
    out.phi[i][s] = ready + comm + latency;
  };

  for (std::size_t i = 0; i < ranks.size(); ++i) {
    for (std::size_t s = 0; s < ranks[i].size(); ++s) {
      if (state[first_node[i] + s] != kUnseen) continue;
      state[first_node[i] + s] = kOnStack;
      stack.push_back({i, s, 0});
      while (!stack.empty()) {
        Frame& top = stack.back();
        if (top.next_dependency < dependency_count(top)) {
          std::size_t j = 0, t = 0;
          if (!dependency(top, top.next_dependency++, j, t)) continue;
          std::uint8_t& dep_state = state[node_of(j, t)];
          if (dep_state == kOnStack) {
            if (j == kGroup || top.rank == kGroup)
              throw std::invalid_argument(fmt::format(
                  "MPM: steps depend on each other in a cycle through partner group {}", j == kGroup ? t : top.step));
            throw std::invalid_argument(fmt::format(
                "MPM: steps depend on each other in a cycle (rank {} step {} needs rank {} step {} to end first); "
                "the partner steps cannot come from one execution",
                top.rank, top.step, j, t));
          }
          if (dep_state == kUnseen) {
            dep_state = kOnStack;
            stack.push_back({j, t, 0});  // invalidates `top`; the loop re-reads it
          }
          continue;
        }
        if (top.rank == kGroup) evaluate_group(top.step);
        else evaluate(top.rank, top.step);
        state[node_of(top.rank, top.step)] = kDone;
        stack.pop_back();
      }
    }
  }

  for (const std::vector<double>& rank_phi : out.phi) {
    if (!rank_phi.empty()) out.psi = std::max(out.psi, rank_phi.back());
  }
  return out;
}

double error_pct(double actual, double model) { return 100.0 * (actual - model) / actual; }

}  // namespace mstep::model
