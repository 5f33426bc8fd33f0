#include "interpose/substitute_reduce_scatter.hpp"

#include <climits>
#include <cstring>
#include <vector>

#include "interpose/substitute.hpp"
#include "interpose/substitute_vector.hpp"
#include "model/replay/coll_math.hpp"
#include "model/replay/replay_collectives.hpp"

namespace mstep {

namespace {

using model::coll_math::floor_pow2;

// Elements from element `first` on of a buffer of `type` elements.
const char* element(const void* buf, long long first, MPI_Aint extent) {
  return static_cast<const char*>(buf) + first * extent;
}
char* element(void* buf, long long first, MPI_Aint extent) { return static_cast<char*>(buf) + first * extent; }

// MPIR_Reduce_scatter_intra_recursive_halving (the block version is the same with equal counts).
int recursive_halving(const Wire& w, const void* input, void* recvbuf, const std::vector<int>& counts,
                      const std::vector<int>& disps, int total, MPI_Datatype type, MPI_Op op, int me, int n) {
  const MPI_Aint ext = extent_of(type);
  const Span all = span_of(type, total);
  char* const results = scratch(all, 0);  // this rank's partial sums, then its block's
  char* const incoming = scratch(all, 1);
  Rc rc;
  rc(copy(input, results, total, type, all, w.pc, me));
  const int pof2 = static_cast<int>(floor_pow2(static_cast<std::uint32_t>(n))), rem = n - pof2;
  const int newrank = fold_into_core(w, rc, results, incoming, total, type, op, me, rem);
  if (newrank != -1) {
    // The folded ranks' blocks are reduced by their odd neighbours.
    std::vector<int> newcnts(static_cast<std::size_t>(pof2)), newdisps(static_cast<std::size_t>(pof2), 0);
    for (int i = 0; i < pof2; ++i) {
      const int old_i = core_rank(i, rem);
      newcnts[i] = old_i < 2 * rem ? counts[old_i] + counts[old_i - 1] : counts[old_i];
      if (i > 0) newdisps[i] = newdisps[i - 1] + newcnts[i - 1];
    }
    int send_idx = 0, recv_idx = 0, last_idx = pof2;
    for (int mask = pof2 >> 1; mask > 0; mask >>= 1) {
      const int newdst = newrank ^ mask, dst = core_rank(newdst, rem);
      int send_cnt = 0, recv_cnt = 0;
      if (newrank < newdst) {
        send_idx = recv_idx + mask;
        for (int i = send_idx; i < last_idx; ++i) send_cnt += newcnts[i];
        for (int i = recv_idx; i < send_idx; ++i) recv_cnt += newcnts[i];
      } else {
        recv_idx = send_idx + mask;
        for (int i = send_idx; i < recv_idx; ++i) send_cnt += newcnts[i];
        for (int i = recv_idx; i < last_idx; ++i) recv_cnt += newcnts[i];
      }
      const char* out = element(results, newdisps[send_idx], ext);
      char* in = element(incoming, newdisps[recv_idx], ext);
      if (send_cnt != 0 && recv_cnt != 0) rc(w.sendrecv(out, send_cnt, type, dst, in, recv_cnt, type, dst));
      else if (recv_cnt != 0) rc(w.recv(in, recv_cnt, type, dst));
      else if (send_cnt != 0) rc(w.send(out, send_cnt, type, dst));
      if (recv_cnt != 0)
        rc(PMPI_Reduce_local(in, element(results, newdisps[recv_idx], ext), recv_cnt, type, op));
      send_idx = recv_idx;
      last_idx = recv_idx + mask;
    }
    if (counts[me] > 0)
      rc(copy(element(results, disps[me], ext), recvbuf, counts[me], type, span_of(type, counts[me]), w.pc, me));
  }
  if (me < 2 * rem) {
    if (me % 2) rc(w.send(element(results, disps[me - 1], ext), counts[me - 1], type, me - 1));
    else rc(w.recv(recvbuf, counts[me], type, me + 1));
  }
  return rc.rc;
}

// MPIR_Reduce_scatter_intra_pairwise.
int pairwise(const Wire& w, const void* sendbuf, void* recvbuf, const std::vector<int>& counts,
             const std::vector<int>& disps, MPI_Datatype type, MPI_Op op, int me, int n) {
  const MPI_Aint ext = extent_of(type);
  const Span mine = span_of(type, counts[me]);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const void* input = in_place ? recvbuf : sendbuf;
  Rc rc;
  if (!in_place && counts[me] > 0) rc(copy(element(sendbuf, disps[me], ext), recvbuf, counts[me], type, mine, w.pc, me));
  char* const incoming = scratch(mine, 0);
  char* acc = in_place ? element(recvbuf, disps[me], ext) : static_cast<char*>(recvbuf);
  for (int i = 1; i < n; ++i) {
    const int src = (me - i + n) % n, dst = (me + i) % n;
    rc(w.sendrecv(element(input, disps[dst], ext), counts[dst], type, dst, incoming, counts[me], type, src));
    rc(PMPI_Reduce_local(incoming, acc, counts[me], type, op));
  }
  // In place the result moves to the start of recvbuf. The two may overlap (uneven blocks), where
  // MPICH 4.0.2's own copy asserts: a move, or two copies through the scratch vector.
  if (in_place && me != 0 && counts[me] > 0) {
    if (mine.contiguous) {
      std::memmove(static_cast<char*>(recvbuf) + mine.lb, acc + mine.lb, static_cast<std::size_t>(mine.bytes));
    } else {
      rc(copy(acc, incoming, counts[me], type, mine, w.pc, me));
      rc(copy(incoming, recvbuf, counts[me], type, mine, w.pc, me));
    }
  }
  return rc.rc;
}

}  // namespace

ReduceScatterAlgo reduce_scatter_runs(ReduceScatterAlgo algo, std::uint64_t total) {
  if (algo != ReduceScatterAlgo::Pt2pt) return algo;
  return total < model::kReduceScatterLongBytes ? ReduceScatterAlgo::RecursiveHalving : ReduceScatterAlgo::Pairwise;
}

int substitute_reduce_scatter(const Wire& w, ReduceScatterAlgo algo, const void* sendbuf, void* recvbuf,
                              const int* recvcounts, MPI_Datatype type, MPI_Op op, int me, int n) {
  std::vector<int> counts(recvcounts, recvcounts + n), disps(static_cast<std::size_t>(n), 0);
  int total = 0;
  for (int i = 0; i < n; ++i) disps[i] = total, total += counts[i];
  int size = 0;
  PMPI_Type_size(type, &size);
  if (reduce_scatter_runs(algo, static_cast<std::uint64_t>(total) * static_cast<std::uint64_t>(size)) ==
      ReduceScatterAlgo::Pairwise)
    return pairwise(w, sendbuf, recvbuf, counts, disps, type, op, me, n);
  return recursive_halving(w, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, recvbuf, counts, disps, total, type, op, me,
                           n);
}

int Substitutes::reduce_scatter(const void* sendbuf, void* recvbuf, const int* recvcounts, MPI_Datatype type,
                                MPI_Op op, MPI_Comm comm) {
  const auto mpich = [&] { return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm); };
  // What MPI would reject, nothing to reduce at all, more than an int of bytes in all, or a
  // non-commutative operation is MPICH's to run, decided alike on every member (they share the
  // counts, the type and the operation).
  if (!reduce_scatter_on() || comm == MPI_COMM_NULL || recvcounts == nullptr || type == MPI_DATATYPE_NULL ||
      op == MPI_OP_NULL)
    return mpich();
  int n = 0, size = 0, inter = 0, commutative = 0;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter || PMPI_Comm_size(comm, &n) != MPI_SUCCESS ||
      PMPI_Type_size(type, &size) != MPI_SUCCESS || PMPI_Op_commutative(op, &commutative) != MPI_SUCCESS || !commutative)
    return mpich();
  std::uint64_t total = 0;
  for (int i = 0; i < n; ++i) {
    if (recvcounts[i] < 0) return mpich();
    total += static_cast<std::uint64_t>(recvcounts[i]);
  }
  if (total == 0 || total * static_cast<std::uint64_t>(size > 0 ? size : 1) > INT_MAX || size == 0) return mpich();
  const std::optional<Member> m = member_of(comm);
  if (!m) return mpich();
  return substitute_reduce_scatter(m->w, settings_.reduce_scatter, sendbuf, recvbuf, recvcounts, type, op, m->me,
                                   m->n);
}

int Substitutes::reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type, MPI_Op op,
                                      MPI_Comm comm) {
  const auto mpich = [&] { return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm); };
  if (!reduce_scatter_on() || comm == MPI_COMM_NULL || recvcount <= 0 || type == MPI_DATATYPE_NULL || op == MPI_OP_NULL)
    return mpich();
  int n = 0, size = 0, inter = 0, commutative = 0;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter || PMPI_Comm_size(comm, &n) != MPI_SUCCESS ||
      PMPI_Type_size(type, &size) != MPI_SUCCESS || PMPI_Op_commutative(op, &commutative) != MPI_SUCCESS ||
      !commutative || size == 0 ||
      static_cast<std::uint64_t>(recvcount) * static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(size) > INT_MAX)
    return mpich();
  const std::optional<Member> m = member_of(comm);
  if (!m) return mpich();
  const std::vector<int> counts(static_cast<std::size_t>(m->n), recvcount);
  return substitute_reduce_scatter(m->w, settings_.reduce_scatter, sendbuf, recvbuf, counts.data(), type, op, m->me,
                                   m->n);
}

}  // namespace mstep
