#include "model/trace/synthetic.hpp"

#include <algorithm>
#include <random>

namespace mstep::model {
namespace {

constexpr std::uint64_t kStart = 1'000'000;         // ns: Init enter
constexpr std::uint64_t kCallNs = 200;              // a call's own time
constexpr std::uint64_t kRendezvousBytes = 16384;   // the simulated run's S
constexpr std::uint64_t kSizes[] = {8, 1024, 65536};

// One-way time of a message in the simulated run.
std::uint64_t latency(std::uint64_t bytes) { return 1000 + bytes / 10; }

Event call(Op op, std::uint64_t enter, std::uint64_t exit, std::int32_t peer = kNoPeer) {
  Event e;
  e.op = op;
  e.t_enter = enter;
  e.t_exit = std::max(enter, exit);
  e.peer = peer;
  return e;
}

struct Gen {
  int n;
  std::mt19937_64 rng;
  std::vector<RankTrace> out;
  std::vector<std::uint64_t> t;  // each rank's clock: the end of its last call

  std::uint64_t compute() { return 1000 + rng() % 4001; }
  std::uint64_t size() { return kSizes[rng() % 3]; }
  void add(int r, const Event& e) {
    out[static_cast<std::size_t>(r)].events.push_back(e);
    t[static_cast<std::size_t>(r)] = std::max(t[static_cast<std::size_t>(r)], e.t_exit);
  }
};

void ring(Gen& g, std::size_t iterations) {
  const int n = g.n;
  std::vector<std::uint64_t> c(static_cast<std::size_t>(n));
  std::uint32_t request = 0;
  for (std::size_t it = 0; it < iterations; ++it) {
    const std::uint64_t bytes = g.size();
    for (auto& x : c) x = g.compute();
    ++request;
    std::vector<std::uint64_t> next(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) {
      const auto u = static_cast<std::size_t>(r);
      const int left = (r + n - 1) % n, right = (r + 1) % n;
      const std::uint64_t a = g.t[u] + c[u];
      // The left neighbour's Isend starts 300 ns after its computation.
      const std::uint64_t send_left = g.t[static_cast<std::size_t>(left)] + c[static_cast<std::size_t>(left)] + 300;
      Event irecv = call(Op::Irecv, a, a + kCallNs / 2, left);
      irecv.tag = 0;
      irecv.request = 2 * request - 1;
      Event isend = call(Op::Isend, a + 300, a + 300 + kCallNs / 2, right);
      isend.tag = 0;
      isend.send_bytes = bytes;
      isend.request = 2 * request;
      const std::uint64_t w = a + 600;
      const std::uint64_t done = std::max(w, send_left + latency(bytes)) + 100;
      Event got = call(Op::Waitall, w, done, left);
      got.tag = 0;
      got.flags = kRecvHalf;
      got.recv_bytes = bytes;
      got.request = irecv.request;
      Event sent = call(Op::Waitall, w, done);
      sent.flags = kContinuation;
      sent.request = isend.request;
      auto& ev = g.out[u].events;
      ev.push_back(irecv);
      ev.push_back(isend);
      ev.push_back(got);
      ev.push_back(sent);
      next[u] = done;
    }
    g.t = next;
  }
}

void pingpong(Gen& g, std::size_t iterations) {
  for (std::size_t it = 0; it < iterations; ++it) {
    const std::uint64_t bytes = g.size();
    for (int e = 0; e + 1 < g.n; e += 2) {
      const int o = e + 1;
      const auto ue = static_cast<std::size_t>(e), uo = static_cast<std::size_t>(o);
      const std::uint64_t ts = g.t[ue] + g.compute();
      const std::uint64_t tr = g.t[uo] + 100;
      const bool rndv = bytes >= kRendezvousBytes;
      const std::uint64_t sent = std::max(ts, rndv ? tr : ts) + kCallNs;
      const std::uint64_t got = std::max(tr, ts + latency(bytes)) + 100;
      const std::uint64_t ts2 = got + g.compute();
      const std::uint64_t tr2 = sent + 50;
      const std::uint64_t sent2 = std::max(ts2, rndv ? tr2 : ts2) + kCallNs;
      const std::uint64_t got2 = std::max(tr2, ts2 + latency(bytes)) + 100;
      Event s1 = call(Op::Send, ts, sent, o), r1 = call(Op::Recv, tr, got, e);
      Event s2 = call(Op::Send, ts2, sent2, e), r2 = call(Op::Recv, tr2, got2, o);
      s1.tag = s2.tag = r1.tag = r2.tag = 1;
      s1.send_bytes = s2.send_bytes = r1.recv_bytes = r2.recv_bytes = bytes;
      g.add(e, s1);
      g.add(o, r1);
      g.add(o, s2);
      g.add(e, r2);
    }
    if (g.n % 2) g.t[static_cast<std::size_t>(g.n - 1)] += g.compute();
  }
}

void random_shifts(Gen& g, std::size_t iterations) {
  const int n = g.n;
  std::vector<std::uint64_t> a(static_cast<std::size_t>(n));
  for (std::size_t it = 0; it < iterations; ++it) {
    const int s = n > 1 ? 1 + static_cast<int>(g.rng() % static_cast<std::uint64_t>(n - 1)) : 0;
    const std::uint64_t bytes = g.size();
    for (int r = 0; r < n; ++r) a[static_cast<std::size_t>(r)] = g.t[static_cast<std::size_t>(r)] + g.compute();
    for (int r = 0; r < n; ++r) {
      const int dst = (r + s) % n, src = (r + n - s) % n;
      const auto u = static_cast<std::size_t>(r);
      std::uint64_t done = std::max(a[u], a[static_cast<std::size_t>(src)] + latency(bytes));
      if (bytes >= kRendezvousBytes) done = std::max(done, a[static_cast<std::size_t>(dst)] + latency(bytes));
      done += 100;
      Event send = call(Op::Sendrecv, a[u], done, dst);
      send.tag = 2;
      send.send_bytes = bytes;
      Event recv = call(Op::Sendrecv, a[u], done, src);
      recv.tag = 2;
      recv.flags = kContinuation | kRecvHalf;
      recv.recv_bytes = bytes;
      g.out[u].events.push_back(send);
      g.out[u].events.push_back(recv);
      g.t[u] = done;
    }
    if (it % 16 == 15) {  // an 8-byte MPI_Allreduce
      std::uint64_t last = 0;
      for (int r = 0; r < n; ++r) {
        a[static_cast<std::size_t>(r)] = g.t[static_cast<std::size_t>(r)] + g.compute();
        last = std::max(last, a[static_cast<std::size_t>(r)]);
      }
      for (int r = 0; r < n; ++r) {
        Event e = call(Op::Allreduce, a[static_cast<std::size_t>(r)], last + 2000);
        e.send_bytes = e.recv_bytes = 8 * static_cast<std::uint64_t>(n - 1);
        g.add(r, e);
      }
    }
  }
}

void alltoall(Gen& g, std::size_t iterations) {
  const int n = g.n;
  std::vector<std::uint64_t> a(static_cast<std::size_t>(n));
  std::uint64_t rounds = 0;  // ceil(log2 n): the simulated exchange's depth
  while ((std::uint64_t{1} << rounds) < static_cast<std::uint64_t>(n)) ++rounds;
  for (std::size_t it = 0; it < iterations; ++it) {
    const std::uint64_t block = g.rng() % 2 ? 8 : 1024;
    std::uint64_t last = 0;
    for (int r = 0; r < n; ++r) {
      a[static_cast<std::size_t>(r)] = g.t[static_cast<std::size_t>(r)] + g.compute();
      last = std::max(last, a[static_cast<std::size_t>(r)]);
    }
    const std::uint64_t done = last + 1000 + latency(block) * std::max<std::uint64_t>(rounds, 1);
    for (int r = 0; r < n; ++r) {
      Event e = call(Op::Alltoall, a[static_cast<std::size_t>(r)], done);
      e.send_bytes = e.recv_bytes = block * static_cast<std::uint64_t>(n - 1);
      g.add(r, e);
    }
  }
}

// The grid MPI_Dims_create would give n ranks in `d` dimensions: factors as equal as they come,
// largest first.
std::vector<int> dims_of(int n, int d) {
  std::vector<int> dims(static_cast<std::size_t>(d), 1);
  std::vector<int> primes;
  for (int m = n, f = 2; m > 1;) {
    if (f * f > m) {
      primes.push_back(m);
      break;
    }
    if (m % f == 0) primes.push_back(f), m /= f;
    else ++f;
  }
  std::sort(primes.rbegin(), primes.rend());
  for (const int f : primes) *std::min_element(dims.begin(), dims.end()) *= f;
  std::sort(dims.rbegin(), dims.rend());
  return dims;
}

// A periodic grid exchange: per iteration an Irecv and an Isend per direction (tag = the
// direction a message travels in), then a Waitall completing them all.
void halo(Gen& g, std::size_t iterations, int d) {
  const int n = g.n;
  const std::vector<int> dims = dims_of(n, d);
  // Directions: +1 and -1 along each dimension longer than 1.
  struct Dir {
    int dim, sign;
  };
  std::vector<Dir> dirs;
  for (int k = 0; k < d; ++k)
    if (dims[static_cast<std::size_t>(k)] > 1) dirs.push_back({k, +1}), dirs.push_back({k, -1});
  const auto neighbour = [&](int r, const Dir& dir) {
    int stride = 1;
    for (int k = d - 1; k > dir.dim; --k) stride *= dims[static_cast<std::size_t>(k)];
    const int extent = dims[static_cast<std::size_t>(dir.dim)];
    const int coord = (r / stride) % extent;
    const int moved = (coord + dir.sign + extent) % extent;
    return r + (moved - coord) * stride;
  };
  const auto nd = dirs.size();
  std::vector<std::uint64_t> a(static_cast<std::size_t>(n)), next(static_cast<std::size_t>(n));
  std::uint32_t request = 0;
  for (std::size_t it = 0; it < iterations; ++it) {
    const std::uint64_t bytes = g.size();
    for (int r = 0; r < n; ++r) a[static_cast<std::size_t>(r)] = g.t[static_cast<std::size_t>(r)] + g.compute();
    for (int r = 0; r < n; ++r) {
      const auto u = static_cast<std::size_t>(r);
      auto& ev = g.out[u].events;
      std::uint64_t at = a[u];
      std::uint64_t arrival = 0;
      const std::uint32_t first = request + 1;
      // Receives first: from the neighbour opposite to each direction, the message travelling in it.
      for (std::size_t k = 0; k < nd; ++k) {
        const int from = neighbour(r, {dirs[k].dim, -dirs[k].sign});
        Event irecv = call(Op::Irecv, at, at + kCallNs / 2, from);
        irecv.tag = static_cast<std::int32_t>(k);
        irecv.request = first + static_cast<std::uint32_t>(k);
        ev.push_back(irecv);
        at += kCallNs / 2 + 50;
        // That neighbour's Isend in direction k starts after its receives and k sends.
        const std::uint64_t sent = a[static_cast<std::size_t>(from)] + (nd + k) * (kCallNs / 2 + 50);
        arrival = std::max(arrival, sent + latency(bytes));
      }
      for (std::size_t k = 0; k < nd; ++k) {
        Event isend = call(Op::Isend, at, at + kCallNs / 2, neighbour(r, dirs[k]));
        isend.tag = static_cast<std::int32_t>(k);
        isend.send_bytes = bytes;
        isend.request = first + static_cast<std::uint32_t>(nd + k);
        ev.push_back(isend);
        at += kCallNs / 2 + 50;
      }
      const std::uint64_t done = std::max(at, arrival) + 100;
      for (std::size_t k = 0; k < 2 * nd; ++k) {
        const bool recv = k < nd;
        Event w = call(Op::Waitall, at, done, recv ? neighbour(r, {dirs[k].dim, -dirs[k].sign}) : kNoPeer);
        w.flags = static_cast<std::uint8_t>((k > 0 ? kContinuation : 0) | (recv ? kRecvHalf : 0));
        w.request = first + static_cast<std::uint32_t>(k);
        if (recv) w.tag = static_cast<std::int32_t>(k), w.recv_bytes = bytes;
        ev.push_back(w);
      }
      next[u] = done;
    }
    request += static_cast<std::uint32_t>(2 * nd);
    g.t = next;
  }
}

// A collective every iteration: everybody arrives after computing, and leaves `cost` after the
// last arrival.
void collective_loop(Gen& g, std::size_t iterations, Op op) {
  const int n = g.n;
  std::uint64_t rounds = 0;  // ceil(log2 n)
  while ((std::uint64_t{1} << rounds) < static_cast<std::uint64_t>(n)) ++rounds;
  std::vector<std::uint64_t> a(static_cast<std::size_t>(n));
  for (std::size_t it = 0; it < iterations; ++it) {
    const std::uint64_t bytes = op == Op::Bcast ? kSizes[g.rng() % 3] : 8;
    std::uint64_t last = 0;
    for (int r = 0; r < n; ++r) {
      a[static_cast<std::size_t>(r)] = g.t[static_cast<std::size_t>(r)] + g.compute();
      last = std::max(last, a[static_cast<std::size_t>(r)]);
    }
    const std::uint64_t done = last + 500 + latency(bytes) * std::max<std::uint64_t>(rounds, 1);
    for (int r = 0; r < n; ++r) {
      Event e = call(op, a[static_cast<std::size_t>(r)], done);
      if (op == Op::Bcast) {
        e.peer = 0;  // the root
        if (r == 0) e.flags = kRoot, e.send_bytes = bytes * static_cast<std::uint64_t>(std::max(n - 1, 1));  // m (n-1): share/trace-format.md
        else e.recv_bytes = bytes;
      } else {
        e.send_bytes = e.recv_bytes = bytes;
      }
      g.add(r, e);
    }
  }
}

}  // namespace

const char* pattern_name(Pattern p) {
  switch (p) {
    case Pattern::Ring: return "ring";
    case Pattern::PingPong: return "pingpong";
    case Pattern::Random: return "random";
    case Pattern::Alltoall: return "alltoall";
    case Pattern::Halo2D: return "halo2d";
    case Pattern::Halo3D: return "halo3d";
    case Pattern::Bcast: return "bcast";
    case Pattern::Allreduce: return "allreduce";
  }
  return "?";
}

std::optional<Pattern> pattern_from_name(std::string_view name) {
  for (const Pattern p : {Pattern::Ring, Pattern::PingPong, Pattern::Random, Pattern::Alltoall, Pattern::Halo2D,
                          Pattern::Halo3D, Pattern::Bcast, Pattern::Allreduce})
    if (name == pattern_name(p)) return p;
  return std::nullopt;
}

std::string pattern_names() { return "ring, pingpong, random, alltoall, halo2d, halo3d, bcast, allreduce"; }

std::vector<RankTrace> synthetic_trace(int ranks, Pattern pattern, std::size_t events, unsigned seed) {
  Gen g{std::max(ranks, 1), std::mt19937_64(seed), {}, {}};
  const int n = g.n;
  const auto un = static_cast<std::size_t>(n);
  g.out.resize(un);
  g.t.assign(un, kStart);
  // Records per rank and iteration, and the fixed ones: Init, Barrier, Finalize.
  const auto halo_records = [&](int d) {
    double k = 0;
    for (const int x : dims_of(n, d)) k += x > 1 ? 2 : 0;
    return std::max(4 * k, 1.0);
  };
  const double per_iteration = pattern == Pattern::Ring       ? 4
                               : pattern == Pattern::PingPong ? 2
                               : pattern == Pattern::Random   ? 2 + 1.0 / 16
                               : pattern == Pattern::Halo2D   ? halo_records(2)
                               : pattern == Pattern::Halo3D   ? halo_records(3)
                                                              : 1;
  const std::size_t budget = events / un;
  const auto iterations =
      budget > 3 ? static_cast<std::size_t>(static_cast<double>(budget - 3) / per_iteration) : std::size_t{0};
  const MemberList world = MemberList::identity(un);  // shared by every rank
  for (int r = 0; r < n; ++r) {
    RankTrace& t = g.out[static_cast<std::size_t>(r)];
    t.path = "synthetic";
    t.header.rank = r;
    t.header.world_size = n;
    t.header.clock_kind = 1;
    t.header.ticks_per_second = 1e9;
    t.comms.push_back(CommDef{0, false, world});
    t.events.reserve(budget + 4);
    t.end = TraceEnd::Complete;
    g.add(r, call(Op::Init, kStart - 500'000, kStart));
  }
  switch (pattern) {
    case Pattern::Ring: ring(g, iterations); break;
    case Pattern::PingPong: pingpong(g, iterations); break;
    case Pattern::Random: random_shifts(g, iterations); break;
    case Pattern::Alltoall: alltoall(g, iterations); break;
    case Pattern::Halo2D: halo(g, iterations, 2); break;
    case Pattern::Halo3D: halo(g, iterations, 3); break;
    case Pattern::Bcast: collective_loop(g, iterations, Op::Bcast); break;
    case Pattern::Allreduce: collective_loop(g, iterations, Op::Allreduce); break;
  }
  std::uint64_t last = 0;
  for (int r = 0; r < n; ++r) last = std::max(last, g.t[static_cast<std::size_t>(r)] + 1000);
  for (int r = 0; r < n; ++r) {
    const auto u = static_cast<std::size_t>(r);
    g.add(r, call(Op::Barrier, g.t[u] + 1000, last + 2000));
    g.add(r, call(Op::Finalize, g.t[u] + 500, g.t[u] + 1500));
    RankTrace& t = g.out[u];
    t.event_thread.assign(t.events.size(), 0);
    // Clock samples: ticks are nanoseconds, every clock is rank 0's (offset 0).
    t.clocks.push_back(ClockSync{ClockSync::AtInit, kStart, static_cast<std::int64_t>(kStart), 0, 1000});
    t.clocks.push_back(
        ClockSync{ClockSync::AtFinalize, g.t[u], static_cast<std::int64_t>(g.t[u]), 0, 1000});
  }
  return g.out;
}

}  // namespace mstep::model
