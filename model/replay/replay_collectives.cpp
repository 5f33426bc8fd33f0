#include "model/replay/replay_collectives.hpp"
#include "model/replay/coll_math.hpp"
#include "model/replay/coll_writer.hpp"

#include <algorithm>
#include <bit>

namespace mstep::model {
namespace {

using coll_programs::Writer;
using coll_math::ceil_log2;
using coll_math::floor_pow2;
using coll_math::log2_of;


// Bytes of blocks [first, first + count) of an m-byte buffer cut into blocks of `ss` bytes.
std::uint64_t block_range(std::uint64_t m, std::uint64_t ss, std::uint64_t first, std::uint64_t count) {
  const std::uint64_t lo = first * ss;
  if (lo >= m) return 0;
  return std::min(m, (first + count) * ss) - lo;
}

// Number of j in [0, n) with bit p set (Bruck's alltoall sends those blocks in round log2 p).
std::uint64_t blocks_with_bit(std::uint64_t n, std::uint64_t p) {
  const std::uint64_t full = (n / (2 * p)) * p;
  const std::uint64_t tail = n % (2 * p);
  return full + (tail > p ? tail - p : 0);
}

// `first_round`: the binomial tree's rounds come after that many others (the combining tree's
// release).
void bcast_binomial(Writer& w, std::uint32_t n, std::uint32_t rel, std::uint32_t root, std::uint64_t m,
                    std::uint32_t first_round = 0) {
  auto abs = [&](std::uint64_t r) { return static_cast<std::uint32_t>((r + root) % n); };
  std::uint64_t mask = 1;
  while (mask < n) {
    if (rel & mask) {
      w.recv(first_round + log2_of(mask), rel - static_cast<std::uint32_t>(mask), abs(rel - mask), m);
      w.step();
      break;
    }
    mask <<= 1;
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (rel + mask < n) {
      w.send(first_round + log2_of(mask), rel, abs(rel + mask), m);
      w.step();
    }
  }
}

// MPII_Scatter_for_bcast: binomial scatter of ceil(m/n)-byte blocks, then an allgather.
void bcast_scatter_allgather(Writer& w, std::uint32_t n, std::uint32_t me, std::uint32_t root, std::uint64_t m,
                             bool ring) {
  auto abs = [&](std::uint64_t r) { return static_cast<std::uint32_t>((r + root) % n); };
  const std::uint32_t rel = (me + n - root) % n;
  const std::uint64_t ss = (m + n - 1) / n;
  const std::uint32_t K = ceil_log2(n);
  std::uint64_t mask = 1;
  while (mask < n) {
    if (rel & mask) {
      const std::uint64_t got = block_range(m, ss, rel, mask);
      if (got > 0) {
        w.recv(log2_of(mask), rel - static_cast<std::uint32_t>(mask), abs(rel - mask), got);
        w.step();
      }
      break;
    }
    mask <<= 1;
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    const std::uint64_t child = rel + mask;
    if (child < n && block_range(m, ss, child, mask) > 0) {
      w.send(log2_of(mask), rel, abs(child), block_range(m, ss, child, mask));
      w.step();
    }
  }
  if (!ring) {  // recursive doubling over relative ranks (n is a power of two here)
    for (std::uint32_t i = 0; (std::uint64_t{1} << i) < n; ++i) {
      const std::uint32_t bit = 1u << i;
      const std::uint32_t dst = rel ^ bit;
      const std::uint64_t mine = block_range(m, ss, (rel >> i) << i, bit);
      const std::uint64_t theirs = block_range(m, ss, (dst >> i) << i, bit);
      w.recv(K + i, dst, abs(dst), theirs);
      w.send(K + i, rel, abs(dst), mine);
      w.step();
    }
    return;
  }
  const std::uint32_t left = (me + n - 1) % n, right = (me + 1) % n;
  std::uint32_t j = me, jnext = left;
  for (std::uint32_t i = 1; i < n; ++i) {
    w.exchange(K + i - 1, me, left, block_range(m, ss, (jnext + n - root) % n, 1), right,
               block_range(m, ss, (j + n - root) % n, 1));
    j = jnext;
    jnext = (jnext + n - 1) % n;
  }
}

}  // namespace

std::uint32_t coll_max_ops(std::uint32_t n) { return 2 * n + 8 * (ceil_log2(n) + 1) + 8; }

std::uint32_t coll_max_ops(const CollShape& s) {
  const std::uint32_t base = coll_max_ops(std::max<std::uint32_t>(s.n, 1));
  if (s.algo != CollAlgo::AllgatherRing) return base;
  return std::max<std::uint32_t>(base, 2 * coll_rounds(s) + 8);  // below 2^31 (choose_collective)
}

void coll_program(const CollShape& s, std::uint32_t me, CollOp* ops, std::uint32_t* step_end, std::uint32_t& nops,
                  std::uint32_t& nsteps) {
  const std::uint32_t n = s.n;
  Writer w{ops, step_end, n};
  const std::uint32_t rel = n ? (me + n - s.root % n) % n : 0;
  auto abs = [&](std::uint64_t r) { return static_cast<std::uint32_t>((r + s.root) % n); };
  const std::uint64_t m = s.m;
  const std::uint32_t pof2 = floor_pow2(n);
  switch (s.algo) {
    case CollAlgo::Unsupported:
    case CollAlgo::Nothing: break;
    case CollAlgo::BarrierDissemination:
      for (std::uint32_t round = 0; round < barrier_dissemination_rounds(n); ++round) {
        barrier_dissemination_step(n, me, round, w.ops + w.nops);
        w.nops += 2;
        w.step();
      }
      break;
    case CollAlgo::BcastBinomial: bcast_binomial(w, n, rel, s.root, m); break;
    case CollAlgo::BcastScatterRecDblAllgather: bcast_scatter_allgather(w, n, me, s.root, m, false); break;
    case CollAlgo::BcastScatterRingAllgather: bcast_scatter_allgather(w, n, me, s.root, m, true); break;
    case CollAlgo::ReduceBinomial:
      for (std::uint64_t mask = 1; mask < n; mask <<= 1) {
        if ((rel & mask) == 0) {
          const std::uint64_t src = rel | mask;
          if (src < n) {
            w.recv(log2_of(mask), static_cast<std::uint32_t>(src), abs(src), m);
            w.step();
          }
        } else {
          w.send(log2_of(mask), rel, abs(rel & ~mask), m);
          w.step();
          break;
        }
      }
      break;
    case CollAlgo::ReduceScatterGather: coll_programs::reduce_scatter_gather(w, n, me, s.root, m); break;
    case CollAlgo::AllreduceRecDbl: coll_programs::allreduce(w, n, me, m, false); break;
    case CollAlgo::AllreduceRabenseifner: coll_programs::allreduce(w, n, me, m, true); break;
    case CollAlgo::GatherBinomial:
      for (std::uint64_t mask = 1; mask < n; mask <<= 1) {
        if ((rel & mask) == 0) {
          const std::uint64_t src = rel | mask;
          if (src < n) {
            w.recv(log2_of(mask), static_cast<std::uint32_t>(src), abs(src), m * std::min<std::uint64_t>(mask, n - src));
            w.step();
          }
        } else {
          w.send(log2_of(mask), rel, abs(rel & ~mask), m * std::min<std::uint64_t>(mask, n - rel));
          w.step();
          break;
        }
      }
      break;
    case CollAlgo::ScatterBinomial: {
      std::uint64_t mask = 1;
      while (mask < n) {
        if (rel & mask) {
          w.recv(log2_of(mask), rel - static_cast<std::uint32_t>(mask), abs(rel - mask),
                 m * std::min<std::uint64_t>(mask, n - rel));
          w.step();
          break;
        }
        mask <<= 1;
      }
      for (mask >>= 1; mask > 0; mask >>= 1) {
        const std::uint64_t child = rel + mask;
        if (child < n) {
          w.send(log2_of(mask), rel, abs(child), m * std::min<std::uint64_t>(mask, n - child));
          w.step();
        }
      }
      break;
    }
    case CollAlgo::GathervLinear:
      if (me == s.root) {
        for (std::uint32_t i = 0; i < n; ++i)
          if (i != me) w.recv(0, i, i, m);
      } else {
        w.send(0, me, s.root, m);
      }
      w.step();
      break;
    case CollAlgo::ScattervLinear:
      if (me == s.root) {
        for (std::uint32_t i = 0; i < n; ++i)
          if (i != me) w.send(0, i, i, m);  // x = the receiver: the root sends n-1 in round 0
      } else {
        w.recv(0, me, s.root, m);
      }
      w.step();
      break;
    case CollAlgo::AllgatherRecDbl:
      for (std::uint32_t i = 0; (std::uint64_t{1} << i) < n; ++i) {
        const std::uint32_t dst = me ^ (1u << i);
        w.exchange(i, me, dst, m << i, dst, m << i);
      }
      break;
    case CollAlgo::AllgatherBruck: {
      std::uint32_t round = 0;
      std::uint64_t p = 1;
      for (; p <= n / 2; p *= 2, ++round) {
        const auto d = static_cast<std::uint32_t>(p);
        w.exchange(round, me, (me + d) % n, m * p, (me + n - d) % n, m * p);
      }
      if (p < n) {
        const auto d = static_cast<std::uint32_t>(p);
        w.exchange(round, me, (me + d) % n, m * (n - p), (me + n - d) % n, m * (n - p));
      }
      break;
    }
    case CollAlgo::AllgatherRing: {
      // Each block in `chunks` messages: chunks of kAllgathervPipelineBytes, the last the rest.
      const std::uint32_t chunks = allgather_ring_chunks(s);
      for (std::uint32_t i = 0, round = 0; i + 1 < n; ++i)
        for (std::uint32_t c = 0; c < chunks; ++c, ++round) {
          const std::uint64_t bytes = chunks == 1 ? m : std::min(kAllgathervPipelineBytes, m - c * kAllgathervPipelineBytes);
          w.exchange(round, me, (me + n - 1) % n, bytes, (me + 1) % n, bytes);
        }
      break;
    }
    case CollAlgo::AlltoallBruck: {
      std::uint32_t round = 0;
      for (std::uint64_t p = 1; p < n; p *= 2, ++round) {
        const auto d = static_cast<std::uint32_t>(p);
        const std::uint64_t bytes = m * blocks_with_bit(n, p);
        w.exchange(round, me, (me + n - d) % n, bytes, (me + d) % n, bytes);
      }
      break;
    }
    case CollAlgo::AlltoallScattered:
      for (std::uint32_t ii = 0; ii < n; ii += kAlltoallThrottle) {
        const std::uint32_t ss = std::min(n - ii, kAlltoallThrottle);
        for (std::uint32_t i = 0; i < ss; ++i) {
          const std::uint32_t src = (me + ii + i) % n;
          if (src != me) w.recv(ii + i, src, src, m);
        }
        for (std::uint32_t i = 0; i < ss; ++i) {
          const std::uint32_t dst = (me + n - (ii + i) % n) % n;
          if (dst != me) w.send(ii + i, me, dst, m);
        }
        w.step();
      }
      break;
    case CollAlgo::AlltoallPairwise:
      for (std::uint32_t i = 1; i < n; ++i) {
        const bool p2 = pof2 == n;
        const std::uint32_t src = p2 ? me ^ i : (me + n - i) % n;
        const std::uint32_t dst = p2 ? me ^ i : (me + i) % n;
        w.exchange(i, me, src, m, dst, m);
      }
      break;
    case CollAlgo::ReduceScatterRecHalving: coll_programs::reduce_scatter_halving(w, n, me, m); break;
    case CollAlgo::ReduceScatterPairwise:
      for (std::uint32_t i = 1; i < n; ++i) w.exchange(i, me, (me + n - i) % n, m, (me + i) % n, m);
      break;
    case CollAlgo::ScanRecDbl:
    case CollAlgo::ExscanRecDbl: {
      // The partial result exchanged with me XOR 2^k in round k, where that rank exists.
      std::uint32_t round = 0;
      for (std::uint64_t mask = 1; mask < n; mask <<= 1, ++round) {
        const auto dst = static_cast<std::uint32_t>(me ^ mask);
        if (dst < n) w.exchange(round, me, dst, m, dst, m);
      }
      if (s.algo == CollAlgo::ExscanRecDbl) break;
      // MPI_Scan on one node: rank 0 (the node's root) receives the last rank's result, then
      // broadcasts whether anything more is needed (one int; nothing, with no other node).
      if (me == n - 1) {
        w.send(round, n - 1, 0, m);
        w.step();
      } else if (me == 0) {
        w.recv(round, n - 1, n - 1, m);
        w.step();
      }
      bcast_binomial(w, n, me, 0, kScanFlagBytes, round + 1);
      break;
    }
    // libmstep's substitutes, as interpose/substitute.cpp runs them: blocking PMPI_Send and
    // PMPI_Recv, each a step of its own. Rank 0 of the central counter receives from any source;
    // here in rank order, so its receive overheads queue as MODELS.md's (P-2) f_r says (a late
    // low rank makes it wait for the others' overheads after that rank's arrival).
    case CollAlgo::BarrierCentral:
      if (me == 0) {
        for (std::uint32_t i = 1; i < n; ++i) {
          w.recv(0, i, i, 0);
          w.step();
        }
        for (std::uint32_t i = 1; i < n; ++i) {
          w.send(1, i, i, 0);
          w.step();
        }
      } else {
        w.send(0, me, 0, 0);
        w.step();
        w.recv(1, me, 0, 0);
        w.step();
      }
      break;
    case CollAlgo::BarrierCombiningTree: {
      const std::uint64_t N = s.arity, first = N * me + 1;
      for (std::uint64_t c = first; c < first + N && c < n; ++c) {
        w.recv(0, static_cast<std::uint32_t>(c), static_cast<std::uint32_t>(c), 0);
        w.step();
      }
      if (me != 0) {
        w.send(0, me, static_cast<std::uint32_t>((me - 1) / N), 0);
        w.step();
      }
      bcast_binomial(w, n, me, 0, 0, 1);
      break;
    }
    case CollAlgo::BcastTree:
      // libmstep's tree_bcast: receive from the parent, then send to each child in turn, each a
      // blocking step. A message's slot is its receiver.
      if (s.tree && me < s.tree->parent.size()) {
        if (s.tree->parent[me] != kNoParent) {
          w.recv(0, me, s.tree->parent[me], m);
          w.step();
        }
        for (const std::uint32_t c : s.tree->children[me]) {
          w.send(0, c, c, m);
          w.step();
        }
      }
      break;
    case CollAlgo::BcastFlat:
      if (rel == 0) {
        for (std::uint32_t k = 1; k < n; ++k) {
          w.send(0, abs(k), abs(k), m);
          w.step();
        }
      } else {
        w.recv(0, me, abs(0), m);
        w.step();
      }
      break;
  }
  nops = w.nops;
  nsteps = w.nsteps;
}

}  // namespace mstep::model
