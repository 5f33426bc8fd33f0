#include "tools/calibrate/pt2pt.hpp"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

namespace mstep::calib {
namespace {

constexpr int kTagData = 11, kTagReply = 12, kTagGo = 13, kTagAck = 14;

// One side of the pair. The first rank ("a", the client of Netgauge) times; the second ("b")
// answers, and times its receives for the receive overhead.
struct Engine {
  MPI_Comm c;
  bool a;
  int peer;
  char* sb;
  char* rb;

  // PRTT(n,d,k): n messages of k bytes, d seconds apart, then one back. Returns the time on a;
  // with `sends`, a's time inside each MPI_Send.
  double prtt(std::uint64_t k, int n, double d, std::vector<double>* sends = nullptr) {
    if (!a) {
      for (int i = 0; i < n; ++i) recv(rb, k, peer, kTagData, c);
      send(sb, k, peer, kTagReply, c);
      return 0;
    }
    const double t0 = now();
    for (int i = 0; i < n; ++i) {
      const double s0 = now();
      send(sb, k, peer, kTagData, c);
      if (sends) sends->push_back(now() - s0);
      if (d > 0 && i + 1 < n) spin(d);
    }
    recv(rb, k, peer, kTagReply, c);
    return now() - t0;
  }

  // a sends n messages back to back; b waits d before each receive after the first, so that the
  // message is there, and records the time inside MPI_Recv (Netgauge's o_r).
  void recv_overhead(std::uint64_t k, int n, double d, std::vector<double>& recvs) {
    if (a) {
      for (int i = 0; i < n; ++i) send(sb, k, peer, kTagData, c);
      recv(rb, 0, peer, kTagReply, c);
      return;
    }
    recv(rb, k, peer, kTagData, c);
    for (int i = 1; i < n; ++i) {
      spin(d);
      const double t0 = now();
      recv(rb, k, peer, kTagData, c);
      recvs.push_back(now() - t0);
    }
    send(sb, 0, peer, kTagReply, c);
  }

  // a announces a send, then times a blocking send of k bytes; b posts its receive `late`
  // seconds after the announcement. Returns a's time inside MPI_Send.
  double late_send(std::uint64_t k, double late) {
    if (!a) {
      recv(rb, 0, peer, kTagGo, c);
      if (late > 0) spin(late);
      recv(rb, k, peer, kTagData, c);
      send(sb, 0, peer, kTagAck, c);
      return 0;
    }
    send(sb, 0, peer, kTagGo, c);
    const double t0 = now();
    send(sb, k, peer, kTagData, c);
    const double t = now() - t0;
    recv(rb, 0, peer, kTagAck, c);
    return t;
  }

  // The extra time a blocking send spends when its receive is posted `late` seconds after it
  // started: about `late` for a synchronous send, about 0 for an eager one. Median over reps
  // alternating early and late, on a; broadcast so that both sides agree.
  double late_wait(std::uint64_t k, double late, int reps) {
    std::vector<double> early_t, late_t;
    for (int r = 0; r < reps; ++r) {
      early_t.push_back(late_send(k, 0));
      late_t.push_back(late_send(k, late));
    }
    // Plain medians: a sender that loses its CPU between announcing and sending gives a late
    // sample that did not wait, and the stretch cut of robust_summary would keep only that one.
    double wait = a ? model::median(late_t) - model::median(early_t) : 0;
    MPI_Bcast(&wait, 1, MPI_DOUBLE, 0, c);
    return wait;
  }

  // a: Isend of k bytes, computes `busy` seconds, Wait; b: Irecv, Wait. b's time inside its Wait,
  // median over reps, on both ranks. About the transfer's time if the data moves without a, about
  // `busy` if it waits for a's Wait.
  double pushed_wait(std::uint64_t k, double busy, int reps) {
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
      MPI_Request q;
      MPI_Barrier(c);
      if (a) {
        MPI_Isend(sb, static_cast<int>(k), MPI_CHAR, peer, kTagData, c, &q);
        spin(busy);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
      } else {
        MPI_Irecv(rb, static_cast<int>(k), MPI_CHAR, peer, kTagData, c, &q);
        const double t0 = now();
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        t.push_back(now() - t0);
      }
    }
    double w = a ? 0 : model::median(t);
    MPI_Bcast(&w, 1, MPI_DOUBLE, 1, c);
    return w;
  }

  bool bcast_flag(bool v) {
    int x = v ? 1 : 0;
    MPI_Bcast(&x, 1, MPI_INT, 0, c);
    return x != 0;
  }
};

int train_length(std::uint64_t k) { return k < 65536 ? 8 : 6; }

std::string size_text(std::uint64_t b) {
  if (b >= 1048576 && b % 1048576 == 0) return fmt::format("{} MiB", b / 1048576);
  if (b >= 1024 && b % 1024 == 0) return fmt::format("{} KiB", b / 1024);
  return fmt::format("{} B", b);
}

// Warm up: touch the buffers, then 8-byte ping-pongs in batches until two batch medians agree
// within 10% (a freshly started job is often scheduled badly for a while).
bool warm_up(Engine& e, std::uint64_t max_size, double max_seconds) {
  for (int i = 0; i < 2; ++i) e.prtt(max_size, 1, 0);
  const double start = now();
  double previous = 0;
  for (;;) {
    std::vector<double> t;
    for (int i = 0; i < 200; ++i) t.push_back(e.prtt(8, 1, 0));
    const double m = model::median(t);
    const bool stable = previous > 0 && std::abs(m - previous) <= 0.1 * previous;
    const bool out_of_time = now() - start > max_seconds;
    if (!e.bcast_flag(!stable && !out_of_time)) return stable;
    previous = m;
  }
}

}  // namespace

Pt2ptResult measure_pt2pt(const Comm& pair, std::vector<char>& send_buf, std::vector<char>& recv_buf,
                          const Pt2ptOptions& o) {
  Pt2ptResult out;
  const double start = now();
  Engine e{pair.get(), pair.rank() == 0, 1 - pair.rank(), send_buf.data(), recv_buf.data()};
  const std::size_t ns = o.sizes.size();
  auto progress = [&](const std::string& line) {
    if (e.a && o.progress) std::fprintf(stderr, "mstep_calib: %s\n", line.c_str()), std::fflush(stderr);
  };

  if (!warm_up(e, o.sizes.back(), o.warmup_max) && e.a)
    out.warnings.push_back("the 8-byte round trip did not settle during the warm-up: a busy machine?");

  // Pilot: a round trip per size sets the delays of PRTT(n,d,k) and the repetitions.
  std::vector<double> rtt(ns);
  for (std::size_t i = 0; i < ns; ++i) {
    std::vector<double> t;
    for (int r = 0; r < 9; ++r) t.push_back(e.prtt(o.sizes[i], 1, 0));
    rtt[i] = model::median(t);
  }
  MPI_Bcast(rtt.data(), static_cast<int>(ns), MPI_DOUBLE, 0, e.c);
  std::vector<int> reps(ns);
  for (std::size_t i = 0; i < ns; ++i) {
    const double cost = rtt[i] * (1 + 2.5 * train_length(o.sizes[i]));
    reps[i] = std::clamp(static_cast<int>(o.size_round_budget / cost), o.reps_min, o.reps_max);
  }

  // Rounds over all sizes, alternating direction; within a size the kinds of measurement
  // alternate too, so that a slow spell of the machine hits all of them alike.
  std::vector<std::vector<double>> pp(ns), train(ns), sends(ns), recvs(ns);
  for (int round = 0;; ++round) {
    for (std::size_t j = 0; j < ns; ++j) {
      const std::size_t i = round % 2 == 0 ? j : ns - 1 - j;
      const std::uint64_t k = o.sizes[i];
      const int n = train_length(k);
      const double d = rtt[i];
      for (int r = 0; r < reps[i]; ++r) {
        const double t1 = e.prtt(k, 1, 0);
        const double tn = e.prtt(k, n, 0);
        e.prtt(k, n, d, &sends[i]);  // PRTT(n,d,k): the time of each send, spaced by d
        e.recv_overhead(k, n, d, recvs[i]);
        if (e.a) pp[i].push_back(t1), train[i].push_back(tn);
      }
    }
    out.rounds = round + 1;
    const double elapsed = now() - start;
    progress(fmt::format("point-to-point round {} done ({:.1f} s)", out.rounds, elapsed));
    const bool more = out.rounds < o.rounds_min ||
                      (out.rounds < o.rounds_max && elapsed < o.budget * out.rounds / (out.rounds + 1));
    if (!e.bcast_flag(more)) break;
  }

  // b's receive overheads to a.
  std::vector<double> recv_med(ns);
  if (!e.a)
    for (std::size_t i = 0; i < ns; ++i) recv_med[i] = model::robust_summary(recvs[i]).median;
  if (e.a) MPI_Recv(recv_med.data(), static_cast<int>(ns), MPI_DOUBLE, 1, kTagReply, e.c, MPI_STATUS_IGNORE);
  else MPI_Send(recv_med.data(), static_cast<int>(ns), MPI_DOUBLE, 0, kTagReply, e.c);

  // S: every size against a receiver that posts 3 round trips (at least 50 us) late; then the
  // byte where sends start to wait, by bisection between the last eager and first waiting size.
  auto lateness = [&](std::size_t i) { return std::max(50e-6, 3 * rtt[i]); };
  std::vector<double> wait(ns);
  std::vector<bool> sync(ns);
  for (std::size_t i = 0; i < ns; ++i) {
    wait[i] = e.late_wait(o.sizes[i], lateness(i), o.late_reps);
    sync[i] = wait[i] > lateness(i) / 2;
  }
  const std::size_t first = model::synchronous_from(sync);
  if (first < ns) {
    std::uint64_t lo = first == 0 ? 0 : o.sizes[first - 1], hi = o.sizes[first];
    const double late = lateness(first);
    while (hi - lo > 1) {
      const std::uint64_t mid = lo + (hi - lo) / 2;
      const double w = e.late_wait(mid, late, o.late_reps);
      (w > late / 2 ? hi : lo) = mid;
    }
    out.S = hi;
  }
  // Progress: does a rendezvous move while its sender computes? At the first synchronous size,
  // with a sender busy for 10 round trips (at least 100 us) after its Isend.
  if (first < ns) {
    out.push_bytes = std::max<std::uint64_t>(out.S, o.sizes[first]);
    out.push_compute = std::max(100e-6, 10 * rtt[first]);
    out.push_wait = e.pushed_wait(out.push_bytes, out.push_compute, o.late_reps);
    out.push = out.push_wait > out.push_compute / 2;
  }
  progress(fmt::format("synchronous sends from {} ({:.1f} s)",
                       out.S == model::kInfiniteBytes ? std::string("no size measured") : fmt::format("{} bytes", out.S),
                       now() - start));

  if (e.a) {
    for (std::size_t i = 0; i < ns; ++i) {
      const std::uint64_t k = o.sizes[i];
      const int n = train_length(k);
      model::PrttPoint p;
      p.bytes = k;
      const double t1 = model::robust_summary(pp[i]).median;
      p.half_rtt = t1 / 2;
      p.gap = (model::robust_summary(train[i]).median - t1) / (n - 1);
      if (p.gap <= 0) {
        out.warnings.push_back(fmt::format("the train of {} messages took no longer than one: gap set to 1 ns", size_text(k)));
        p.gap = 1e-9;
      }
      p.send_overhead = model::robust_summary(sends[i]).median;
      p.recv_overhead = recv_med[i];
      out.points.push_back(p);
      out.raw.push_back({k, p.half_rtt, p.gap, p.send_overhead, p.recv_overhead, wait[i], sync[i]});
      if (k == 8) out.half_rtt_8B = p.half_rtt;
    }
    std::size_t lone = 0;
    for (std::size_t i = 0; i < first && i < ns; ++i) lone += sync[i] ? 1 : 0;
    if (lone > 0)
      out.warnings.push_back(fmt::format("{} size(s) below S looked synchronous in the late-receiver test: a busy machine?", lone));
  }
  out.seconds = now() - start;
  return out;
}

double probe_half_rtt_8B(const Comm& pair, std::vector<char>& send_buf, std::vector<char>& recv_buf) {
  constexpr int kRounds = 33;
  Engine e{pair.get(), pair.rank() == 0, 1 - pair.rank(), send_buf.data(), recv_buf.data()};
  std::vector<double> rtt;
  for (int i = 0; i < kRounds; ++i) rtt.push_back(e.prtt(8, 1, 0));  // PRTT(1, 0, 8): a round trip
  double half = e.a ? model::median(rtt) / 2 : 0;
  MPI_Bcast(&half, 1, MPI_DOUBLE, 0, pair.get());  // rank 0's (the timing side), the one the parameters take
  return half;
}

}  // namespace mstep::calib
