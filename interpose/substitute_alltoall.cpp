#include "interpose/substitute_alltoall.hpp"

#include <algorithm>
#include <vector>

#include "interpose/substitute.hpp"
#include "model/replay/replay_collectives.hpp"

namespace mstep {

namespace {

// Where each rank's block lies and how long it is: MPI_Alltoall's blocks of `count` in a row, or
// MPI_Alltoallv's counts and displacements.
struct Blocks {
  const int* counts = nullptr;  // null: `count` each, one after the other
  const int* displs = nullptr;
  int count = 0;
  int count_of(int r) const { return counts ? counts[r] : count; }
  MPI_Aint element_of(int r) const { return counts ? displs[r] : static_cast<MPI_Aint>(r) * count; }
};

// MPIR_Alltoall_intra_scattered and MPIR_Alltoallv_intra_scattered: receives from me + i, sends to
// me - i, kThrottle of each posted at a time, an empty block neither sent nor received (Alltoallv;
// Alltoall's are never empty here). Messages to itself are MPICH's too, outside the apparatus.
int scattered(const Wire& w, const void* sendbuf, const Blocks& out, MPI_Datatype sendtype, void* recvbuf,
              const Blocks& in, MPI_Datatype recvtype, int me, int n) {
  const MPI_Aint sext = extent_of(sendtype), rext = extent_of(recvtype);
  int ssize = 0, rsize = 0;
  PMPI_Type_size(sendtype, &ssize);
  PMPI_Type_size(recvtype, &rsize);
  const auto throttle = static_cast<int>(model::kAlltoallThrottle);
  std::vector<MPI_Request> requests;
  std::vector<MPI_Status> statuses;
  std::vector<int> sources;
  std::vector<std::uint64_t> bytes;
  std::vector<std::int64_t> holds;
  Rc rc;
  for (int ii = 0; ii < n; ii += throttle) {
    const int ss = std::min(n - ii, throttle);
    requests.clear();
    sources.clear();
    bytes.clear();
    holds.clear();
    for (int i = 0; i < ss; ++i) {
      const int src = (me + i + ii) % n;
      if (in.count_of(src) == 0 || rsize == 0) continue;
      rc(w.irecv(static_cast<char*>(recvbuf) + in.element_of(src) * rext, in.count_of(src), recvtype, src,
                 &requests.emplace_back()));
      if (src != me) sources.push_back(src), bytes.push_back(bytes_of(in.count_of(src), recvtype));
    }
    for (int i = 0; i < ss; ++i) {
      const int dst = (me - i - ii + n) % n;
      if (out.count_of(dst) == 0 || ssize == 0) continue;
      const char* from = static_cast<const char*>(sendbuf) + out.element_of(dst) * sext;
      if (dst == me)
        rc(PMPI_Isend(from, out.count_of(dst), sendtype, dst, kSubstituteTag, w.pc, &requests.emplace_back()));
      else
        rc(w.isend(from, out.count_of(dst), sendtype, dst, &requests.emplace_back(), holds));
    }
    statuses.resize(requests.size());
    rc(PMPI_Waitall(static_cast<int>(requests.size()), requests.data(), statuses.data()));
    w.complete(sources, bytes, holds);
  }
  return rc.rc;
}

// MPIR_Alltoall_intra_pairwise.
int pairwise(const Wire& w, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
             MPI_Datatype recvtype, int me, int n) {
  const MPI_Aint sext = extent_of(sendtype), rext = extent_of(recvtype);
  Rc rc;
  rc(local_copy(block_at(sendbuf, me, sendcount, sext), sendcount, sendtype, block_at(recvbuf, me, recvcount, rext),
                recvcount, recvtype));
  const bool pof2 = (n & (n - 1)) == 0;
  for (int i = 1; i < n; ++i) {
    const int src = pof2 ? me ^ i : (me - i + n) % n;
    const int dst = pof2 ? me ^ i : (me + i) % n;
    rc(w.sendrecv(block_at(sendbuf, dst, sendcount, sext), sendcount, sendtype, dst, block_at(recvbuf, src, recvcount, rext),
                  recvcount, recvtype, src));
  }
  return rc.rc;
}

// MPIR_Alltoall_intra_brucks.
int bruck(const Wire& w, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
          MPI_Datatype recvtype, int me, int n) {
  const MPI_Aint sext = extent_of(sendtype), rext = extent_of(recvtype);
  Rc rc;
  // Phase 1: the blocks shifted up by `me`, into recvbuf.
  rc(local_copy(block_at(sendbuf, me, sendcount, sext), (n - me) * sendcount, sendtype, recvbuf, (n - me) * recvcount,
                recvtype));
  rc(local_copy(sendbuf, me * sendcount, sendtype, block_at(recvbuf, n - me, recvcount, rext), me * recvcount, recvtype));
  // Phase 2: in round k, the blocks whose index has bit k go to me + 2^k.
  std::vector<int> displs;
  std::vector<char> packed;
  for (int pof2 = 1; pof2 < n; pof2 *= 2) {
    const int dst = (me + pof2) % n, src = (me - pof2 + n) % n;
    displs.clear();
    for (int b = 1; b < n; ++b)
      if (b & pof2) displs.push_back(b * recvcount);
    MPI_Datatype blocks = MPI_DATATYPE_NULL;
    rc(PMPI_Type_create_indexed_block(static_cast<int>(displs.size()), recvcount, displs.data(), recvtype, &blocks));
    rc(PMPI_Type_commit(&blocks));
    int pack_size = 0, position = 0;
    rc(PMPI_Pack_size(1, blocks, w.pc, &pack_size));
    packed.resize(static_cast<std::size_t>(std::max(pack_size, 1)));
    rc(PMPI_Pack(recvbuf, 1, blocks, packed.data(), pack_size, &position, w.pc));
    rc(w.sendrecv(packed.data(), position, MPI_PACKED, dst, recvbuf, 1, blocks, src));
    PMPI_Type_free(&blocks);
  }
  // Phase 3: rotated up by me + 1 blocks into a buffer laid out as recvbuf, then in reverse order back.
  MPI_Aint true_lb = 0, true_extent = 0;
  PMPI_Type_get_true_extent(recvtype, &true_lb, &true_extent);
  const auto elements = static_cast<MPI_Aint>(n) * recvcount;
  std::vector<char> rotated(static_cast<std::size_t>(std::max<MPI_Aint>(true_extent + (elements - 1) * rext, 1)));
  char* tmp = rotated.data() - true_lb;
  rc(local_copy(block_at(recvbuf, me + 1, recvcount, rext), (n - me - 1) * recvcount, recvtype, tmp,
                (n - me - 1) * recvcount, recvtype));
  rc(local_copy(recvbuf, (me + 1) * recvcount, recvtype, block_at(tmp, n - me - 1, recvcount, rext), (me + 1) * recvcount,
                recvtype));
  for (int i = 0; i < n; ++i)
    rc(local_copy(block_at(tmp, i, recvcount, rext), recvcount, recvtype, block_at(recvbuf, n - i - 1, recvcount, rext),
                  recvcount, recvtype));
  return rc.rc;
}

}  // namespace

AlltoallAlgo alltoall_runs(AlltoallAlgo algo, std::uint64_t block_bytes, int n) {
  if (algo != AlltoallAlgo::Pt2pt) return algo;
  if (n >= static_cast<int>(model::kAlltoallMinProcs) && block_bytes <= model::kAlltoallShortBytes) return AlltoallAlgo::Bruck;
  return block_bytes <= model::kAlltoallMediumBytes ? AlltoallAlgo::Scattered : AlltoallAlgo::Pairwise;
}

int substitute_alltoall(const Wire& w, AlltoallAlgo algo, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                        void* recvbuf, int recvcount, MPI_Datatype recvtype, int me, int n) {
  switch (alltoall_runs(algo, bytes_of(sendcount, sendtype), n)) {
    case AlltoallAlgo::Bruck: return bruck(w, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, me, n);
    case AlltoallAlgo::Pairwise: return pairwise(w, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, me, n);
    default: return scattered(w, sendbuf, Blocks{nullptr, nullptr, sendcount}, sendtype, recvbuf,
                              Blocks{nullptr, nullptr, recvcount}, recvtype, me, n);
  }
}

int substitute_alltoallv(const Wire& w, const void* sendbuf, const int* sendcounts, const int* sdispls,
                         MPI_Datatype sendtype, void* recvbuf, const int* recvcounts, const int* rdispls,
                         MPI_Datatype recvtype, int me, int n) {
  return scattered(w, sendbuf, Blocks{sendcounts, sdispls}, sendtype, recvbuf, Blocks{recvcounts, rdispls}, recvtype, me, n);
}

int Substitutes::alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm) {
  // What MPI would reject, MPI_IN_PLACE (MPICH's own in-place algorithm), or nothing to send, is
  // MPICH's to answer.
  if (!alltoall_on() || sendbuf == MPI_IN_PLACE || sendcount <= 0 || recvcount <= 0 || sendtype == MPI_DATATYPE_NULL ||
      recvtype == MPI_DATATYPE_NULL)
    return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  const std::optional<Member> m = member_of(comm);
  if (!m) return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  return substitute_alltoall(m->w, settings_.alltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, m->me,
                             m->n);
}

int Substitutes::alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls, MPI_Datatype sendtype,
                           void* recvbuf, const int* recvcounts, const int* rdispls, MPI_Datatype recvtype,
                           MPI_Comm comm) {
  // As MPI_Alltoall above: MPICH's own where it would reject the call or for MPI_IN_PLACE.
  if (!alltoall_on() || sendbuf == MPI_IN_PLACE || !sendcounts || !sdispls || !recvcounts || !rdispls ||
      sendtype == MPI_DATATYPE_NULL || recvtype == MPI_DATATYPE_NULL)
    return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
  const std::optional<Member> m = member_of(comm);
  if (!m) return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
  return substitute_alltoallv(m->w, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, m->me,
                              m->n);
}

}  // namespace mstep
