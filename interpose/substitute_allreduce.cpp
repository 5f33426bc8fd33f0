#include "interpose/substitute_allreduce.hpp"

#include <vector>

#include "interpose/substitute_vector.hpp"
#include "model/replay/coll_math.hpp"
#include "model/replay/replay_collectives.hpp"

namespace mstep {

namespace {

using model::coll_math::floor_pow2;

}  // namespace

AllreduceAlgo allreduce_runs(AllreduceAlgo algo, long long count, int type_bytes, bool commutative, int n) {
  const long long pof2 = floor_pow2(static_cast<std::uint32_t>(n));
  const auto bytes = static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(type_bytes);
  if (algo == AllreduceAlgo::Pt2pt)
    algo = bytes <= model::kAllreduceShortBytes || bytes / model::kAssumedElementBytes < static_cast<std::uint64_t>(pof2)
               ? AllreduceAlgo::RecursiveDoubling
               : AllreduceAlgo::ReduceScatterAllgather;
  // The replay, which sees bytes and not elements, charges recursive doubling where the vector
  // holds fewer 8-byte elements than 2^k: so does libmstep, so that it charges what ran.
  if (algo == AllreduceAlgo::ReduceScatterAllgather &&
      (!commutative || count < pof2 || bytes / model::kAssumedElementBytes < static_cast<std::uint64_t>(pof2)))
    algo = AllreduceAlgo::RecursiveDoubling;
  return algo;
}

int substitute_allreduce(const Wire& w, AllreduceAlgo algo, const void* sendbuf, void* recvbuf, int count,
                         MPI_Datatype type, MPI_Op op, int me, int n) {
  Rc rc;
  int commutative = 0;
  rc(PMPI_Op_commutative(op, &commutative));
  int size = 0;
  rc(PMPI_Type_size(type, &size));
  if (rc.rc != MPI_SUCCESS) return rc.rc;
  const Span s = span_of(type, count);
  char* const tmp = scratch(s);
  char* const out = static_cast<char*>(recvbuf);
  if (sendbuf != MPI_IN_PLACE) rc(copy(sendbuf, recvbuf, count, type, s, w.pc, me));
  algo = allreduce_runs(algo, count, size, commutative != 0, n);

  const int pof2 = static_cast<int>(floor_pow2(static_cast<std::uint32_t>(n))), rem = n - pof2;
  const int newrank = fold_into_core(w, rc, out, tmp, count, type, op, me, rem);
  if (newrank >= 0) {
    if (algo == AllreduceAlgo::RecursiveDoubling) {
      for (int mask = 1; mask < pof2; mask <<= 1) {
        const int dst = core_rank(newrank ^ mask, rem);
        rc(w.sendrecv(recvbuf, count, tmp, count, type, dst, dst));
        if (commutative || dst < me) {
          rc(PMPI_Reduce_local(tmp, recvbuf, count, type, op));  // recvbuf = theirs op mine
        } else {
          rc(PMPI_Reduce_local(recvbuf, tmp, count, type, op));  // tmp = mine op theirs
          rc(copy(tmp, recvbuf, count, type, s, w.pc, me));
        }
      }
    } else {
      // 2^k blocks of count / 2^k elements, the first count % 2^k one larger (MPICH's split).
      std::vector<int> disp(static_cast<std::size_t>(pof2) + 1, 0);
      for (int i = 0; i < pof2; ++i) disp[i + 1] = disp[i] + count / pof2 + (i < count % pof2 ? 1 : 0);
      const auto at = [&](char* base, int block) { return base + static_cast<MPI_Aint>(disp[block]) * s.stride; };
      // Reduce-scatter by recursive halving: keep the half of [lo, hi) on this rank's side of the
      // partner, send the other, reduce the kept half.
      int lo = 0, hi = pof2;
      for (int mask = 1; mask < pof2; mask <<= 1) {
        const int dst = core_rank(newrank ^ mask, rem), mid = (lo + hi) / 2;
        const bool lower = (newrank & mask) == 0;
        const int keep_lo = lower ? lo : mid, keep_hi = lower ? mid : hi;
        const int send_lo = lower ? mid : lo, send_hi = lower ? hi : mid;
        rc(w.sendrecv(at(out, send_lo), disp[send_hi] - disp[send_lo], at(tmp, keep_lo), disp[keep_hi] - disp[keep_lo],
                      type, dst, dst));
        rc(PMPI_Reduce_local(at(tmp, keep_lo), at(out, keep_lo), disp[keep_hi] - disp[keep_lo], type, op));
        lo = keep_lo, hi = keep_hi;
      }
      // Allgather by recursive doubling, the halvings undone in reverse.
      for (int mask = pof2 / 2; mask > 0; mask >>= 1) {
        const int dst = core_rank(newrank ^ mask, rem), width = hi - lo;
        const bool lower = (newrank & mask) == 0;
        const int other_lo = lower ? hi : lo - width, other_hi = lower ? hi + width : lo;
        rc(w.sendrecv(at(out, lo), disp[hi] - disp[lo], at(out, other_lo), disp[other_hi] - disp[other_lo], type, dst,
                      dst));
        lo = lower ? lo : other_lo, hi = lower ? other_hi : hi;
      }
    }
  }
  // The folded ranks get the result back.
  if (me < 2 * rem) {
    if (me % 2) rc(w.send(recvbuf, count, type, me - 1));
    else rc(w.recv(recvbuf, count, type, me + 1));
  }
  return rc.rc;
}

}  // namespace mstep
