// libmstep's MPI_Scan and MPI_Exscan over point-to-point messages (MSTEP_SCAN=pt2pt,
// interpose/substitute.hpp): what MPICH 4.0.2 runs on one host, message for message and reduction
// for reduction, so that the replay's programs of them (model/replay/replay_collectives.cpp) are
// what ran and the delay apparatus reaches every message.
//   MPI_Exscan: MPIR_Exscan_intra_recursive_doubling (ch4's MPIDI_Exscan_intra_composition_alpha
//     runs it on the whole communicator): in round k the partial result exchanged with rank XOR
//     2^k where that rank exists, a lower rank's reduced into this one's result;
//   MPI_Scan: ch4's MPIDI_Scan_intra_composition_alpha, chosen where the ranks are consecutive on
//     their nodes; on one node it is MPIR_Scan_intra_recursive_doubling on the whole communicator
//     (the node's communicator is not a parent, so MPICH's selection takes recursive doubling),
//     then the last rank's result sent to rank 0 (the node's total, for a scan across nodes that
//     has no other node), then MPICH's "noneed" flag (one int) broadcast from rank 0 by the
//     binomial tree. A run over several hosts keeps MPICH's own (Substitutes::start).
#pragma once

#include <mpi.h>

#include "interpose/substitute_wire.hpp"

namespace mstep {

// One member's part (me of n on w's communicator, n > 1), count > 0, sendbuf != recvbuf (it may be
// MPI_IN_PLACE). The first failing call's code, MPI_SUCCESS otherwise.
int substitute_scan(const Wire& w, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int me,
                    int n);
int substitute_exscan(const Wire& w, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                      int me, int n);

}  // namespace mstep
