#include "interpose/substitute_scan.hpp"

#include "interpose/substitute.hpp"
#include "interpose/substitute_vector.hpp"

namespace mstep {

namespace {

// The exchanges of the partial result (in scratch slot 0; the partner's arrives in slot 1) of
// MPIR_Scan_intra_recursive_doubling, which reduces each lower rank's partial result into recvbuf
// too; `exclusive`: of MPIR_Exscan_intra_recursive_doubling, whose recvbuf gets the first lower
// partial result as it is and reduces the later ones into it (rank 0's recvbuf is not touched).
int recursive_doubling(const Wire& w, const void* input, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                       int me, int n, bool exclusive) {
  int commutative = 0;
  Rc rc;
  rc(PMPI_Op_commutative(op, &commutative));
  const Span s = span_of(type, count);
  char* partial = scratch(s, 0);
  char* incoming = scratch(s, 1);
  rc(copy(input, partial, count, type, s, w.pc, me));
  bool have = false;  // Exscan: whether recvbuf holds a lower rank's result yet
  for (int mask = 1; mask < n; mask <<= 1) {
    const int dst = me ^ mask;
    if (dst >= n) continue;
    rc(w.sendrecv(partial, count, type, dst, incoming, count, type, dst));
    if (me > dst) {
      rc(PMPI_Reduce_local(incoming, partial, count, type, op));
      if (!exclusive) {
        rc(PMPI_Reduce_local(incoming, recvbuf, count, type, op));
      } else if (!have) {
        rc(copy(incoming, recvbuf, count, type, s, w.pc, me));
        have = true;
      } else {
        rc(PMPI_Reduce_local(incoming, recvbuf, count, type, op));
      }
    } else if (commutative) {
      rc(PMPI_Reduce_local(incoming, partial, count, type, op));
    } else {
      rc(PMPI_Reduce_local(partial, incoming, count, type, op));
      rc(copy(incoming, partial, count, type, s, w.pc, me));
    }
  }
  return rc.rc;
}

// MPIR_Bcast_intra_binomial of one int from rank 0 (MPICH's schedule, as interpose/substitute.cpp
// runs it for MSTEP_BCAST=binomial).
int binomial_bcast_int(const Wire& w, int* value, int me, int n) {
  Rc rc;
  int mask = 1;
  while (mask < n) {
    if (me & mask) {
      rc(w.recv(value, 1, MPI_INT, me - mask));
      break;
    }
    mask <<= 1;
  }
  for (mask >>= 1; mask > 0; mask >>= 1)
    if (me + mask < n) rc(w.send(value, 1, MPI_INT, me + mask));
  return rc.rc;
}

}  // namespace

int substitute_scan(const Wire& w, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int me,
                    int n) {
  Rc rc;
  const Span s = span_of(type, count);
  if (sendbuf != MPI_IN_PLACE) rc(copy(sendbuf, recvbuf, count, type, s, w.pc, me));
  rc(recursive_doubling(w, recvbuf, recvbuf, count, type, op, me, n, false));
  // The node's total to the node's root (rank 0), which, the only node's root, has no other node
  // to scan with: it keeps it, and tells every rank that nothing more is to be added.
  if (me == n - 1) rc(w.send(recvbuf, count, type, 0));
  else if (me == 0) rc(w.recv(scratch(s, 1), count, type, n - 1));
  int noneed = 1;
  rc(binomial_bcast_int(w, &noneed, me, n));
  return rc.rc;
}

int substitute_exscan(const Wire& w, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                      int me, int n) {
  return recursive_doubling(w, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, recvbuf, count, type, op, me, n, true);
}

// What MPI would reject, or where there is nothing to reduce, is MPICH's to answer, decided alike
// on every member (a run over several hosts has scan_on() false: Substitutes::start).
int Substitutes::scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  if (!scan_on() || count <= 0 || type == MPI_DATATYPE_NULL || op == MPI_OP_NULL || sendbuf == recvbuf)
    return PMPI_Scan(sendbuf, recvbuf, count, type, op, comm);
  const std::optional<Member> m = member_of(comm);
  if (!m) return PMPI_Scan(sendbuf, recvbuf, count, type, op, comm);
  return substitute_scan(m->w, sendbuf, recvbuf, count, type, op, m->me, m->n);
}

int Substitutes::exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  if (!scan_on() || count <= 0 || type == MPI_DATATYPE_NULL || op == MPI_OP_NULL || sendbuf == recvbuf)
    return PMPI_Exscan(sendbuf, recvbuf, count, type, op, comm);
  const std::optional<Member> m = member_of(comm);
  if (!m) return PMPI_Exscan(sendbuf, recvbuf, count, type, op, comm);
  return substitute_exscan(m->w, sendbuf, recvbuf, count, type, op, m->me, m->n);
}

}  // namespace mstep
