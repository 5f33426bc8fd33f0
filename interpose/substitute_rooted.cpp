#include "interpose/substitute_rooted.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <vector>

#include "interpose/substitute.hpp"

namespace mstep {

namespace {

int type_size(MPI_Datatype type) {
  int size = 0;
  PMPI_Type_size(type, &size);
  return size;
}

// The block length in bytes of a gather's or scatter's member (`typed` its count and type), or 0
// where MPICH's own collective should answer: nothing to move, a bad count or type, or more than
// an int of bytes in the root's buffer.
int block_bytes(int count, MPI_Datatype type, int n) {
  if (count <= 0 || type == MPI_DATATYPE_NULL) return 0;
  const std::int64_t bytes = std::int64_t{count} * type_size(type);
  return bytes > 0 && bytes * n <= INT_MAX ? static_cast<int>(bytes) : 0;
}

// The lowest set bit of r > 0: the size of the subtree rooted at relative rank r, uncut.
int lowbit(int r) { return r & -r; }

}  // namespace

int substitute_gather(const Wire& w, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                      int recvcount, MPI_Datatype recvtype, int root, int me, int n, int nbytes) {
  const int rel = (me - root + n) % n;
  const auto abs = [&](int r) { return (r + root) % n; };
  const MPI_Aint rext = me == root ? extent_of(recvtype) : 0;
  Rc rc;
  std::vector<char> subtree;  // a forwarding rank's blocks, its own first, in relative order
  int held = 0;
  if (me == root) {
    if (sendbuf != MPI_IN_PLACE)
      rc(local_copy(sendbuf, sendcount, sendtype, block_at(recvbuf, root, recvcount, rext), recvcount, recvtype));
  } else if (rel % 2 == 0 && rel + 1 < n) {
    subtree.resize(static_cast<std::size_t>(std::min(lowbit(rel), n - rel)) * nbytes);
    rc(PMPI_Pack(sendbuf, sendcount, sendtype, subtree.data(), static_cast<int>(subtree.size()), &held, w.pc));
  }
  for (int mask = 1; mask < n; mask <<= 1) {
    if ((rel & mask) == 0) {
      const int child = rel | mask;
      if (child >= n) continue;
      const int blocks = std::min(mask, n - child), first = abs(child);
      if (me != root) {
        rc(w.recv(subtree.data() + std::size_t(mask) * nbytes, blocks * nbytes, MPI_BYTE, first));
        held += blocks * nbytes;
      } else if (first + blocks <= n) {  // in place in recvbuf
        rc(w.recv(block_at(recvbuf, first, recvcount, rext), blocks * recvcount, recvtype, first));
      } else {  // wrapping round the end of recvbuf: received whole, then unpacked in two parts
        std::vector<char> wrapped(std::size_t(blocks) * nbytes);
        rc(w.recv(wrapped.data(), blocks * nbytes, MPI_BYTE, first));
        int pos = 0;
        const int tail = n - first;
        rc(PMPI_Unpack(wrapped.data(), blocks * nbytes, &pos, block_at(recvbuf, first, recvcount, rext),
                       tail * recvcount, recvtype, w.pc));
        rc(PMPI_Unpack(wrapped.data(), blocks * nbytes, &pos, recvbuf, (blocks - tail) * recvcount, recvtype, w.pc));
      }
    } else {
      const int parent = abs(rel ^ mask);
      if (subtree.empty()) rc(w.send(sendbuf, sendcount, sendtype, parent));
      else rc(w.send(subtree.data(), held, MPI_BYTE, parent));
      break;
    }
  }
  return rc.rc;
}

int substitute_scatter(const Wire& w, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                       int recvcount, MPI_Datatype recvtype, int root, int me, int n, int nbytes) {
  const int rel = (me - root + n) % n;
  const auto abs = [&](int r) { return (r + root) % n; };
  Rc rc;
  std::vector<char> subtree;  // the blocks this rank forwards, its own first, in relative order
  if (me == root) {
    const MPI_Aint sext = extent_of(sendtype);
    if (root != 0) {  // relative order: blocks root + 1 ... n - 1, then 0 ... root - 1
      subtree.resize(std::size_t(n) * nbytes);
      int pos = nbytes;
      const int size = static_cast<int>(subtree.size());
      rc(PMPI_Pack(block_at(sendbuf, root + 1, sendcount, sext), (n - root - 1) * sendcount, sendtype, subtree.data(),
                   size, &pos, w.pc));
      rc(PMPI_Pack(sendbuf, root * sendcount, sendtype, subtree.data(), size, &pos, w.pc));
    }
    int top = 1;
    while (top * 2 < n) top *= 2;
    for (int mask = top; mask > 0; mask >>= 1) {
      const int blocks = std::min(mask, n - mask);
      if (root == 0) rc(w.send(block_at(sendbuf, mask, sendcount, sext), blocks * sendcount, sendtype, mask));
      else rc(w.send(subtree.data() + std::size_t(mask) * nbytes, blocks * nbytes, MPI_BYTE, abs(mask)));
    }
    if (recvbuf != MPI_IN_PLACE)
      rc(local_copy(block_at(sendbuf, root, sendcount, sext), sendcount, sendtype, recvbuf, recvcount, recvtype));
    return rc.rc;
  }
  const int low = lowbit(rel), parent = abs(rel - low), blocks = std::min(low, n - rel);
  if (blocks == 1) return w.recv(recvbuf, recvcount, recvtype, parent);  // a leaf
  subtree.resize(std::size_t(blocks) * nbytes);
  rc(w.recv(subtree.data(), blocks * nbytes, MPI_BYTE, parent));
  for (int mask = low >> 1; mask > 0; mask >>= 1) {
    const int child = rel + mask;
    if (child < n) rc(w.send(subtree.data() + std::size_t(mask) * nbytes, std::min(mask, n - child) * nbytes, MPI_BYTE, abs(child)));
  }
  int pos = 0;
  rc(PMPI_Unpack(subtree.data(), nbytes, &pos, recvbuf, recvcount, recvtype, w.pc));
  return rc.rc;
}

int substitute_gatherv(const Wire& w, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                       const int* recvcounts, const int* displs, MPI_Datatype recvtype, int root, int me, int n) {
  if (me != root) {
    if (sendcount == 0) return MPI_SUCCESS;
    return n >= 32 ? w.ssend(sendbuf, sendcount, sendtype, root) : w.send(sendbuf, sendcount, sendtype, root);
  }
  const MPI_Aint rext = extent_of(recvtype);
  std::vector<MPI_Request> requests;
  std::vector<int> sources;
  std::vector<std::uint64_t> bytes;
  Rc rc;
  for (int i = 0; i < n; ++i) {
    if (recvcounts[i] == 0) continue;
    char* to = static_cast<char*>(recvbuf) + displs[i] * rext;
    if (i == root) {
      if (sendbuf != MPI_IN_PLACE) rc(local_copy(sendbuf, sendcount, sendtype, to, recvcounts[i], recvtype));
      continue;
    }
    rc(w.irecv(to, recvcounts[i], recvtype, i, &requests.emplace_back()));
    sources.push_back(i), bytes.push_back(bytes_of(recvcounts[i], recvtype));
  }
  rc(PMPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
  w.complete(sources, bytes, {});
  return rc.rc;
}

int substitute_scatterv(const Wire& w, const void* sendbuf, const int* sendcounts, const int* displs,
                        MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, int me,
                        int n) {
  if (me != root) return recvcount == 0 ? MPI_SUCCESS : w.recv(recvbuf, recvcount, recvtype, root);
  const MPI_Aint sext = extent_of(sendtype);
  std::vector<MPI_Request> requests;
  std::vector<std::int64_t> holds;
  Rc rc;
  for (int i = 0; i < n; ++i) {
    if (sendcounts[i] == 0) continue;
    const char* from = static_cast<const char*>(sendbuf) + displs[i] * sext;
    if (i == root) {
      if (recvbuf != MPI_IN_PLACE) rc(local_copy(from, sendcounts[i], sendtype, recvbuf, recvcount, recvtype));
      continue;
    }
    rc(w.isend(from, sendcounts[i], sendtype, i, &requests.emplace_back(), holds));
  }
  rc(PMPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
  w.complete({}, {}, holds);
  return rc.rc;
}

// What MPI would reject, or a block of nothing, is MPICH's to answer, decided alike on every
// member (a gather's block length is the same everywhere) before any of them makes the private
// duplicate (place_of, then the blocks).
int Substitutes::gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                        MPI_Datatype recvtype, int root, MPI_Comm comm) {
  const auto mpich = [&] { return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm); };
  if (!gather_on()) return mpich();
  const std::optional<Place> place = place_of(comm, root);
  if (!place) return mpich();
  const int me = place->me, n = place->n;
  const int nbytes = me == root ? block_bytes(recvcount, recvtype, n) : block_bytes(sendcount, sendtype, n);
  if (nbytes == 0 || (me == root && sendbuf != MPI_IN_PLACE && block_bytes(sendcount, sendtype, n) != nbytes) ||
      (me != root && sendbuf == MPI_IN_PLACE))  // erroneous off the root: MPICH's to report
    return mpich();
  const std::optional<Member> m = member_of(comm);
  if (!m) return mpich();
  return substitute_gather(m->w, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, m->me, m->n, nbytes);
}

int Substitutes::scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                         MPI_Datatype recvtype, int root, MPI_Comm comm) {
  const auto mpich = [&] { return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm); };
  if (!scatter_on()) return mpich();
  const std::optional<Place> place = place_of(comm, root);
  if (!place) return mpich();
  const int me = place->me, n = place->n;
  const int nbytes = me == root ? block_bytes(sendcount, sendtype, n) : block_bytes(recvcount, recvtype, n);
  if (nbytes == 0 || (me == root && recvbuf != MPI_IN_PLACE && block_bytes(recvcount, recvtype, n) != nbytes) ||
      (me != root && recvbuf == MPI_IN_PLACE))  // erroneous off the root: MPICH's to report
    return mpich();
  const std::optional<Member> m = member_of(comm);
  if (!m) return mpich();
  return substitute_scatter(m->w, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, m->me, m->n, nbytes);
}

int Substitutes::gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                         const int* recvcounts, const int* displs, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  const auto mpich = [&] {
    return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
  };
  if (!gather_on()) return mpich();
  const std::optional<Place> place = place_of(comm, root);
  if (!place) return mpich();
  const int me = place->me, n = place->n;
  if (me == root ? !recvcounts || !displs || recvtype == MPI_DATATYPE_NULL ||
                       std::any_of(recvcounts, recvcounts + n, [](int c) { return c < 0; })
                 : sendcount < 0 || (sendcount > 0 && sendtype == MPI_DATATYPE_NULL))
    return mpich();
  const std::optional<Member> m = member_of(comm);
  if (!m) return mpich();
  return substitute_gatherv(m->w, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, m->me, m->n);
}

int Substitutes::scatterv(const void* sendbuf, const int* sendcounts, const int* displs, MPI_Datatype sendtype,
                          void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  const auto mpich = [&] {
    return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
  };
  if (!scatter_on()) return mpich();
  const std::optional<Place> place = place_of(comm, root);
  if (!place) return mpich();
  const int me = place->me, n = place->n;
  if (me == root ? !sendcounts || !displs || sendtype == MPI_DATATYPE_NULL ||
                       std::any_of(sendcounts, sendcounts + n, [](int c) { return c < 0; })
                 : recvcount < 0 || (recvcount > 0 && recvtype == MPI_DATATYPE_NULL))
    return mpich();
  const std::optional<Member> m = member_of(comm);
  if (!m) return mpich();
  return substitute_scatterv(m->w, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, m->me, m->n);
}

}  // namespace mstep
