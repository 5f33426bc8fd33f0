#include "model/analysis/advise.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "format/collective_substitutes.hpp"
#include "model/cost/barrier_pairs.hpp"
#include "model/replay/replay.hpp"
#include "model/replay/replay_collectives.hpp"
#include "model/trace/matching.hpp"
#include "model/trace/timeline.hpp"

namespace mstep::model {

BroadcastNetwork broadcast_subnetwork(const BroadcastParams& calibrated, std::span<const std::int32_t> members,
                                      const LogGPSParams& p, std::uint64_t bytes) {
  const std::size_t table = calibrated.network.nodes;
  for (const std::int32_t m : members)
    if (m < 0 || static_cast<std::size_t>(m) >= table) return {};
  const BroadcastPair there = uniform_broadcast_pair(p, calibrated.bytes);
  const BroadcastPair here = uniform_broadcast_pair(p, bytes);
  const double dw = here.latency - there.latency, dD = here.injection - there.injection;
  BroadcastNetwork net;
  net.nodes = members.size();
  net.latency.resize(net.nodes * net.nodes);
  net.injection.resize(net.nodes * net.nodes);
  for (std::size_t u = 0; u < net.nodes; ++u) {
    for (std::size_t v = 0; v < net.nodes; ++v) {
      const auto a = static_cast<std::size_t>(members[u]), b = static_cast<std::size_t>(members[v]);
      net.latency[u * net.nodes + v] = calibrated.network.w(a, b) + dw;
      net.injection[u * net.nodes + v] = calibrated.network.D(a, b) + dD;
    }
  }
  return net;
}

double isolated_collective_s(Op op, std::uint32_t n, std::uint32_t root, std::uint64_t bytes,
                             const LogGPSParams& p, const CollectiveSubstitutes& subs, const CollectiveTable* times) {
  if (n <= 1) return 0;
  // Every member: MPI_Init, the collective and MPI_Finalize, all at one instant, so the replay's
  // zero is the collective's start and each member's finish is when the collective returned.
  constexpr std::uint64_t kAt = 1'000'000;
  const MemberList world = MemberList::identity(n);
  std::vector<RankTrace> traces(n);
  for (std::uint32_t r = 0; r < n; ++r) {
    RankTrace& t = traces[r];
    t.path = "isolated";
    t.header.rank = static_cast<std::int32_t>(r);
    t.header.world_size = static_cast<std::int32_t>(n);
    t.header.clock_kind = 1;
    t.header.ticks_per_second = 1e9;
    t.comms.push_back(CommDef{0, false, world});
    Event init, coll, fin;
    init.op = Op::Init, fin.op = Op::Finalize, coll.op = op;
    init.t_enter = init.t_exit = coll.t_enter = coll.t_exit = fin.t_enter = fin.t_exit = kAt;
    if (op == Op::Bcast) {
      coll.peer = static_cast<std::int32_t>(root);
      if (r == root) coll.flags = kRoot, coll.send_bytes = bytes * (n - 1);  // share/trace-format.md
      else coll.recv_bytes = bytes;
    }
    t.events = {init, coll, fin};
    t.event_thread.assign(3, 0);
    t.end = TraceEnd::Complete;
    t.clocks.push_back(ClockSync{ClockSync::AtInit, kAt, static_cast<std::int64_t>(kAt), 0, 0});
    t.clocks.push_back(ClockSync{ClockSync::AtFinalize, kAt, static_cast<std::int64_t>(kAt), 0, 0});
  }
  std::vector<const RankTrace*> ranks;
  ranks.reserve(n);
  for (const RankTrace& t : traces) ranks.push_back(&t);
  const Matching matching = match_messages(ranks);
  const Timeline timeline(ranks);
  ReplayInput in{ranks, matching, timeline, 0, {}, subs};
  in.collective_times = times;
  return replay_loggps(in, p).predicted_s;
}

namespace {

std::string arity_name(std::uint32_t n) { return fmt::format("combining tree (n={})", n); }

void barrier_algorithms(CollectiveAdvice& a, const LogGPSParams& p) {
  const LogPBarrierParams b{p.L, p.o, p.o, p.g};
  const std::uint32_t P = a.site.comm_size;
  a.network = "LogP from LogGPS (L, o_s = o_r = o, g)";
  a.algorithms.push_back({"central counter", central_counter_barrier(b, P), false});
  for (const std::uint32_t n : {2u, 4u, 8u}) a.algorithms.push_back({arity_name(n), combining_tree_barrier(b, P, n), false});
  a.algorithms.push_back({"dissemination", dissemination_barrier(b, P), false});
}

// The same algorithms as the programs libmstep runs, on LogP with L plus the pair's latency
// (model/cost/barrier_pairs.hpp); MPICH's default, dissemination, timed the same way.
void barrier_algorithms_on_pairs(CollectiveAdvice& a, const LogGPSParams& p, const PairLatency& pairs) {
  const LogPBarrierParams b{p.L, p.o, p.o, p.g};
  const std::uint32_t P = a.site.comm_size;
  const std::vector<std::int32_t>& m = a.site.members;
  const PairLatencyFn latency = [&](std::uint32_t u, std::uint32_t v) { return p.L + 1e-9 * static_cast<double>(pairs.ns(m[u], m[v])); };
  a.network = "LogP from LogGPS (L, o_s = o_r = o, g) + the per-pair latencies";
  a.algorithms.push_back({"central counter", central_counter_barrier(b, P, latency), false});
  for (const std::uint32_t n : {2u, 4u, 8u})
    a.algorithms.push_back({arity_name(n), combining_tree_barrier(b, P, n, latency), false});
  a.algorithms.push_back({"dissemination", dissemination_barrier(b, P, latency), false});
  if (a.algorithms.front().name == "MPICH default: dissemination") {
    a.algorithms.front().predicted_s = a.algorithms.back().predicted_s;
    a.notes.push_back("MPICH's dissemination timed on the same network");
  }
}

// `residual_s`: what MPICH's default pays beyond its messages (its calibrated residual), added
// where MPICH's own broadcast runs and is timed on the calibrated pairs.
void bcast_algorithms(CollectiveAdvice& a, const CalibrationParams& params, const LogGPSParams& p,
                      const CollShape& mpich, const PairLatency* pairs, double residual_s) {
  const CollectiveSite& s = a.site;
  if (s.comm_size > kAdviseMaxScheduleRanks) {
    a.notes.push_back(fmt::format("broadcast schedules not built for {} ranks (above {}: their network is a table "
                                  "of every pair)", s.comm_size, kAdviseMaxScheduleRanks));
    return;
  }
  BroadcastNetwork net;
  bool calibrated = false, pairs_used = false;
  if (params.broadcast && s.members.size() == s.comm_size)
    net = broadcast_subnetwork(*params.broadcast, s.members, p, s.bytes);
  if (net.nodes != 0) {
    calibrated = true;
    a.network = fmt::format("calibrated pairs ({} B, moved to {} B by LogGPS)", params.broadcast->bytes, s.bytes);
  } else {
    const BroadcastPair pair = uniform_broadcast_pair(p, s.bytes);
    net = uniform_broadcast_network(s.comm_size, pair);
    a.network = "uniform LogGPS";
    if (params.broadcast)
      a.notes.push_back("the calibrated pairs do not cover this communicator's ranks: every pair is LogGPS's");
  }
  if (pairs && !pairs->empty()) {
    if (s.members.size() == s.comm_size) {
      for (std::size_t u = 0; u < net.nodes; ++u)
        for (std::size_t v = 0; v < net.nodes; ++v)
          net.latency[u * net.nodes + v] += 1e-9 * static_cast<double>(pairs->ns(s.members[u], s.members[v]));
      a.network += " + the per-pair latencies";
      pairs_used = true;
    } else {
      a.notes.push_back("the per-pair latencies need the communicator's members: not applied");
    }
  }
  const std::uint32_t root = std::min(s.root, s.comm_size - 1);
  a.algorithms.push_back({"flat tree", flat_tree_time(net, root), false});
  a.algorithms.push_back({"binomial tree", binomial_tree_time(net, root, BinomialOrder::Mpich), false});
  a.auto_bcast = auto_broadcast(net, root, mpich_bcast_is_binomial(s.comm_size, s.bytes), pairs_used ? 0.0 : residual_s).algorithm;
  const EssspTree e = esssp_tree(net, root);
  a.algorithms.push_back({"E-SSSP", completion_time(e.tree, net), false});
  a.algorithms.push_back({"E-SSSP + labeling", completion_time(label_tree(e.tree, net).tree, net), false});
  // On pairs that differ MPICH's binomial tree is timed on them too, not by the uniform replay.
  if ((calibrated || pairs_used) && mpich.algo == CollAlgo::BcastBinomial) {
    // Under the delay apparatus MPICH's default runs as libmstep's copy: no residual of MPICH's.
    a.algorithms.front().predicted_s = a.algorithms[2].predicted_s + (pairs_used ? 0.0 : residual_s);
    a.notes.push_back("MPICH's binomial tree timed on the same network");
  } else if (pairs_used) {
    a.notes.push_back("MPICH's default replayed without the per-pair latencies");
  }
}

}  // namespace

CollectiveAdvice advise_collective(const CollectiveSite& site, const CalibrationParams& params,
                                   const PairLatency* pairs) {
  if (!params.loggps) throw std::invalid_argument("collective advice needs LogGPS parameters");
  if (site.op != Op::Barrier && site.op != Op::Bcast)
    throw std::invalid_argument(fmt::format("no advice for {}: only MPI_Barrier and MPI_Bcast", mpi_name(site.op)));
  if (site.comm_size == 0) throw std::invalid_argument("collective advice: a communicator of 0 ranks");
  const LogGPSParams& p = *params.loggps;
  CollectiveAdvice a;
  a.site = site;
  const CollShape mpich = choose_collective(site.op, site.comm_size, site.root, site.bytes);
  AlgorithmEstimate deflt{fmt::format("MPICH default: {}", coll_algo_name(mpich.algo)), 0, true};
  double residual_s = 0;
  if (site.comm_size <= kAdviseMaxReplayRanks) {
    deflt.predicted_s = isolated_collective_s(site.op, site.comm_size, site.root, site.bytes, p);
    // MPICH's own collective costs more than its messages (its software path: the report's replay
    // adds the residual measured at calibration); libmstep's programs of messages were not measured.
    if (params.collectives.contains(site.op)) {
      const double with = isolated_collective_s(site.op, site.comm_size, site.root, site.bytes, p, {}, &params.collectives);
      residual_s = with - deflt.predicted_s;
      deflt.predicted_s = with;
    }
  } else {
    deflt.predicted_s = std::numeric_limits<double>::quiet_NaN();
    a.notes.push_back(fmt::format("MPICH's default not replayed for {} ranks (above {})", site.comm_size,
                                  kAdviseMaxReplayRanks));
  }
  a.algorithms.push_back(deflt);
  if (site.op == Op::Barrier) {
    if (pairs && !pairs->empty() && site.members.size() == site.comm_size) {
      barrier_algorithms_on_pairs(a, p, *pairs);
    } else {
      barrier_algorithms(a, p);
      if (pairs && !pairs->empty())
        a.notes.push_back("the per-pair latencies need the communicator's members: the barrier estimates take one L");
    }
  } else {
    bcast_algorithms(a, params, p, mpich, pairs, residual_s);
  }

  if (residual_s != 0 && !(pairs && !pairs->empty() && site.members.size() == site.comm_size))
    a.notes.push_back(fmt::format("MPICH's default includes {:+.3f} us a call measured at calibration beyond its messages "
                                  "(its software path; the report's replay charges the same)", residual_s * 1e6));
  a.default_s = a.algorithms.front().predicted_s;
  const AlgorithmEstimate* best = nullptr;
  for (const AlgorithmEstimate& e : a.algorithms) {
    if (std::isnan(e.predicted_s)) continue;
    if (!best || e.predicted_s < best->predicted_s) best = &e;  // strict: the default wins a tie
  }
  if (best) {
    a.best = best->name;
    a.best_s = best->predicted_s;
  }
  if (best && !std::isnan(a.default_s)) {
    a.gain_per_call_s = a.default_s - a.best_s;
    a.gain_s = a.gain_per_call_s * site.calls_per_rank();
  }
  return a;
}

std::string algorithm_that_ran(const CollectiveAdvice& a, const RunMeta& meta) {
  const auto has = [&](const std::string& name) {
    return std::any_of(a.algorithms.begin(), a.algorithms.end(), [&](const AlgorithmEstimate& e) { return e.name == name; })
               ? name
               : std::string();
  };
  const std::string mpich = a.algorithms.empty() ? std::string() : a.algorithms.front().name;
  if (a.site.op == Op::Barrier) {
    const std::optional<BarrierName> b = parse_barrier_name(meta.barrier_substitute);
    if (!b) return "";
    const BarrierName ran = b->algo == BarrierAlgo::Auto
                                ? auto_barrier_runs({meta.auto_L, meta.auto_o, meta.auto_o, meta.auto_g}, a.site.comm_size,
                                                    meta.delayed, meta.auto_native_mpich,
                                                    mpich_barrier_round_s(meta.auto_mpich))
                                : *b;
    switch (ran.algo) {
      case BarrierAlgo::Mpi: return mpich;
      case BarrierAlgo::Central: return has("central counter");
      case BarrierAlgo::Tree: return has(arity_name(static_cast<std::uint32_t>(ran.arity)));
      case BarrierAlgo::Dissemination: return has("dissemination");
      case BarrierAlgo::Auto: break;
    }
    return "";
  }
  const std::optional<BcastAlgo> c = parse_bcast_name(meta.bcast_substitute);
  if (!c) return "";
  switch (*c) {
    case BcastAlgo::Mpi: return mpich;
    case BcastAlgo::Flat: return has("flat tree");
    case BcastAlgo::Binomial: return has("binomial tree");
    case BcastAlgo::Esssp: return has("E-SSSP + labeling");
    case BcastAlgo::Auto:
      switch (a.auto_bcast) {
        case AutoBroadcast::Flat: return has("flat tree");
        case AutoBroadcast::Esssp: return has("E-SSSP + labeling");
        case AutoBroadcast::Binomial: return has("binomial tree");
        case AutoBroadcast::Mpich:
          return meta.delayed && mpich_bcast_is_binomial(a.site.comm_size, a.site.bytes) ? has("binomial tree") : mpich;
      }
  }
  return "";
}

}  // namespace mstep::model
