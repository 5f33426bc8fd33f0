// Substitute collectives (issue 15): MPI_Barrier, MPI_Bcast, MPI_Allreduce, MPI_Reduce, MPI_Alltoall(v),
// MPI_Allgather(v), MPI_Gather(v), MPI_Scatter(v) and MPI_Reduce_scatter(_block) run by libmstep's own
// algorithms over point-to-point messages, so that an algorithm `mstep advise` recommends can be
// run and measured without changing the application, and so that the delay apparatus reaches
// every message of a collective (issue 13). Chosen by environment variables, read at MPI_Init:
//   MSTEP_BARRIER   = mpi | central | tree:N (2 <= N <= 255) | dissemination | auto
//   MSTEP_BCAST     = mpi | flat | binomial | esssp | auto
//   MSTEP_ALLREDUCE = mpi | recursive_doubling | reduce_scatter_allgather | pt2pt
//     (MPICH 4.0.2's algorithms; pt2pt: the one MPICH chooses: interpose/substitute_allreduce.hpp)
//   MSTEP_ALLTOALL  = mpi | bruck | scattered | pairwise | pt2pt (the same for MPI_Alltoall, and
//     but for mpi MPI_Alltoallv's scattered exchange: interpose/substitute_alltoall.hpp;
//     MPI_IN_PLACE runs MPICH's own)
//   MSTEP_ALLGATHER = mpi | recursive_doubling | bruck | ring | pt2pt (MPI_Allgather and
//     MPI_Allgatherv: interpose/substitute_allgather.hpp)
//   MSTEP_REDUCE    = mpi | binomial | reduce_scatter_gather | pt2pt (MPI_Reduce:
//     interpose/substitute_reduce.hpp)
//   MSTEP_GATHER    = mpi | pt2pt (MPI_Gather's binomial tree and MPI_Gatherv's linear receive,
//     MPICH 4.0.2's one algorithm for each: interpose/substitute_rooted.hpp)
//   MSTEP_SCATTER   = mpi | pt2pt (the same for MPI_Scatter and MPI_Scatterv)
//   MSTEP_REDUCE_SCATTER = mpi | recursive_halving | pairwise | pt2pt (MPI_Reduce_scatter and
//     MPI_Reduce_scatter_block with a commutative operation: interpose/substitute_reduce_scatter.hpp)
//   MSTEP_SCAN      = mpi | pt2pt (MPI_Scan and MPI_Exscan as MPICH 4.0.2 runs them on one host:
//     interpose/substitute_scan.hpp; a run over several hosts keeps MPICH's own, and says so)
// "auto" is Zharikov and Paznikov's adaptive barrier: per communicator size, the algorithm (and
// tree arity) of least predicted time under the LogP parameters L, o and g of the calibrated
// parameter file ($MSTEP_PARAMS, else ~/.config/mstep/params.json), o_s = o_r = o
// (adaptive_barrier_any_arity in model/cost/collectives.hpp; the replay recomputes the same
// choice from meta.json).
// "mpi" (or unset) is MPICH's own. The algorithms are those of MODELS.md section 4:
//   central: every rank sends to rank 0, which then releases each in turn;
//   tree:N: gather up the N-ary tree (children of r: N r + 1 ... N r + N), release down MPICH's
//     binomial tree from rank 0 (the combining tree Hoefler and Rehm time);
//   dissemination: round k, send to r + 2^k and receive from r - 2^k (mod n);
//   flat: the root sends to root + 1, root + 2, ... (mod n) in turn;
//   binomial: MPICH's MPIR_Bcast_intra_binomial (largest subtree first);
//   esssp: Mateescu and Taylor's E-SSSP tree with its labeling, on the network of the LogGPS
//     parameters of the parameter file (every pair alike) plus the delay apparatus's per-pair
//     latencies (MSTEP_DELAY_PAIRS), computed by every member alike, once per communicator, root
//     and size in a row (communicators of up to 256 ranks; larger ones run the binomial tree);
//   auto (broadcast): on the same network, the flat or E-SSSP tree where the model has it at
//     least 10% faster than the binomial tree MPICH would run, else MPICH's own broadcast
//     (model::auto_broadcast); under the delay apparatus, which MPICH's own collectives bypass,
//     libmstep's binomial tree instead, so that every choice runs on the delayed network.
//     Communicators of over 256 ranks: MPICH's own.
// The messages travel on a private duplicate of the caller's communicator, made by the first
// substituted call on it (every member is in that call, so the duplicate is collective as MPI
// requires) and kept as an attribute of the communicator, freed with it. Intercommunicators and
// anything MPI would reject (a null communicator, a bad root) go to MPICH's own collective,
// which gives the application MPICH's answer. Results and return codes are the application's as
// MPI defines them: the same data in every buffer, MPI_SUCCESS or the first failing call's code.
// A malformed setting: one line on rank 0's stderr, and MPICH's collective runs.
// With the delay apparatus on (MSTEP_DELAY_*), every message of a substitute is delayed like the
// application's own (interpose/delay.hpp): a collective slows by what its algorithm's messages add.
#pragma once

#include <optional>
#include <string>

#include <mpi.h>

#include "format/collective_substitutes.hpp"
#include "interpose/substitute_wire.hpp"
#include "model/cost/loggps.hpp"
#include "model/params/collective_times.hpp"

namespace mstep {

struct SubstituteSettings {
  BarrierAlgo barrier = BarrierAlgo::Mpi;
  int tree_arity = 2;
  BcastAlgo bcast = BcastAlgo::Mpi;
  AllreduceAlgo allreduce = AllreduceAlgo::Mpi;
  AlltoallAlgo alltoall = AlltoallAlgo::Mpi;
  AllgatherAlgo allgather = AllgatherAlgo::Mpi;
  ReduceAlgo reduce = ReduceAlgo::Mpi;
  RootedAlgo gather = RootedAlgo::Mpi;
  RootedAlgo scatter = RootedAlgo::Mpi;
  ReduceScatterAlgo reduce_scatter = ReduceScatterAlgo::Mpi;
  RootedAlgo scan = RootedAlgo::Mpi;  // MPI_Scan and MPI_Exscan
  model::LogGPSParams loggps;  // barrier auto: its L, o and g; bcast esssp and auto: all of it, every pair's network
  // auto: MPI_Barrier and MPI_Bcast as `mstep calibrate` measured them (the parameter file's
  // "collectives"; absent: none), MPICH's cost beyond their messages, which auto weighs.
  model::CollectiveTable mpich;
  std::string error;  // a setting that could not be read, in one line
};

// The parameter file's top level (`mstep calibrate`'s format): L, o and g, and with `full` the rest
// of LogGPS (Os, Or, Gs, Gl, s, S; null sizes are infinite). False with `error` set, naming
// `setting`, when the file cannot be read or lacks them.
bool read_params_for(const std::string& path, const char* setting, bool full, SubstituteSettings& s);

// Parses the settings (null or empty: "mpi"); error names the first bad one and what is accepted,
// and leaves all at "mpi".
SubstituteSettings parse_substitute_settings(const char* barrier, const char* bcast, const char* allreduce = nullptr,
                                             const char* alltoall = nullptr, const char* gather = nullptr,
                                             const char* scatter = nullptr, const char* allgather = nullptr,
                                             const char* reduce = nullptr, const char* reduce_scatter = nullptr,
                                             const char* scan = nullptr);

class Substitutes {
 public:
  // At MPI_Init on every rank: reads MSTEP_BARRIER, MSTEP_BCAST, MSTEP_ALLREDUCE, MSTEP_ALLTOALL,
  // MSTEP_GATHER, MSTEP_SCATTER, MSTEP_ALLGATHER, MSTEP_REDUCE, MSTEP_REDUCE_SCATTER and MSTEP_SCAN.
  // `on_rank0_host`: whether this rank runs on rank 0's host (MSTEP_SCAN asks every rank, at once).
  void start(int world_rank, bool on_rank0_host);
  bool barrier_on() const { return settings_.barrier != BarrierAlgo::Mpi; }
  bool bcast_on() const { return settings_.bcast != BcastAlgo::Mpi; }
  bool allreduce_on() const { return settings_.allreduce != AllreduceAlgo::Mpi; }
  bool alltoall_on() const { return settings_.alltoall != AlltoallAlgo::Mpi; }
  bool reduce_on() const { return settings_.reduce != ReduceAlgo::Mpi; }
  bool allgather_on() const { return settings_.allgather != AllgatherAlgo::Mpi; }
  bool gather_on() const { return settings_.gather != RootedAlgo::Mpi; }
  bool scatter_on() const { return settings_.scatter != RootedAlgo::Mpi; }
  bool reduce_scatter_on() const { return settings_.reduce_scatter != ReduceScatterAlgo::Mpi; }
  bool scan_on() const { return settings_.scan != RootedAlgo::Mpi; }
  bool any_on() const {
    return barrier_on() || bcast_on() || allreduce_on() || alltoall_on() || allgather_on() || reduce_on() ||
           gather_on() || scatter_on() || reduce_scatter_on() || scan_on();
  }
  // meta.json's "collectives" object: {"barrier": "tree:4", "bcast": "mpi", "allreduce": "mpi",
  // "alltoall": "mpi", "allgather": "mpi", "reduce": "mpi", "gather": "mpi", "scatter": "pt2pt",
  // "reduce_scatter": "mpi", "scan": "mpi"}.
  std::string json() const;

  int barrier(MPI_Comm comm);
  int bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm);
  int allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);
  // (interpose/substitute_alltoall.cpp)
  int alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
               MPI_Datatype recvtype, MPI_Comm comm);
  int alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls, MPI_Datatype sendtype, void* recvbuf,
                const int* recvcounts, const int* rdispls, MPI_Datatype recvtype, MPI_Comm comm);
  // (interpose/substitute_reduce.cpp)
  int reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm);
  // (interpose/substitute_allgather.cpp)
  int allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype, MPI_Comm comm);
  int allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
                 const int* displs, MPI_Datatype recvtype, MPI_Comm comm);
  // (interpose/substitute_reduce_scatter.cpp)
  int reduce_scatter(const void* sendbuf, void* recvbuf, const int* recvcounts, MPI_Datatype type, MPI_Op op,
                     MPI_Comm comm);
  int reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type, MPI_Op op,
                           MPI_Comm comm);
  // (interpose/substitute_scan.cpp)
  int scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);
  int exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);
  // (interpose/substitute_rooted.cpp)
  int gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
             MPI_Datatype recvtype, int root, MPI_Comm comm);
  int gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
              const int* displs, MPI_Datatype recvtype, int root, MPI_Comm comm);
  int scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
              MPI_Datatype recvtype, int root, MPI_Comm comm);
  int scatterv(const void* sendbuf, const int* sendcounts, const int* displs, MPI_Datatype sendtype, void* recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);

 private:
  // The private duplicate of `comm`, made on first use, with the barrier that runs on it (auto:
  // chosen then); pc MPI_COMM_NULL when `comm` is not an intracommunicator this can substitute on.
  struct Private {
    MPI_Comm pc = MPI_COMM_NULL;
    BarrierAlgo barrier = BarrierAlgo::Mpi;
    int arity = 0;
  };
  Private private_comm(MPI_Comm comm);
  // This rank as a member of `comm`'s private duplicate: its wire (through the delay apparatus when
  // that is on), its rank and the size; nullopt where MPICH's own collective runs instead (no
  // duplicate, as for an intercommunicator, or a communicator of one).
  struct Member {
    Wire w;
    int me = 0, n = 1;
  };
  std::optional<Member> member_of(MPI_Comm comm);
  // This rank and the size of `comm` for a rooted collective: nullopt where MPICH's own answers
  // (a null communicator, an intercommunicator, a root out of range), decided alike on every
  // member before any of them makes the private duplicate.
  struct Place {
    int me = 0, n = 0;
  };
  static std::optional<Place> place_of(MPI_Comm comm, int root);

  SubstituteSettings settings_;
  int keyval_ = MPI_KEYVAL_INVALID;
};

extern Substitutes g_substitutes;

}  // namespace mstep
