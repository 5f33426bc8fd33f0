// The programs of MPICH's reductions that fold other than 2^k ranks in: MPI_Allreduce's recursive
// doubling and Rabenseifner's, MPI_Reduce's Rabenseifner, MPI_Reduce_scatter's recursive halving
// (model/replay/coll_writer.hpp).
#include "model/replay/coll_math.hpp"
#include "model/replay/coll_writer.hpp"

namespace mstep::model::coll_programs {
namespace {

using coll_math::floor_pow2;
using coll_math::log2_of;

// The pre- and post-steps that fold the rem = n - pof2 extra ranks in (recursive doubling and
// Rabenseifner). `odd_sends`: MPICH's Reduce pairs them the other way round from Allreduce.
std::int64_t fold_in(Writer& w, std::uint32_t n, std::uint32_t me, std::uint64_t bytes, bool odd_sends) {
  const std::uint32_t rem = n - floor_pow2(n);
  if (me >= 2 * rem) return static_cast<std::int64_t>(me - rem);
  const bool sender = odd_sends ? (me % 2 != 0) : (me % 2 == 0);
  if (sender) {
    w.send(0, me, odd_sends ? me - 1 : me + 1, bytes);
    w.step();
    return -1;
  }
  const std::uint32_t from = odd_sends ? me + 1 : me - 1;
  w.recv(0, from, from, bytes);
  w.step();
  return me / 2;
}

}  // namespace

void allreduce(Writer& w, std::uint32_t n, std::uint32_t me, std::uint64_t m, bool rabenseifner) {
  const std::uint32_t pof2 = floor_pow2(n), rem = n - pof2, K2 = log2_of(pof2);
  const std::int64_t newrank = fold_in(w, n, me, m, false);
  auto real = [&](std::uint32_t nr) { return nr < rem ? nr * 2 + 1 : nr + rem; };
  std::uint32_t round = 1;
  if (newrank >= 0) {
    const auto nr = static_cast<std::uint32_t>(newrank);
    if (!rabenseifner) {
      for (std::uint32_t mask = 1; mask < pof2; mask <<= 1, ++round) {
        const std::uint32_t dst = real(nr ^ mask);
        w.exchange(round, me, dst, m, dst, m);
      }
    } else {
      for (std::uint32_t mask = 1; mask < pof2; mask <<= 1, ++round) {  // reduce-scatter, halving
        const std::uint32_t dst = real(nr ^ mask);
        w.exchange(round, me, dst, m / (2 * mask), dst, m / (2 * mask));
      }
      for (std::uint32_t mask = pof2 >> 1; mask > 0; mask >>= 1, ++round) {  // allgather, doubling
        const std::uint32_t dst = real(nr ^ mask);
        w.exchange(round, me, dst, m / (2 * mask), dst, m / (2 * mask));
      }
    }
  }
  round = rabenseifner ? 1 + 2 * K2 : 1 + K2;
  if (me < 2 * rem) {
    if (me % 2) w.send(round, me, me - 1, m);
    else w.recv(round, me + 1, me + 1, m);
    w.step();
  }
}

void reduce_scatter_gather(Writer& w, std::uint32_t n, std::uint32_t me, std::uint32_t root, std::uint64_t m) {
  const std::uint32_t pof2 = floor_pow2(n), rem = n - pof2, K2 = log2_of(pof2);
  std::int64_t newrank = fold_in(w, n, me, m, true);
  // A root among the folded (odd) ranks takes newrank 0's place (world rank 0), with its piece,
  // before the gather, as MPIR_Reduce_intra_reduce_scatter_gather does.
  const bool odd_root = root < 2 * rem && root % 2;
  auto real = [&](std::uint32_t nr) { return nr == 0 && odd_root ? root : nr < rem ? nr * 2 : nr + rem; };
  const std::uint32_t newroot = odd_root ? 0 : root < 2 * rem ? root / 2 : root - rem;
  std::uint32_t round = 1;
  if (newrank >= 0) {
    const auto nr = static_cast<std::uint32_t>(newrank);
    for (std::uint32_t mask = 1; mask < pof2; mask <<= 1, ++round) {
      const std::uint32_t nd = nr ^ mask, dst = nd < rem ? nd * 2 : nd + rem;
      w.exchange(round, me, dst, m / (2 * mask), dst, m / (2 * mask));
    }
  }
  round = 1 + K2;
  if (odd_root) {
    const std::uint32_t swap = 1 + 2 * K2;
    if (me == root) {
      w.recv(swap, 0, 0, m / pof2);
      w.step();
      newrank = 0;
    } else if (newrank == 0) {
      w.send(swap, me, root, m / pof2);
      w.step();
      newrank = -1;
    }
  }
  if (newrank >= 0) {
    // Binomial gather of the pieces to newroot, partners in the order the halving used.
    const std::uint32_t rel = static_cast<std::uint32_t>(newrank) ^ newroot;
    for (std::uint32_t j = 0; j < K2; ++j, ++round) {
      const std::uint32_t mask = pof2 >> (j + 1);
      const std::uint64_t bytes = (m << j) / pof2;
      const std::uint32_t partner = real((rel ^ mask) ^ newroot);
      if (rel & mask) {
        w.send(round, me, partner, bytes);
        w.step();
        break;
      }
      w.recv(round, partner, partner, bytes);
      w.step();
    }
  }
}

// MPIR_Reduce_scatter(_block)_intra_recursive_halving with blocks of m bytes.
void reduce_scatter_halving(Writer& w, std::uint32_t n, std::uint32_t me, std::uint64_t m) {
  const std::uint32_t pof2 = floor_pow2(n), rem = n - pof2, K2 = log2_of(pof2);
  const std::uint64_t total = m * n;
  const std::int64_t newrank = fold_in(w, n, me, total, false);
  if (newrank >= 0) {
    const auto nr = static_cast<std::uint32_t>(newrank);
    std::uint32_t round = 1;
    for (std::uint32_t mask = pof2 >> 1; mask > 0; mask >>= 1, ++round) {
      const std::uint32_t nd = nr ^ mask;
      const std::uint32_t dst = nd < rem ? nd * 2 + 1 : nd + rem;
      const std::uint64_t bytes = total >> round;
      w.exchange(round, me, dst, bytes, dst, bytes);
    }
  }
  if (me < 2 * rem) {
    if (me % 2) w.send(1 + K2, me, me - 1, m);
    else w.recv(1 + K2, me + 1, me + 1, m);
    w.step();
  }
}

}  // namespace mstep::model::coll_programs
