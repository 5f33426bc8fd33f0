#include "interpose/substitute_reduce.hpp"

#include <vector>

#include "interpose/substitute.hpp"
#include "interpose/substitute_vector.hpp"
#include "model/replay/coll_math.hpp"
#include "model/replay/replay_collectives.hpp"

namespace mstep {

namespace {

using model::coll_math::floor_pow2;

bool predefined(MPI_Op op) {
  for (const MPI_Op p : {MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND, MPI_BAND, MPI_LOR, MPI_BOR, MPI_LXOR, MPI_BXOR,
                         MPI_MINLOC, MPI_MAXLOC, MPI_REPLACE, MPI_NO_OP})
    if (op == p) return true;
  return false;
}

// The vector this rank reduces into: the root's recvbuf, else one of its own (MPICH's too).
struct Accumulator {
  std::vector<char> store;
  char* at = nullptr;
  Accumulator(void* recvbuf, bool root, const Span& s) {
    if (root) {
      at = static_cast<char*>(recvbuf);
    } else {
      store.resize(static_cast<std::size_t>(s.bytes > 0 ? s.bytes : 1));
      at = store.data() - s.lb;
    }
  }
};

// MPIR_Reduce_intra_binomial.
int binomial(const Wire& w, char* acc, char* tmp, int count, MPI_Datatype type, MPI_Op op, const Span& s, int root,
             int me, int n, bool commutative) {
  Rc rc;
  const int lroot = commutative ? root : 0, rel = (me - lroot + n) % n;
  for (int mask = 1; mask < n; mask <<= 1) {
    if ((mask & rel) == 0) {
      const int child = rel | mask;
      if (child >= n) continue;
      rc(w.recv(tmp, count, type, (child + lroot) % n));
      if (commutative) {
        rc(PMPI_Reduce_local(tmp, acc, count, type, op));
      } else {  // the child's ranks are above this one's: this one's vector first
        rc(PMPI_Reduce_local(acc, tmp, count, type, op));
        rc(copy(tmp, acc, count, type, s, w.pc, me));
      }
    } else {
      rc(w.send(acc, count, type, ((rel & ~mask) + lroot) % n));
      break;
    }
  }
  if (!commutative && root != 0) {
    if (me == 0) rc(w.send(acc, count, type, root));
    else if (me == root) rc(w.recv(acc, count, type, 0));
  }
  return rc.rc;
}

// MPIR_Reduce_intra_reduce_scatter_gather, step for step (its names kept).
int reduce_scatter_gather(const Wire& w, char* acc, char* tmp, int count, MPI_Datatype type, MPI_Op op,
                          const Span& s, int root, int me, int n) {
  Rc rc;
  const int pof2 = static_cast<int>(floor_pow2(static_cast<std::uint32_t>(n))), rem = n - pof2;
  const auto at = [&](char* base, int element) { return base + static_cast<MPI_Aint>(element) * s.stride; };
  int newrank = 0;
  if (me < 2 * rem) {
    if (me % 2 != 0) {
      rc(w.send(acc, count, type, me - 1));
      newrank = -1;
    } else {
      rc(w.recv(tmp, count, type, me + 1));
      rc(PMPI_Reduce_local(tmp, acc, count, type, op));
      newrank = me / 2;
    }
  } else {
    newrank = me - rem;
  }
  // 2^k pieces, the first count % 2^k one element longer.
  std::vector<int> cnts(static_cast<std::size_t>(pof2)), disps(static_cast<std::size_t>(pof2), 0);
  for (int i = 0; i < pof2; ++i) cnts[i] = count / pof2 + (i < count % pof2 ? 1 : 0);
  for (int i = 1; i < pof2; ++i) disps[i] = disps[i - 1] + cnts[i - 1];
  const auto sum = [&](int from, int to) {
    int c = 0;
    for (int i = from; i < to; ++i) c += cnts[i];
    return c;
  };
  const auto real = [&](int nr) { return nr < rem ? nr * 2 : nr + rem; };
  int send_idx = 0, recv_idx = 0, last_idx = pof2;
  if (newrank != -1) {  // reduce-scatter by recursive halving
    for (int mask = 1; mask < pof2;) {
      const int newdst = newrank ^ mask, dst = real(newdst);
      int send_cnt = 0, recv_cnt = 0;
      if (newrank < newdst) {
        send_idx = recv_idx + pof2 / (mask * 2);
        send_cnt = sum(send_idx, last_idx), recv_cnt = sum(recv_idx, send_idx);
      } else {
        recv_idx = send_idx + pof2 / (mask * 2);
        send_cnt = sum(send_idx, recv_idx), recv_cnt = sum(recv_idx, last_idx);
      }
      rc(w.sendrecv(at(acc, disps[send_idx]), send_cnt, type, dst, at(tmp, disps[recv_idx]), recv_cnt, type, dst));
      rc(PMPI_Reduce_local(at(tmp, disps[recv_idx]), at(acc, disps[recv_idx]), recv_cnt, type, op));
      send_idx = recv_idx;
      mask <<= 1;
      if (mask < pof2) last_idx = recv_idx + pof2 / mask;
    }
  }
  // A root among the folded (odd) ranks takes newrank 0's place, with its piece.
  int newroot = 0;
  if (root < 2 * rem) {
    if (root % 2 != 0) {
      if (me == root) {
        rc(w.recv(acc, cnts[0], type, 0));
        newrank = 0, send_idx = 0, last_idx = 2;
      } else if (newrank == 0) {
        rc(w.send(acc, cnts[0], type, root));
        newrank = -1;
      }
      newroot = 0;
    } else {
      newroot = root / 2;
    }
  } else {
    newroot = root - rem;
  }
  if (newrank != -1) {  // gather the pieces to the root on a binomial tree
    int j = 0, mask = 1;
    while (mask < pof2) mask <<= 1, ++j;
    mask >>= 1, --j;
    for (; mask > 0; mask >>= 1, --j) {
      const int newdst = newrank ^ mask;
      int dst = real(newdst);
      if (newdst == 0 && root < 2 * rem && root % 2 != 0) dst = root;
      const int newdst_tree_root = (newdst >> j) << j, newroot_tree_root = (newroot >> j) << j;
      int send_cnt = 0, recv_cnt = 0;
      if (newrank < newdst) {
        if (mask != pof2 / 2) last_idx = last_idx + pof2 / (mask * 2);
        recv_idx = send_idx + pof2 / (mask * 2);
        send_cnt = sum(send_idx, recv_idx), recv_cnt = sum(recv_idx, last_idx);
      } else {
        recv_idx = send_idx - pof2 / (mask * 2);
        send_cnt = sum(send_idx, last_idx), recv_cnt = sum(recv_idx, send_idx);
      }
      if (newdst_tree_root == newroot_tree_root) {
        rc(w.send(at(acc, disps[send_idx]), send_cnt, type, dst));
        break;
      }
      rc(w.recv(at(acc, disps[recv_idx]), recv_cnt, type, dst));
      if (newrank > newdst) send_idx = recv_idx;
    }
  }
  return rc.rc;
}

}  // namespace

ReduceAlgo reduce_runs(ReduceAlgo algo, long long count, int type_bytes, bool predefined_op, int n) {
  const auto pof2 = static_cast<std::uint64_t>(floor_pow2(static_cast<std::uint32_t>(n)));
  const auto bytes = static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(type_bytes);
  if (algo == ReduceAlgo::Pt2pt)
    algo = bytes <= model::kReduceShortBytes || bytes / model::kAssumedElementBytes < pof2 ? ReduceAlgo::Binomial
                                                                                            : ReduceAlgo::ReduceScatterGather;
  // The replay, which sees bytes and not elements, charges binomial where the vector holds fewer
  // 8-byte elements than 2^k: so does libmstep, so that it charges what ran.
  if (algo == ReduceAlgo::ReduceScatterGather &&
      (!predefined_op || static_cast<std::uint64_t>(count) < pof2 || bytes / model::kAssumedElementBytes < pof2))
    algo = ReduceAlgo::Binomial;
  return algo;
}

int substitute_reduce(const Wire& w, ReduceAlgo algo, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
                      MPI_Op op, int root, int me, int n) {
  Rc rc;
  int commutative = 0, size = 0;
  rc(PMPI_Op_commutative(op, &commutative));
  rc(PMPI_Type_size(type, &size));
  if (rc.rc != MPI_SUCCESS) return rc.rc;
  const Span s = span_of(type, count);
  Accumulator acc(recvbuf, me == root, s);
  char* const tmp = scratch(s);
  if (me != root || sendbuf != MPI_IN_PLACE) rc(copy(sendbuf, acc.at, count, type, s, w.pc, me));
  if (reduce_runs(algo, count, size, predefined(op), n) == ReduceAlgo::ReduceScatterGather)
    rc(reduce_scatter_gather(w, acc.at, tmp, count, type, op, s, root, me, n));
  else
    rc(binomial(w, acc.at, tmp, count, type, op, s, root, me, n, commutative != 0));
  return rc.rc;
}

int Substitutes::reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                        MPI_Comm comm) {
  const auto mpich = [&] { return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm); };
  // What MPI would reject, or nothing to reduce, is MPICH's to answer (the same on every member).
  if (!reduce_on() || count <= 0 || op == MPI_OP_NULL || type == MPI_DATATYPE_NULL) return mpich();
  // MPI_IN_PLACE off the root is erroneous: MPICH's to report.
  const std::optional<Place> place = place_of(comm, root);
  if (!place || (sendbuf == MPI_IN_PLACE && place->me != root)) return mpich();
  const std::optional<Member> m = member_of(comm);
  if (!m) return mpich();
  return substitute_reduce(m->w, settings_.reduce, sendbuf, recvbuf, count, type, op, root, m->me, m->n);
}

}  // namespace mstep
