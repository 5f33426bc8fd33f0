#include "model/cost/collectives.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

namespace mstep::model {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

void check_process_count(std::uint32_t P) {
  if (P == 0) throw std::invalid_argument("barrier estimate: P must be at least 1");
}

double f_r(const LogPBarrierParams& p) { return std::max(p.o_r, p.g); }
double f_s(const LogPBarrierParams& p) { return std::max(p.o_s, p.g); }
double t_msg(const LogPBarrierParams& p) { return std::max(p.g, p.o_s + p.L + p.o_r); }

void check_network(const BroadcastNetwork& net, std::uint32_t root) {
  const std::size_t cells = net.nodes * net.nodes;
  if (net.latency.size() != cells || net.injection.size() != cells) {
    throw std::invalid_argument(fmt::format(
        "broadcast network of {} nodes needs {} latencies and injection times, has {} and {}",
        net.nodes, cells, net.latency.size(), net.injection.size()));
  }
  if (root >= net.nodes) {
    throw std::invalid_argument(fmt::format("broadcast root {} of {} nodes", root, net.nodes));
  }
}

BroadcastTree empty_tree(std::size_t nodes, std::uint32_t root) {
  BroadcastTree t;
  t.root = root;
  t.parent.assign(nodes, kNoParent);
  t.children.resize(nodes);
  return t;
}

// Nodes in an order where every parent comes before its children (breadth first from the root).
// A hand-built "tree" that reaches a node twice (or has a cycle) is rejected rather than walked
// forever.
std::vector<std::uint32_t> top_down_order(const BroadcastTree& tree, std::size_t nodes) {
  if (tree.children.size() != nodes || tree.root >= nodes) {
    throw std::invalid_argument(fmt::format(
        "broadcast tree of {} nodes (root {}) on a network of {}", tree.children.size(),
        tree.root, nodes));
  }
  std::vector<bool> seen(nodes, false);
  std::vector<std::uint32_t> order{tree.root};
  seen[tree.root] = true;
  for (std::size_t k = 0; k < order.size(); ++k) {
    for (std::uint32_t c : tree.children[order[k]]) {
      if (c >= nodes || seen[c]) {
        throw std::invalid_argument(
            fmt::format("broadcast tree: node {} is out of range or reached twice", c));
      }
      seen[c] = true;
      order.push_back(c);
    }
  }
  return order;
}

}  // namespace

// ---- Barrier ---------------------------------------------------------------------------------

double central_counter_barrier(const LogPBarrierParams& p, std::uint32_t P) {
  check_process_count(P);
  if (P == 1) return 0;
  const double others = static_cast<double>(P) - 2;
  return 2 * (p.o_s + p.L + p.o_r) + others * f_r(p) + others * f_s(p);
}

double combining_tree_barrier(const LogPBarrierParams& p, std::uint32_t P, std::uint32_t arity) {
  check_process_count(P);
  if (arity < 2) throw std::invalid_argument("combining tree barrier: arity must be at least 2");
  if (P == 1) return 0;
  const double n = arity;
  const double log_n_P = std::log(static_cast<double>(P)) / std::log(n);
  const double log_2_P = std::log2(static_cast<double>(P));
  return (p.o_s + p.L + (n - 2) * f_r(p) + p.o_r) * log_n_P  // gather up the n-ary tree
         + p.o_s + (log_2_P - 1) * t_msg(p) + p.L + p.o_r;    // binomial release
}

double dissemination_barrier(const LogPBarrierParams& p, std::uint32_t P) {
  check_process_count(P);
  // ceil(log2 P) in integers: no floating-point rounding at powers of two.
  const auto rounds = static_cast<double>(std::bit_width(P - 1));
  return std::max({f_r(p), f_s(p), p.o_s + p.L + p.o_r}) * rounds;
}

std::string_view to_string(BarrierAlgorithm a) noexcept {
  switch (a) {
    case BarrierAlgorithm::CentralCounter: return "central counter";
    case BarrierAlgorithm::CombiningTree: return "combining tree";
    case BarrierAlgorithm::Dissemination: return "dissemination";
  }
  return "unknown";
}

BarrierChoice adaptive_barrier(const LogPBarrierParams& p, std::uint32_t P,
                               std::uint32_t tree_arity) {
  const BarrierChoice candidates[] = {
      {BarrierAlgorithm::CentralCounter, central_counter_barrier(p, P)},
      {BarrierAlgorithm::CombiningTree, combining_tree_barrier(p, P, tree_arity)},
      {BarrierAlgorithm::Dissemination, dissemination_barrier(p, P)},
  };
  // min_element keeps the first of equal elements: ties go to the earlier algorithm.
  return *std::min_element(std::begin(candidates), std::end(candidates),
                           [](const auto& a, const auto& b) { return a.time < b.time; });
}

AdaptiveBarrier adaptive_barrier_any_arity(const LogPBarrierParams& p, std::uint32_t P) {
  AdaptiveBarrier best;
  bool first = true;
  for (std::uint32_t arity = 2; arity <= 8; ++arity) {
    const BarrierChoice c = adaptive_barrier(p, P, arity);
    if (first || c.time < best.time) {
      best = {c.algorithm, c.algorithm == BarrierAlgorithm::CombiningTree ? arity : 0, c.time};
      first = false;
    }
  }
  return best;
}

BarrierName adaptive_barrier_name(const LogPBarrierParams& p, std::uint32_t P) {
  const AdaptiveBarrier a = adaptive_barrier_any_arity(p, P);
  switch (a.algorithm) {
    case BarrierAlgorithm::CentralCounter: return {BarrierAlgo::Central, 0};
    case BarrierAlgorithm::CombiningTree: return {BarrierAlgo::Tree, static_cast<int>(a.arity)};
    case BarrierAlgorithm::Dissemination: break;
  }
  return {BarrierAlgo::Dissemination, 0};
}

BarrierName auto_barrier_runs(const LogPBarrierParams& p, std::uint32_t P, bool delayed, bool native_mpich,
                              double mpich_round_s) {
  const BarrierName b = adaptive_barrier_name(p, P);
  if (delayed || !native_mpich) return b;
  const double rounds = P > 1 ? std::ceil(std::log2(static_cast<double>(P))) : 0.0;
  const double mpich = dissemination_barrier(p, P) + mpich_round_s * rounds;
  if (adaptive_barrier_any_arity(p, P).time <= (1 - kAutoBarrierMargin) * mpich && P > 1) return b;
  return {BarrierAlgo::Mpi, 0};
}

// ---- Broadcast schedules -----------------------------------------------------------------

std::vector<double> arrival_times(const BroadcastTree& tree, const BroadcastNetwork& net) {
  check_network(net, tree.root);
  std::vector<double> arrival(net.nodes, kInfinity);
  arrival[tree.root] = 0;
  for (std::uint32_t u : top_down_order(tree, net.nodes)) {
    double injected = arrival[u];  // u injects its messages one after the other
    for (std::uint32_t c : tree.children[u]) {
      injected += net.D(u, c);
      arrival[c] = injected + net.w(u, c);
    }
  }
  return arrival;
}

double completion_time(const BroadcastTree& tree, const BroadcastNetwork& net) {
  const std::vector<double> arrival = arrival_times(tree, net);
  return *std::max_element(arrival.begin(), arrival.end());
}

BroadcastTree flat_tree(std::size_t nodes, std::uint32_t root) {
  BroadcastTree t = empty_tree(nodes, root);
  for (std::size_t k = 1; k < nodes; ++k) {
    const auto v = static_cast<std::uint32_t>((root + k) % nodes);
    t.parent[v] = root;
    t.children[root].push_back(v);
  }
  return t;
}

BroadcastTree binomial_tree(std::size_t nodes, std::uint32_t root, BinomialOrder order) {
  BroadcastTree t = empty_tree(nodes, root);
  const auto rank_of = [&](std::size_t relative) {
    return static_cast<std::uint32_t>((relative + root) % nodes);
  };
  const auto add = [&](std::size_t from, std::size_t to) {
    t.parent[rank_of(to)] = rank_of(from);
    t.children[rank_of(from)].push_back(rank_of(to));
  };
  if (order == BinomialOrder::Mpich) {
    for (std::size_t r = 0; r < nodes; ++r) {
      // The loop of MPIR_Bcast_intra_binomial: the mask at which r received (its lowest set
      // bit; P rounded up to a power of two for the root), then halve it down to 1.
      std::size_t mask = 1;
      while (mask < nodes && (r & mask) == 0) mask <<= 1;
      for (mask >>= 1; mask > 0; mask >>= 1) {
        if (r + mask < nodes) add(r, r + mask);
      }
    }
  } else {
    // Rounds in time order, so each holder's children come out nearest first.
    for (std::size_t distance = 1; distance < nodes; distance <<= 1) {
      for (std::size_t r = 0; r < distance && r + distance < nodes; ++r) add(r, r + distance);
    }
  }
  return t;
}

double flat_tree_time(const BroadcastNetwork& net, std::uint32_t root) {
  return completion_time(flat_tree(net.nodes, root), net);
}

double binomial_tree_time(const BroadcastNetwork& net, std::uint32_t root, BinomialOrder order) {
  return completion_time(binomial_tree(net.nodes, root, order), net);
}

// ---- E-SSSP and labeling -----------------------------------------------------------------

EssspTree esssp_tree(const BroadcastNetwork& net, std::uint32_t root) {
  check_network(net, root);
  const std::size_t P = net.nodes;
  std::vector<double> dist(P, kInfinity);
  std::vector<bool> queued(P, true);
  std::vector<std::uint64_t> attached_at(P, 0);  // when v got its final parent
  std::uint64_t attachments = 0;

  EssspTree out;
  out.tree = empty_tree(P, root);
  out.dist.assign(P, kInfinity);
  dist[root] = 0;

  // Plain O(P^2) scans: P is a node count, and the key of u changes while u is being expanded.
  for (std::size_t round = 0; round < P; ++round) {
    std::size_t u = P;
    for (std::size_t v = 0; v < P; ++v) {
      if (queued[v] && dist[v] < kInfinity && (u == P || dist[v] < dist[u])) u = v;
    }
    if (u == P) break;  // the rest is unreachable
    queued[u] = false;
    out.dist[u] = dist[u];
    for (std::size_t v = 0; v < P; ++v) {
      if (!queued[v]) continue;
      const double via_u = dist[u] + net.w(u, v) + net.D(u, v);
      if (dist[v] > via_u) {
        dist[v] = via_u;
        dist[u] += net.D(u, v);  // u is busy injecting for v before it can serve the next one
        out.tree.parent[v] = static_cast<std::uint32_t>(u);
        attached_at[v] = attachments++;
      }
    }
  }

  // Children in order of attachment: the order in which u would have injected them.
  std::vector<std::uint32_t> by_attachment(P);
  std::iota(by_attachment.begin(), by_attachment.end(), 0u);
  std::sort(by_attachment.begin(), by_attachment.end(),
            [&](std::uint32_t a, std::uint32_t b) { return attached_at[a] < attached_at[b]; });
  for (std::uint32_t v : by_attachment) {
    if (out.tree.parent[v] != kNoParent) out.tree.children[out.tree.parent[v]].push_back(v);
  }
  return out;
}

BroadcastLabeling label_tree(const BroadcastTree& tree, const BroadcastNetwork& net) {
  check_network(net, tree.root);
  BroadcastLabeling out;
  out.tree = tree;
  out.label.assign(net.nodes, 0.0);

  const std::vector<std::uint32_t> order = top_down_order(tree, net.nodes);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {  // children before parents
    const std::uint32_t u = *it;
    std::vector<std::uint32_t>& children = out.tree.children[u];
    std::sort(children.begin(), children.end(), [&](std::uint32_t a, std::uint32_t b) {
      const double ka = out.label[a] + net.w(u, a);
      const double kb = out.label[b] + net.w(u, b);
      if (ka != kb) return ka > kb;
      if (net.D(u, a) != net.D(u, b)) return net.D(u, a) > net.D(u, b);
      return a < b;
    });
    double label = 0;  // a leaf keeps 0
    for (std::size_t i = 1; i <= children.size(); ++i) {
      const std::uint32_t v = children[i - 1];
      label = std::max(label, out.label[v] + net.w(u, v) + static_cast<double>(i) * net.D(u, v));
    }
    out.label[u] = label;
  }
  out.time = out.label[tree.root];
  return out;
}

BroadcastLabeling esssp_broadcast(const BroadcastNetwork& net, std::uint32_t root) {
  return label_tree(esssp_tree(net, root).tree, net);
}

std::string_view to_string(AutoBroadcast a) noexcept {
  switch (a) {
    case AutoBroadcast::Mpich: return "mpi";
    case AutoBroadcast::Flat: return "flat";
    case AutoBroadcast::Esssp: return "esssp";
    case AutoBroadcast::Binomial: return "binomial";
  }
  return "unknown";
}

AutoBroadcastChoice auto_broadcast(const BroadcastNetwork& net, std::uint32_t root, bool mpich_binomial,
                                   double mpich_extra_s, bool binomial_on_tie) {
  AutoBroadcastChoice c;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  c.binomial_s = c.flat_s = c.esssp_s = nan;
  if (!mpich_binomial) return c;
  c.binomial_s = binomial_tree_time(net, root, BinomialOrder::Mpich);
  BroadcastTree flat = flat_tree(net.nodes, root);
  c.flat_s = completion_time(flat, net);
  BroadcastTree esssp = label_tree(esssp_tree(net, root).tree, net).tree;
  c.esssp_s = completion_time(esssp, net);
  // E-SSSP only where it is strictly faster than the flat tree (on a uniform network it is the
  // flat tree); either only where it clears the margin over MPICH's binomial tree.
  const bool esssp_better = c.esssp_s < c.flat_s;
  const double tree_best = esssp_better ? c.esssp_s : c.flat_s;
  // libmstep's copy of MPICH's binomial tree, where MPICH's own costs more than its messages; on a
  // tie with E-SSSP, the copy (binomial_on_tie): at 4 ranks and 64 KiB, where the model has them
  // equal, E-SSSP measured 25-30% slower than the copy (two runs on a core per rank, 2026-11-26).
  // A tie to rounding: the two times are sums of like terms taken in different orders.
  const bool tie = esssp_better && c.binomial_s <= tree_best * (1 + 1e-9);
  const bool copy_better = mpich_extra_s > 0 && (c.binomial_s < tree_best || (binomial_on_tie && tie));
  const double best = copy_better ? c.binomial_s : tree_best;
  if (!(best < (1 - kAutoBroadcastMargin) * (c.binomial_s + mpich_extra_s))) return c;
  if (copy_better) {
    c.algorithm = AutoBroadcast::Binomial;
    return c;
  }
  c.algorithm = esssp_better ? AutoBroadcast::Esssp : AutoBroadcast::Flat;
  c.tree = esssp_better ? std::move(esssp) : std::move(flat);
  return c;
}

BroadcastPair uniform_broadcast_pair(const LogGPSParams& p, std::uint64_t bytes) {
  const LogGPS m{p};
  // The receiver is already waiting (it entered the broadcast with everyone): tr <= ts, so T4 is
  // its floor o + L + o.
  const double busy = m.send_time(bytes, 0.0, 0.0);
  const double injection = std::max(p.g, busy);
  return {m.end_to_end(bytes, 0.0, 0.0) - injection, injection};
}

BroadcastNetwork uniform_broadcast_network(std::uint32_t nodes, BroadcastPair pair) {
  BroadcastNetwork net;
  net.nodes = nodes;
  const std::size_t cells = std::size_t{nodes} * nodes;
  net.latency.assign(cells, pair.latency);
  net.injection.assign(cells, pair.injection);
  return net;
}

double lambda_from_exchange(double s, double e, double D1, double D2) {
  return (e - s - (D1 + D2)) / 2;
}

}  // namespace mstep::model
