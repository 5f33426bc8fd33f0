#include "model/cost/barrier_pairs.hpp"

#include <algorithm>
#include <deque>
#include <stdexcept>
#include <vector>

namespace mstep::model {
namespace {

constexpr std::uint32_t kAnySource = 0xffffffffu;

struct Op {
  bool send = false;
  std::uint32_t peer = 0;  // kAnySource: a receive from whoever comes first
};

// Runs the programs (every rank's blocking sends and receives) to the end; the latest exit.
double run_programs(const std::vector<std::vector<Op>>& programs, const LogPBarrierParams& p,
                    const PairLatencyFn& latency) {
  const auto n = static_cast<std::uint32_t>(programs.size());
  std::vector<std::size_t> pc(n, 0);
  std::vector<double> t(n, 0), last_send(n, -1e300);
  // Messages sent to each rank and not yet received: (arrival, sender).
  std::vector<std::deque<std::pair<double, std::uint32_t>>> inbox(n);
  std::vector<std::uint32_t> pending_sends_to(n, 0);  // sends still to come, per receiver (any-source)
  for (const auto& prog : programs)
    for (const Op& op : prog)
      if (op.send) ++pending_sends_to[op.peer];
  for (bool progress = true; progress;) {
    progress = false;
    for (std::uint32_t r = 0; r < n; ++r) {
      while (pc[r] < programs[r].size()) {
        const Op& op = programs[r][pc[r]];
        if (op.send) {
          const double start = std::max(t[r], last_send[r] + p.g);
          t[r] = start + p.o_s;
          last_send[r] = start;
          inbox[op.peer].emplace_back(start + p.o_s + latency(r, op.peer), r);
          --pending_sends_to[op.peer];
        } else {
          auto& box = inbox[r];
          auto it = box.end();
          if (op.peer == kAnySource) {
            // The earliest arrival, once no message still to be sent could come before it: wait
            // until every sender to this rank has sent (the central counter's root takes them all).
            if (pending_sends_to[r] == 0 && !box.empty()) it = std::min_element(box.begin(), box.end());
          } else {
            it = std::find_if(box.begin(), box.end(), [&](const auto& m) { return m.second == op.peer; });
          }
          if (it == box.end()) break;  // blocked until the message is sent
          t[r] = std::max(t[r], it->first) + p.o_r;
          box.erase(it);
        }
        ++pc[r];
        progress = true;
      }
    }
  }
  for (std::uint32_t r = 0; r < n; ++r)
    if (pc[r] != programs[r].size()) throw std::logic_error("barrier program deadlocked");
  return n ? *std::max_element(t.begin(), t.end()) : 0;
}

void check(std::uint32_t P) {
  if (P == 0) throw std::invalid_argument("barrier: the number of processes must be at least 1");
}

// MPICH's binomial broadcast from rank 0 (interpose/substitute.cpp's binomial_bcast), appended.
void binomial_from_0(std::vector<std::vector<Op>>& prog) {
  const auto n = static_cast<std::uint32_t>(prog.size());
  for (std::uint32_t r = 0; r < n; ++r) {
    std::uint32_t mask = 1;
    while (mask < n) {
      if (r & mask) {
        prog[r].push_back({false, r - mask});
        break;
      }
      mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
      if (r + mask < n) prog[r].push_back({true, r + mask});
  }
}

}  // namespace

double central_counter_barrier(const LogPBarrierParams& p, std::uint32_t P, const PairLatencyFn& latency) {
  check(P);
  std::vector<std::vector<Op>> prog(P);
  for (std::uint32_t r = 1; r < P; ++r) prog[r] = {{true, 0}, {false, 0}};
  for (std::uint32_t r = 1; r < P; ++r) prog[0].push_back({false, kAnySource});
  for (std::uint32_t r = 1; r < P; ++r) prog[0].push_back({true, r});
  return run_programs(prog, p, latency);
}

double combining_tree_barrier(const LogPBarrierParams& p, std::uint32_t P, std::uint32_t arity,
                              const PairLatencyFn& latency) {
  check(P);
  if (arity < 2) throw std::invalid_argument("combining tree barrier: arity must be at least 2");
  std::vector<std::vector<Op>> prog(P);
  for (std::uint32_t r = 0; r < P; ++r) {
    const std::uint64_t first = std::uint64_t{arity} * r + 1;
    for (std::uint64_t c = first; c < first + arity && c < P; ++c) prog[r].push_back({false, static_cast<std::uint32_t>(c)});
    if (r != 0) prog[r].push_back({true, (r - 1) / arity});
  }
  binomial_from_0(prog);
  return run_programs(prog, p, latency);
}

double dissemination_barrier(const LogPBarrierParams& p, std::uint32_t P, const PairLatencyFn& latency) {
  check(P);
  std::vector<std::vector<Op>> prog(P);
  for (std::uint32_t d = 1; d < P; d <<= 1)
    for (std::uint32_t r = 0; r < P; ++r) {
      prog[r].push_back({true, (r + d) % P});
      prog[r].push_back({false, (r + P - d) % P});
    }
  return run_programs(prog, p, latency);
}

}  // namespace mstep::model
