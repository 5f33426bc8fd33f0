#include "interpose/substitute_allgather.hpp"

#include <algorithm>
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

// MPI_Allgatherv's blocks: where block i lies in the receive buffer (displacements in elements
// of the receive type) and where it lies packed, as MPICH's temporary buffer of bytes holds them
// in rank order.
struct VBlocks {
  const int* counts;
  const int* displs;
  MPI_Datatype type;
  MPI_Aint extent;
  int size;                  // bytes of one element
  std::vector<int> packed;   // packed[i]: bytes of blocks 0 .. i-1; packed[n] all of them
  VBlocks(const int* c, const int* d, MPI_Datatype t, int n) : counts(c), displs(d), type(t), extent(extent_of(t)) {
    PMPI_Type_size(t, &size);
    packed.assign(static_cast<std::size_t>(n) + 1, 0);
    for (int i = 0; i < n; ++i) packed[i + 1] = packed[i] + counts[i] * size;
  }
  int bytes(int i) const { return counts[i] * size; }
  char* at(void* recvbuf, int i) const { return static_cast<char*>(recvbuf) + MPI_Aint{displs[i]} * extent; }
};

// The caller's own block packed at `to`: from sendbuf as sent, or in place from the receive buffer.
int pack_own(const void* sendbuf, int sendcount, MPI_Datatype sendtype, const VBlocks& b, void* recvbuf, int me,
             char* to, int room, MPI_Comm pc) {
  int pos = 0;
  if (sendbuf == MPI_IN_PLACE) return PMPI_Pack(b.at(recvbuf, me), b.counts[me], b.type, to, room, &pos, pc);
  return PMPI_Pack(sendbuf, sendcount, sendtype, to, room, &pos, pc);
}

// MPIR_Allgatherv_intra_recursive_doubling (n a power of 2): the blocks gathered in rank order in
// a buffer of bytes, in round i the subtree's 2^i blocks exchanged with rank XOR 2^i's, then each
// unpacked at its displacement.
int recursive_doubling_v(const Wire& w, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                         const VBlocks& b, int me, int n) {
  const int total = b.packed[n];
  std::vector<char> held(static_cast<std::size_t>(total));
  Rc rc;
  rc(pack_own(sendbuf, sendcount, sendtype, b, recvbuf, me, held.data() + b.packed[me], b.bytes(me), w.pc));
  for (int mask = 1, i = 0; mask < n; mask <<= 1, ++i) {
    const int dst = me ^ mask, mine = (me >> i) << i, theirs = (dst >> i) << i;
    rc(w.sendrecv(held.data() + b.packed[mine], b.packed[mine + mask] - b.packed[mine], MPI_BYTE, dst,
                  held.data() + b.packed[theirs], b.packed[theirs + mask] - b.packed[theirs], MPI_BYTE, dst));
  }
  for (int j = 0; j < n; ++j) {
    if (sendbuf == MPI_IN_PLACE && j == me) continue;
    int pos = 0;
    rc(PMPI_Unpack(held.data() + b.packed[j], b.bytes(j), &pos, b.at(recvbuf, j), b.counts[j], b.type, w.pc));
  }
  return rc.rc;
}

// MPIR_Allgatherv_intra_brucks: the own block first, then in round k the blocks held sent to
// rank - 2^k while those of rank + 2^k .. rank + 2^(k+1) - 1 arrive (the last round the rest),
// then rotated into place.
int bruck_v(const Wire& w, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const VBlocks& b,
            int me, int n) {
  const int total = b.packed[n];
  std::vector<char> held(static_cast<std::size_t>(total));
  Rc rc;
  rc(pack_own(sendbuf, sendcount, sendtype, b, recvbuf, me, held.data(), b.bytes(me), w.pc));
  // Bytes of the `k` blocks from `first` on, wrapping.
  const auto run = [&](int first, int k) {
    int sum = 0;
    for (int i = 0; i < k; ++i) sum += b.bytes((first + i) % n);
    return sum;
  };
  int held_bytes = b.bytes(me), pof2 = 1;
  for (; pof2 <= n / 2; pof2 *= 2) {
    const int src = (me + pof2) % n, dst = (me - pof2 + n) % n, arriving = run(src, pof2);
    rc(w.sendrecv(held.data(), held_bytes, MPI_BYTE, dst, held.data() + held_bytes, arriving, MPI_BYTE, src));
    held_bytes += arriving;
  }
  if (const int rem = n - pof2; rem > 0) {
    const int src = (me + pof2) % n, dst = (me - pof2 + n) % n;
    rc(w.sendrecv(held.data(), run(me, rem), MPI_BYTE, dst, held.data() + held_bytes, run(src, rem), MPI_BYTE, src));
  }
  for (int i = 0, at = 0; i < n; ++i) {
    const int j = (me + i) % n;
    int pos = 0;
    rc(PMPI_Unpack(held.data() + at, b.bytes(j), &pos, b.at(recvbuf, j), b.counts[j], b.type, w.pc));
    at += b.bytes(j);
  }
  return rc.rc;
}

// MPIR_Allgatherv_intra_ring: in the receive buffer itself, block by block to rank + 1 while one
// arrives from rank - 1, in chunks of 32 KiB (MPIR_CVAR_ALLGATHERV_PIPELINE_MSG_SIZE) of whole
// elements when the largest block is longer; nothing is sent for a block of nothing.
int ring_v(const Wire& w, void* recvbuf, const VBlocks& b, int me, int n) {
  const int left = (me - 1 + n) % n, right = (me + 1) % n;
  long long torecv = 0, tosend = 0;
  int largest = 0;
  for (int i = 0; i < n; ++i) {
    torecv += b.counts[i], largest = std::max(largest, b.counts[i]);
  }
  tosend = torecv - b.counts[right];
  torecv -= b.counts[me];
  int chunk = 0;
  if (MPI_Aint{largest} * b.extent > static_cast<MPI_Aint>(model::kAllgathervPipelineBytes))
    chunk = std::max<int>(1, static_cast<int>(model::kAllgathervPipelineBytes / b.extent));
  if (chunk == 0) chunk = largest;
  Rc rc;
  int sidx = me, ridx = left, soffset = 0, roffset = 0;
  while (tosend > 0 || torecv > 0) {
    const int sendnow = tosend ? std::min(chunk, b.counts[sidx] - soffset) : 0;
    const int recvnow = torecv ? std::min(chunk, b.counts[ridx] - roffset) : 0;
    char* sbuf = b.at(recvbuf, sidx) + MPI_Aint{soffset} * b.extent;
    char* rbuf = b.at(recvbuf, ridx) + MPI_Aint{roffset} * b.extent;
    if (sendnow && recvnow) rc(w.sendrecv(sbuf, sendnow, b.type, right, rbuf, recvnow, b.type, left));
    else if (sendnow) rc(w.send(sbuf, sendnow, b.type, right));
    else if (recvnow) rc(w.recv(rbuf, recvnow, b.type, left));
    tosend -= sendnow, torecv -= recvnow;
    soffset += sendnow, roffset += recvnow;
    if (soffset == b.counts[sidx]) soffset = 0, sidx = (sidx + n - 1) % n;
    if (roffset == b.counts[ridx]) roffset = 0, ridx = (ridx + n - 1) % n;
  }
  return rc.rc;
}

}  // namespace

AllgatherAlgo allgather_runs_total(AllgatherAlgo algo, std::uint64_t total, int n) {
  const bool pof2 = (n & (n - 1)) == 0;
  if (algo == AllgatherAlgo::RecursiveDoubling && !pof2) return AllgatherAlgo::Bruck;
  if (algo != AllgatherAlgo::Pt2pt) return algo;
  if (pof2) return total < model::kAllgatherLongBytes ? AllgatherAlgo::RecursiveDoubling : AllgatherAlgo::Ring;
  return total < model::kAllgatherShortBytes ? AllgatherAlgo::Bruck : AllgatherAlgo::Ring;
}

AllgatherAlgo allgather_runs(AllgatherAlgo algo, std::uint64_t block_bytes, int n) {
  return allgather_runs_total(algo, block_bytes * static_cast<std::uint64_t>(n), n);
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

int substitute_allgatherv(const Wire& w, AllgatherAlgo algo, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                          void* recvbuf, const int* recvcounts, const int* displs, MPI_Datatype recvtype, int me,
                          int n) {
  const VBlocks b(recvcounts, displs, recvtype, n);
  switch (allgather_runs_total(algo, static_cast<std::uint64_t>(b.packed[n]), n)) {
    case AllgatherAlgo::RecursiveDoubling: return recursive_doubling_v(w, sendbuf, sendcount, sendtype, recvbuf, b, me, n);
    case AllgatherAlgo::Bruck: return bruck_v(w, sendbuf, sendcount, sendtype, recvbuf, b, me, n);
    default: break;
  }
  Rc rc;
  if (sendbuf != MPI_IN_PLACE)
    rc(local_copy(sendbuf, sendcount, sendtype, b.at(recvbuf, me), recvcounts[me], recvtype));
  rc(ring_v(w, recvbuf, b, me, n));
  return rc.rc;
}

int Substitutes::allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                            const int* recvcounts, const int* displs, MPI_Datatype recvtype, MPI_Comm comm) {
  const auto mpich = [&] {
    return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
  };
  // As for MPI_Allgather, decided alike on every member from what they share (the counts and the
  // receive type): what MPI would reject, nothing to move at all, more than an int of bytes in all.
  if (!allgather_on() || comm == MPI_COMM_NULL || recvcounts == nullptr || displs == nullptr ||
      recvtype == MPI_DATATYPE_NULL || (sendbuf != MPI_IN_PLACE && (sendcount < 0 || sendtype == MPI_DATATYPE_NULL)))
    return mpich();
  int n = 0, size = 0, inter = 0;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter || PMPI_Comm_size(comm, &n) != MPI_SUCCESS ||
      PMPI_Type_size(recvtype, &size) != MPI_SUCCESS)
    return mpich();
  std::uint64_t total = 0;
  for (int i = 0; i < n; ++i) {
    if (recvcounts[i] < 0) return mpich();
    total += static_cast<std::uint64_t>(recvcounts[i]) * static_cast<std::uint64_t>(size);
  }
  if (total == 0 || total > INT_MAX) return mpich();
  const std::optional<Member> m = member_of(comm);
  if (!m) return mpich();
  return substitute_allgatherv(m->w, settings_.allgather, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                               recvtype, m->me, m->n);
}

}  // namespace mstep
