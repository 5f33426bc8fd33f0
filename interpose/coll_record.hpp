// What a collective's record carries, shared by the blocking wrappers (wrappers_coll.cpp) and the
// nonblocking ones (wrappers_icoll.cpp), which record the same at their start. Byte counts are the
// logical payload of the operation for this rank, as a personalised exchange (what BSPWB's
// h-relation counts), not what MPICH's algorithm moves:
//   Bcast root sends m to each of the n-1 others; Scatter root sends its blocks to the n-1 others;
//   Reduce/Gather non-roots send their m to the root, which receives (n-1) of them;
//   Allreduce, Allgather and Alltoall send to and receive from the n-1 others;
//   Scan/Exscan: rank i sends m to each of the n-1-i ranks after it and receives m from the i
//   before it.
// share/trace-format.md lists them. MPI_IN_PLACE arguments are never dereferenced or sized.
#pragma once

#include "interpose/wrap_common.hpp"

namespace mstep {

struct Coll {
  Event e;
  const CommInfo* c;
  int me;
  int n;
};

inline Coll finish_coll(Event e, MPI_Comm comm) {
  e.t_exit = now_ticks();
  const CommInfo& c = g_recorder.comm(comm);
  e.comm = c.id;
  return Coll{e, &c, comm_rank(comm), c.size};
}

// Rooted collectives: the root's world rank in `peer`, kRoot on the root itself.
inline void set_root(Coll& k, int root) {
  k.e.peer = k.c->world_rank(root);
  if (root == k.me || root == MPI_ROOT) k.e.flags |= kRoot;
}
inline bool is_root(const Coll& k) { return k.e.flags & kRoot; }

inline std::uint64_t others(int n) { return n > 1 ? static_cast<std::uint64_t>(n - 1) : 0; }

inline void bytes_bcast(Coll& k, int root, int count, MPI_Datatype type) {
  set_root(k, root);
  const std::uint64_t m = bytes_of(count, type);
  if (is_root(k)) k.e.send_bytes = m * others(k.n);
  else k.e.recv_bytes = m;
}

inline void bytes_reduce(Coll& k, int root, int count, MPI_Datatype type) {
  set_root(k, root);
  const std::uint64_t m = bytes_of(count, type);
  if (is_root(k)) k.e.recv_bytes = m * others(k.n);
  else k.e.send_bytes = m;
}

inline void bytes_allreduce(Coll& k, int count, MPI_Datatype type) {
  k.e.send_bytes = k.e.recv_bytes = bytes_of(count, type) * others(k.n);
}

inline void bytes_gather(Coll& k, int root, int sendcount, MPI_Datatype sendtype, int recvcount, MPI_Datatype recvtype) {
  set_root(k, root);
  if (is_root(k)) k.e.recv_bytes = bytes_of(recvcount, recvtype) * others(k.n);
  else k.e.send_bytes = bytes_of(sendcount, sendtype);
}

inline void bytes_gatherv(Coll& k, int root, int sendcount, MPI_Datatype sendtype, const int* recvcounts,
                          MPI_Datatype recvtype) {
  set_root(k, root);
  if (is_root(k)) k.e.recv_bytes = bytes_to_others(recvcounts, k.n, k.me, recvtype);
  else k.e.send_bytes = bytes_of(sendcount, sendtype);
}

inline void bytes_scatter(Coll& k, int root, int sendcount, MPI_Datatype sendtype, int recvcount, MPI_Datatype recvtype) {
  set_root(k, root);
  if (is_root(k)) k.e.send_bytes = bytes_of(sendcount, sendtype) * others(k.n);
  else k.e.recv_bytes = bytes_of(recvcount, recvtype);
}

inline void bytes_scatterv(Coll& k, int root, const int* sendcounts, MPI_Datatype sendtype, int recvcount,
                           MPI_Datatype recvtype) {
  set_root(k, root);
  if (is_root(k)) k.e.send_bytes = bytes_to_others(sendcounts, k.n, k.me, sendtype);
  else k.e.recv_bytes = bytes_of(recvcount, recvtype);
}

// Allgather and Alltoall: m out to and m in from each of the others.
inline void bytes_all_to_all(Coll& k, const void* sendbuf, int sendcount, MPI_Datatype sendtype, int recvcount,
                             MPI_Datatype recvtype) {
  const std::uint64_t in = bytes_of(recvcount, recvtype);
  const std::uint64_t out = sendbuf == MPI_IN_PLACE ? in : bytes_of(sendcount, sendtype);
  k.e.send_bytes = out * others(k.n);
  k.e.recv_bytes = in * others(k.n);
}

inline void bytes_allgatherv(Coll& k, const void* sendbuf, int sendcount, MPI_Datatype sendtype, const int* recvcounts,
                             MPI_Datatype recvtype) {
  const std::uint64_t out = sendbuf == MPI_IN_PLACE ? bytes_of(k.me < k.n ? recvcounts[k.me] : 0, recvtype)
                                                    : bytes_of(sendcount, sendtype);
  k.e.send_bytes = out * others(k.n);
  k.e.recv_bytes = bytes_to_others(recvcounts, k.n, k.me, recvtype);
}

inline void bytes_alltoallv(Coll& k, const void* sendbuf, const int* sendcounts, MPI_Datatype sendtype,
                            const int* recvcounts, MPI_Datatype recvtype) {
  k.e.recv_bytes = bytes_to_others(recvcounts, k.n, k.me, recvtype);
  k.e.send_bytes = sendbuf == MPI_IN_PLACE ? k.e.recv_bytes : bytes_to_others(sendcounts, k.n, k.me, sendtype);
}

// MPI_Alltoallw: each block its own count and datatype.
inline void bytes_alltoallw(Coll& k, const void* sendbuf, const int* sendcounts, const MPI_Datatype* sendtypes,
                            const int* recvcounts, const MPI_Datatype* recvtypes) {
  auto to_others = [&](const int* counts, const MPI_Datatype* types) {
    std::uint64_t total = 0;
    for (int i = 0; i < k.n; ++i)
      if (i != k.me) total += bytes_of(counts[i], types[i]);
    return total;
  };
  k.e.recv_bytes = to_others(recvcounts, recvtypes);
  k.e.send_bytes = sendbuf == MPI_IN_PLACE ? k.e.recv_bytes : to_others(sendcounts, sendtypes);
}

inline void bytes_reduce_scatter(Coll& k, const int* recvcounts, MPI_Datatype type) {
  k.e.send_bytes = bytes_to_others(recvcounts, k.n, k.me, type);
  k.e.recv_bytes = bytes_of(k.me < k.n ? recvcounts[k.me] : 0, type) * others(k.n);
}

inline void bytes_reduce_scatter_block(Coll& k, int recvcount, MPI_Datatype type) {
  k.e.send_bytes = k.e.recv_bytes = bytes_of(recvcount, type) * others(k.n);
}

inline void bytes_scan(Coll& k, int count, MPI_Datatype type) {
  const std::uint64_t m = bytes_of(count, type);
  const auto before = static_cast<std::uint64_t>(k.me < k.n ? k.me : 0);
  k.e.send_bytes = m * (others(k.n) - before);
  k.e.recv_bytes = m * before;
}

}  // namespace mstep
