#include "interpose/substitute_allgather.hpp"

#include <climits>
#include <vector>

#include "interpose/substitute.hpp"
#include "model/replay/replay_collectives.hpp"

namespace mstep {

namespace {

// MPIR_Allgather_intra_recursive_doubling (n a power of 2).
int recursive_doubling(const Wire& w, void* recvbuf, int recvcount, MPI_Datatype recvtype, int me, int n) {
  const MPI_Aint rext = extent_of(recvtype);
  Rc rc;
  for (int mask = 1, i = 0; mask < n; mask <<= 1, ++i) {
    const int dst = me ^ mask, mine = (me >> i) << i, theirs = (dst >> i) << i;
    rc(w.sendrecv(block_at(recvbuf, mine, recvcount, rext), mask * recvcount, recvtype, dst,
                  block_at(recvbuf, theirs, recvcount, rext), mask * recvcount, recvtype, dst));
  }
  return rc.rc;
}

// MPIR_Allgather_intra_brucks.
int bruck(const Wire& w, void* recvbuf, int recvcount, MPI_Datatype recvtype, int me, int n) {
  const MPI_Aint rext = extent_of(recvtype);
  int size = 0;
  PMPI_Type_size(recvtype, &size);
  const int block = recvcount * size, total = n * block;
  std::vector<char> held(static_cast<std::size_t>(total));  // blocks me, me + 1, ... as bytes
  Rc rc;
  int pos = 0;
  rc(PMPI_Pack(block_at(recvbuf, me, recvcount, rext), recvcount, recvtype, held.data(), total, &pos, w.pc));
  int blocks = 1, pof2 = 1;
  for (; pof2 <= n / 2; pof2 *= 2, blocks *= 2)
    rc(w.sendrecv(held.data(), blocks * block, MPI_BYTE, (me - pof2 + n) % n, held.data() + std::size_t(blocks) * block,
                  blocks * block, MPI_BYTE, (me + pof2) % n));
  if (const int rem = n - pof2; rem > 0)
    rc(w.sendrecv(held.data(), rem * block, MPI_BYTE, (me - pof2 + n) % n, held.data() + std::size_t(blocks) * block,
                  rem * block, MPI_BYTE, (me + pof2) % n));
  pos = 0;
  rc(PMPI_Unpack(held.data(), total, &pos, block_at(recvbuf, me, recvcount, rext), (n - me) * recvcount, recvtype, w.pc));
  rc(PMPI_Unpack(held.data(), total, &pos, recvbuf, me * recvcount, recvtype, w.pc));
  return rc.rc;
}

// MPIR_Allgather_intra_ring.
int ring(const Wire& w, void* recvbuf, int recvcount, MPI_Datatype recvtype, int me, int n) {
  const MPI_Aint rext = extent_of(recvtype);
  const int left = (me - 1 + n) % n, right = (me + 1) % n;
  Rc rc;
  for (int i = 1, j = me, next = left; i < n; ++i, j = next, next = (next - 1 + n) % n)
    rc(w.sendrecv(block_at(recvbuf, j, recvcount, rext), recvcount, recvtype, right,
                  block_at(recvbuf, next, recvcount, rext), recvcount, recvtype, left));
  return rc.rc;
}

}  // namespace

AllgatherAlgo allgather_runs(AllgatherAlgo algo, std::uint64_t block_bytes, int n) {
  const bool pof2 = (n & (n - 1)) == 0;
  if (algo == AllgatherAlgo::RecursiveDoubling && !pof2) return AllgatherAlgo::Bruck;
  if (algo != AllgatherAlgo::Pt2pt) return algo;
  const std::uint64_t total = block_bytes * static_cast<std::uint64_t>(n);
  if (pof2) return total < model::kAllgatherLongBytes ? AllgatherAlgo::RecursiveDoubling : AllgatherAlgo::Ring;
  return total < model::kAllgatherShortBytes ? AllgatherAlgo::Bruck : AllgatherAlgo::Ring;
}

int substitute_allgather(const Wire& w, AllgatherAlgo algo, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                         void* recvbuf, int recvcount, MPI_Datatype recvtype, int me, int n) {
  Rc rc;
  // Every algorithm starts from the own block in place (MPICH's Bruck copies it from sendbuf
  // straight into its byte buffer; the same bytes).
  if (sendbuf != MPI_IN_PLACE)
    rc(local_copy(sendbuf, sendcount, sendtype, block_at(recvbuf, me, recvcount, extent_of(recvtype)), recvcount,
                  recvtype));
  switch (allgather_runs(algo, bytes_of(recvcount, recvtype), n)) {
    case AllgatherAlgo::RecursiveDoubling: rc(recursive_doubling(w, recvbuf, recvcount, recvtype, me, n)); break;
    case AllgatherAlgo::Bruck: rc(bruck(w, recvbuf, recvcount, recvtype, me, n)); break;
    default: rc(ring(w, recvbuf, recvcount, recvtype, me, n)); break;
  }
  return rc.rc;
}

int Substitutes::allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, MPI_Comm comm) {
  const auto mpich = [&] { return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm); };
  // What MPI would reject, nothing to move, or more than an int of bytes in all, is MPICH's to
  // answer, decided alike on every member (the block is the same everywhere).
  if (!allgather_on() || comm == MPI_COMM_NULL || recvcount <= 0 || recvtype == MPI_DATATYPE_NULL ||
      (sendbuf != MPI_IN_PLACE && (sendcount <= 0 || sendtype == MPI_DATATYPE_NULL)))
    return mpich();
  int n = 0;
  if (PMPI_Comm_size(comm, &n) != MPI_SUCCESS || bytes_of(recvcount, recvtype) * static_cast<std::uint64_t>(n) > INT_MAX)
    return mpich();
  const std::optional<Member> m = member_of(comm);
  if (!m) return mpich();
  return substitute_allgather(m->w, settings_.allgather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                              m->me, m->n);
}

}  // namespace mstep
