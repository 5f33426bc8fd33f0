#include "tools/calibrate/collectives.hpp"

#include <algorithm>
#include <array>

namespace mstep::calib {

namespace {

// The blocking collectives the replay decomposes, and
// MPI_Sendrecv with the other rank: an exchange, two messages at once in opposite directions, which
// a transport may not overlap as the model does (over UCX's TCP it takes 1.3-1.7 half round trips:
// tests/bench/exchange.c); and the same exchange made of MPI_Irecv, MPI_Isend and MPI_Waitall (the
// halo exchange of most stencil codes; its entry is Op::Waitall).
constexpr std::array kOps{Op::Barrier,   Op::Bcast,      Op::Reduce,   Op::Allreduce, Op::Gather,
                          Op::Gatherv,   Op::Scatter,    Op::Scatterv, Op::Allgather, Op::Allgatherv,
                          Op::Alltoall,  Op::Alltoallv,  Op::Reduce_scatter_block, Op::Reduce_scatter,
                          Op::Scan,      Op::Exscan,     Op::Sendrecv, Op::Waitall};

// One call of `op` with blocks of m bytes on two ranks, root 0 (reductions: m / 4 ints, at least 1).
void call(Op op, MPI_Comm c, int m, char* a, char* b) {
  const int ints = std::max(m / 4, 1);
  const int counts[2] = {m, m}, displs[2] = {0, m}, icounts[2] = {ints, ints};
  switch (op) {
    case Op::Barrier: MPI_Barrier(c); break;
    case Op::Bcast: MPI_Bcast(a, m, MPI_BYTE, 0, c); break;
    case Op::Reduce: MPI_Reduce(a, b, ints, MPI_INT, MPI_SUM, 0, c); break;
    case Op::Allreduce: MPI_Allreduce(a, b, ints, MPI_INT, MPI_SUM, c); break;
    case Op::Gather: MPI_Gather(a, m, MPI_BYTE, b, m, MPI_BYTE, 0, c); break;
    case Op::Gatherv: MPI_Gatherv(a, m, MPI_BYTE, b, counts, displs, MPI_BYTE, 0, c); break;
    case Op::Scatter: MPI_Scatter(a, m, MPI_BYTE, b, m, MPI_BYTE, 0, c); break;
    case Op::Scatterv: MPI_Scatterv(a, counts, displs, MPI_BYTE, b, m, MPI_BYTE, 0, c); break;
    case Op::Allgather: MPI_Allgather(a, m, MPI_BYTE, b, m, MPI_BYTE, c); break;
    case Op::Allgatherv: MPI_Allgatherv(a, m, MPI_BYTE, b, counts, displs, MPI_BYTE, c); break;
    case Op::Alltoall: MPI_Alltoall(a, m, MPI_BYTE, b, m, MPI_BYTE, c); break;
    case Op::Alltoallv: MPI_Alltoallv(a, counts, displs, MPI_BYTE, b, counts, displs, MPI_BYTE, c); break;
    case Op::Reduce_scatter_block: MPI_Reduce_scatter_block(a, b, ints, MPI_INT, MPI_SUM, c); break;
    case Op::Reduce_scatter: MPI_Reduce_scatter(a, b, icounts, MPI_INT, MPI_SUM, c); break;
    case Op::Scan: MPI_Scan(a, b, ints, MPI_INT, MPI_SUM, c); break;
    case Op::Exscan: MPI_Exscan(a, b, ints, MPI_INT, MPI_SUM, c); break;
    case Op::Sendrecv: {
      int me = 0;
      MPI_Comm_rank(c, &me);
      MPI_Sendrecv(a, m, MPI_BYTE, 1 - me, 0, b, m, MPI_BYTE, 1 - me, 0, c, MPI_STATUS_IGNORE);
      break;
    }
    case Op::Waitall: {
      int me = 0;
      MPI_Comm_rank(c, &me);
      MPI_Request requests[2];
      MPI_Irecv(b, m, MPI_BYTE, 1 - me, 0, c, &requests[0]);
      MPI_Isend(a, m, MPI_BYTE, 1 - me, 0, c, &requests[1]);
      MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
      break;
    }
    default: break;
  }
}

// Seconds per call of `calls` back-to-back calls, both ranks' mean (on every rank).
double loop(Op op, const Comm& pair, int m, int calls, char* a, char* b) {
  MPI_Barrier(pair.get());
  const double t0 = now();
  for (int k = 0; k < calls; ++k) call(op, pair.get(), m, a, b);
  const double mine = (now() - t0) / calls;
  double sum = 0;
  MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, pair.get());
  return sum / 2;
}

// Seconds per call inside `calls` calls each after `gap` seconds of computation (a spin on the
// clock, no MPI call: the last call's messages settle), appended to `inside` (this rank's).
void isolated_loop(Op op, const Comm& pair, int m, int calls, double gap, char* a, char* b, std::vector<double>& inside) {
  MPI_Barrier(pair.get());
  for (int k = 0; k < calls; ++k) {
    const double until = now() + gap;
    while (now() < until) {
    }
    const double t0 = now();
    call(op, pair.get(), m, a, b);
    inside.push_back(now() - t0);
  }
}

// The mean of the fastest nine tenths of one rank's isolated calls, both ranks' mean (on every
// rank). Each call stands alone, so one preempted call (this VM's: 100 us and more) would move a
// mean of a few dozen by microseconds: the slowest tenth is left out.
double trimmed_mean(std::vector<double> inside, const Comm& pair) {
  std::sort(inside.begin(), inside.end());
  const std::size_t keep = std::max<std::size_t>(1, inside.size() - inside.size() / 10);
  double mine = 0;
  for (std::size_t i = 0; i < keep; ++i) mine += inside[i];
  mine /= static_cast<double>(keep);
  double sum = 0;
  MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, pair.get());
  return sum / 2;
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace

std::vector<std::uint64_t> sizes_around(std::uint64_t S) {
  std::vector<std::uint64_t> sizes{8, 1024, 65536, kLargestSize};
  if (S < model::kInfiniteBytes && S > 2048)
    for (const std::uint64_t m : {S / 2, S, 4 * S})
      if (m <= kLargestSize) sizes.push_back(m);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

model::CollectiveTable measure_collectives(const Comm& pair, std::vector<char>& send_buf, std::vector<char>& recv_buf,
                                           const CollectiveOptions& options) {
  model::CollectiveTable table;
  for (const Op op : kOps) {
    if ((op == Op::Sendrecv || op == Op::Waitall) && !options.exchanges) continue;
    model::CollectiveTimes& t = table[op];
    const bool exchange = op == Op::Sendrecv || op == Op::Waitall;
    for (const std::uint64_t size : options.sizes) {
      if (op == Op::Barrier && !t.bytes.empty()) break;  // a barrier moves no bytes: one size
      const std::uint64_t m = op == Op::Barrier ? 0 : size;
      if (2 * m > send_buf.size() || 2 * m > recv_buf.size()) break;
      const int mi = static_cast<int>(m);
      char* a = send_buf.data();
      char* b = recv_buf.data();
      // Warm-up, and the number of calls that fills the budget (the same on both ranks). An
      // exchange's residual is added to every Sendrecv of a run, so it gets three rounds even in
      // the quick mode: one quick round over TCP once measured 177 us at S where 61 was the rule.
      const double first = loop(op, pair, mi, exchange ? 16 : 4, a, b);
      const int calls = std::clamp(static_cast<int>(options.loop_budget / std::max(first, 1e-9)), 4, 400);
      const int rounds = exchange ? std::max(options.rounds, 3) : options.rounds;
      std::vector<double> per_call;
      for (int r = 0; r < rounds; ++r) per_call.push_back(loop(op, pair, mi, calls, a, b));
      t.bytes.push_back(m);
      t.measured_s.push_back(median(per_call));
      // Isolated (MPI_Waitall's exchange: the computation before its MPI_Irecv).
      if (options.isolated_gap > 0) {
        const double gap = options.isolated_gap;
        const int isolated_calls = std::clamp(static_cast<int>(options.isolated_budget / (first + gap)), 4, 100);
        std::vector<double> inside;
        for (int r = 0; r < rounds; ++r) isolated_loop(op, pair, mi, isolated_calls, gap, a, b, inside);
        t.isolated_gap_s = gap;
        t.isolated_measured_s.push_back(trimmed_mean(std::move(inside), pair));
      }
    }
  }
  return table;
}

}  // namespace mstep::calib
