#include "tools/calibrate/patterns.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <fmt/format.h>

#include "model/cost/collectives.hpp"

namespace mstep::calib {
namespace {

constexpr int kTagPattern = 21, kTagReady = 22, kTagInject = 23, kTagExchange = 24, kTagMedian = 25;

enum class Pattern { Exchange, PingPong, OneToAll, AllToOne, AllToAll, OneToAllBcast };
constexpr Pattern kPatterns[] = {Pattern::Exchange, Pattern::PingPong, Pattern::OneToAll,
                                 Pattern::AllToOne, Pattern::AllToAll, Pattern::OneToAllBcast};

const char* name(Pattern p) {
  switch (p) {
    case Pattern::Exchange: return "Exchange";
    case Pattern::PingPong: return "PingPong";
    case Pattern::OneToAll: return "OneToAll";
    case Pattern::AllToOne: return "AllToOne";
    case Pattern::AllToAll: return "AllToAll";
    case Pattern::OneToAllBcast: return "OneToAllBcast";
  }
  return "?";
}

// One execution of a pattern with the message sizes of formula 4:
// h = m_PP = 2 m_E = (p-1) m_OA = (p-1) m_AO = 2 (p-1) m_AA. Exchange and PingPong pair ranks
// (0,1), (2,3), ...; a last odd rank idles. The root of the one-to-all and all-to-one patterns
// is rank 0; the personalised one-to-all sends a different part of its buffer to each rank.
void run(Pattern pat, double h, MPI_Comm w, int rank, int p, char* sb, char* rb) {
  auto size = [&](double parts) { return static_cast<int>(std::max(1.0, std::round(h / parts))); };
  const int partner = rank ^ 1;
  switch (pat) {
    case Pattern::Exchange: {
      if (partner >= p) return;
      const int k = size(2);
      MPI_Sendrecv(sb, k, MPI_BYTE, partner, kTagPattern, rb, k, MPI_BYTE, partner, kTagPattern, w,
                   MPI_STATUS_IGNORE);
      return;
    }
    case Pattern::PingPong: {
      if (partner >= p) return;
      const int k = size(1);
      if (rank % 2 == 0) MPI_Send(sb, k, MPI_BYTE, partner, kTagPattern, w);
      else MPI_Recv(rb, k, MPI_BYTE, partner, kTagPattern, w, MPI_STATUS_IGNORE);
      return;
    }
    case Pattern::OneToAll: {
      const int k = size(p - 1);
      if (rank == 0)
        for (int r = 1; r < p; ++r) MPI_Send(sb + static_cast<std::ptrdiff_t>(r - 1) * k, k, MPI_BYTE, r, kTagPattern, w);
      else MPI_Recv(rb, k, MPI_BYTE, 0, kTagPattern, w, MPI_STATUS_IGNORE);
      return;
    }
    case Pattern::AllToOne: {
      const int k = size(p - 1);
      if (rank == 0)
        for (int i = 0; i + 1 < p; ++i)
          MPI_Recv(rb + static_cast<std::ptrdiff_t>(i) * k, k, MPI_BYTE, MPI_ANY_SOURCE, kTagPattern, w, MPI_STATUS_IGNORE);
      else MPI_Send(sb, k, MPI_BYTE, 0, kTagPattern, w);
      return;
    }
    case Pattern::AllToAll: {
      const int k = size(2.0 * (p - 1));
      std::vector<MPI_Request> req;
      req.reserve(2 * static_cast<std::size_t>(p));
      for (int i = 0, slot = 0; i < p; ++i) {
        if (i == rank) continue;
        req.emplace_back();
        MPI_Irecv(rb + static_cast<std::ptrdiff_t>(slot) * k, k, MPI_BYTE, i, kTagPattern, w, &req.back());
        req.emplace_back();
        MPI_Isend(sb + static_cast<std::ptrdiff_t>(slot) * k, k, MPI_BYTE, i, kTagPattern, w, &req.back());
        ++slot;
      }
      MPI_Waitall(static_cast<int>(req.size()), req.data(), MPI_STATUSES_IGNORE);
      return;
    }
    case Pattern::OneToAllBcast:
      MPI_Bcast(rank == 0 ? sb : rb, size(p - 1), MPI_BYTE, 0, w);
      return;
  }
}

}  // namespace

PatternResult measure_patterns(MPI_Comm w, std::vector<char>& send_buf, std::vector<char>& recv_buf,
                               const PatternOptions& o) {
  PatternResult out;
  const double start = now();
  int rank = 0, p = 0;
  MPI_Comm_rank(w, &rank);
  MPI_Comm_size(w, &p);
  const std::size_t np = std::size(kPatterns), nh = o.h.size();
  std::vector<std::vector<double>> samples(np * nh);
  for (int i = 0; i < 2; ++i)  // warm-up: every pattern once at the largest h
    for (Pattern pat : kPatterns) run(pat, o.h.back(), w, rank, p, send_buf.data(), recv_buf.data());
  for (int round = 0; round < o.rounds; ++round) {
    for (std::size_t j = 0; j < np * nh; ++j) {
      const std::size_t cell = round % 2 == 0 ? j : np * nh - 1 - j;
      const Pattern pat = kPatterns[cell / nh];
      const double h = o.h[cell % nh];
      for (int r = 0; r < o.reps; ++r) {
        MPI_Barrier(w);
        const double t0 = now();
        run(pat, h, w, rank, p, send_buf.data(), recv_buf.data());
        const double t = now() - t0;
        double slowest = 0;
        MPI_Reduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, w);
        if (rank == 0) samples[cell].push_back(slowest);
      }
    }
    const double elapsed = now() - start;
    if (rank == 0 && o.progress)
      std::fprintf(stderr, "mstep_calib: patterns round %d done (%.1f s)\n", round + 1, elapsed);
    int more = elapsed * (round + 2) / (round + 1) < o.budget ? 1 : 0;
    MPI_Bcast(&more, 1, MPI_INT, 0, w);
    if (!more) break;
  }
  if (rank == 0)
    for (std::size_t i = 0; i < np; ++i) {
      model::PatternTimes t{name(kPatterns[i]), {}};
      for (std::size_t j = 0; j < nh; ++j) t.seconds.push_back(model::robust_summary(samples[i * nh + j]).median);
      out.patterns.push_back(std::move(t));
    }
  out.seconds = now() - start;
  return out;
}

BroadcastResult measure_broadcast_inputs(MPI_Comm w, std::vector<char>& send_buf, std::vector<char>& recv_buf,
                                         const BroadcastOptions& o) {
  BroadcastResult out;
  const double start = now();
  int rank = 0, p = 0;
  MPI_Comm_rank(w, &rank);
  MPI_Comm_size(w, &p);
  const auto P = static_cast<std::size_t>(p);
  std::vector<double> latency(P * P, 0.0), injection(P * P, 0.0);
  char* sb = send_buf.data();
  char* rb = recv_buf.data();
  const std::uint64_t k = o.bytes;

  // Time spent in MPI_Send from `from` to `to` with the receive already posted.
  auto inject = [&](int from, int to, std::vector<double>& t) {
    if (rank == to) {
      MPI_Request req;
      MPI_Irecv(rb, static_cast<int>(k), MPI_BYTE, from, kTagInject, w, &req);
      send(sb, 0, from, kTagReady, w);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
      recv(rb, 0, to, kTagReady, w);
      const double t0 = now();
      send(sb, k, to, kTagInject, w);
      t.push_back(now() - t0);
    }
  };
  for (int u = 0; u < p; ++u) {
    for (int v = u + 1; v < p; ++v) {
      if (rank == u || rank == v) {
        const int other = rank == u ? v : u;
        std::vector<double> mine, exchange;
        for (int r = 0; r < o.reps; ++r) {
          inject(u, v, mine);
          inject(v, u, mine);
          if (rank == u) {
            const double t0 = now();
            send(sb, k, v, kTagExchange, w);
            recv(rb, k, v, kTagExchange, w);
            exchange.push_back(now() - t0);
          } else {
            recv(rb, k, u, kTagExchange, w);
            send(sb, k, u, kTagExchange, w);
          }
        }
        const double d_mine = model::robust_summary(mine).median;
        injection[static_cast<std::size_t>(rank) * P + static_cast<std::size_t>(other)] = d_mine;
        if (rank == v) {
          MPI_Send(&d_mine, 1, MPI_DOUBLE, u, kTagMedian, w);
        } else {
          double d_other = 0;
          MPI_Recv(&d_other, 1, MPI_DOUBLE, v, kTagMedian, w, MPI_STATUS_IGNORE);
          const double lambda =
              model::lambda_from_exchange(0, model::robust_summary(exchange).median, d_mine, d_other);
          latency[static_cast<std::size_t>(u) * P + static_cast<std::size_t>(v)] = lambda;
          latency[static_cast<std::size_t>(v) * P + static_cast<std::size_t>(u)] = lambda;
        }
      }
      sleepy_barrier(w);
    }
  }
  out.nodes = P;
  out.latency.assign(P * P, 0.0);
  out.injection.assign(P * P, 0.0);
  MPI_Reduce(latency.data(), out.latency.data(), p * p, MPI_DOUBLE, MPI_SUM, 0, w);
  MPI_Reduce(injection.data(), out.injection.data(), p * p, MPI_DOUBLE, MPI_SUM, 0, w);
  out.seconds = now() - start;
  return out;
}

}  // namespace mstep::calib
