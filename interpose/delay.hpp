// The delay apparatus (Martin's method, MODELS.md section 5): known delay added to every message
// of the real run, so that a what-if of the models can be checked against a real run on a slower
// network. Off unless an MSTEP_DELAY_* setting is given; then the wrappers call in here:
//   o (MSTEP_DELAY_O): CPU time spent in the wrapper at each send's start and each receive's
//     completion (a small message then costs o + L + o + 2 * added o, as MODELS.md charges it);
//   g (MSTEP_DELAY_GAP): consecutive sends of a rank start at least g apart;
//   G (MSTEP_DELAY_PER_BYTE): k * G on the wire: a k-byte message reaches its receiver k G later,
//     after the bytes of the rank's earlier messages (one wire a rank, so a stream of sends
//     arrives at bandwidth at most 1 / G), with no CPU time on the sender (since stop 43; before,
//     k G of the sender's CPU, which the models saw as send overhead on eager messages only);
//   pairs (MSTEP_DELAY_PAIRS=FILE): L per pair of ranks, added to MSTEP_DELAY_L (two clusters
//     joined by a slow link, or a full matrix: format/delay_pairs.hpp);
//   L (MSTEP_DELAY_L): a message cannot complete at its receiver before its send started plus L,
//     with no CPU cost to the sender. Each send carries that time in an 8-byte message on a
//     private duplicate of MPI_COMM_WORLD (same tag, sent first, so it is there when the message
//     is); the receiving wrapper takes it and waits until then. Ranks share CLOCK_MONOTONIC (one
//     host) or are corrected by the offset to rank 0 measured at MPI_Init.
//   rendezvous (MSTEP_DELAY_RNDV=S bytes): a message of S bytes or more is paid what LogGPS
//     charges a rendezvous for the added parameters (MODELS.md section 3, T4 T5 T1 T2 T3): the
//     added L three times (request, reply, data) and its k G on the wire (not on the sender's CPU),
//     the added o three times at each end, and a blocking send (or Sendrecv) is held until its
//     data could have been delivered (MPICH's sends return then: README, "The rendezvous as
//     measured"). A receive posted late, after the request could have arrived, still pays the
//     reply's and the data's: its completion is held to at least its natural one plus those two L
//     and the k G (and so is the sender's return). Without it every message is paid as an eager one.
//   native (MSTEP_DELAY_NATIVE=FILE, a parameter file of `mstep calibrate`): the network the
//     added L adds to. With it a message completes at its receiver no earlier than its native
//     completion plus the added L. Its native completion is the earlier of its natural one (the
//     receive's return: exact for a receiver that was waiting) and its send's start plus the
//     LogGPS time of the message on that network (T1 + T2 + T3; a rendezvous's whole handshake:
//     for a receiver that came late). So each crossing is lengthened by L, as a model with L
//     raised has it. Without it the native time counts as 0: the added L then takes the place of
//     the machine's own latency instead of adding to it.
// Applied to point-to-point messages: blocking and nonblocking sends, Recv, the Wait/Test family
// for receive requests, Sendrecv, wildcard receives (the actual source), and the messages of
// libmstep's substitute collectives (interpose/substitute.hpp). Not to MPICH's own collectives. A
// nonblocking rendezvous send's Wait/Test completion (MPI_Isend's, or a persistent send's MPI_Start)
// is held as if its receiver had been waiting (take_send_hold).
#pragma once

#include <cstdint>
#include <string>

#include <mpi.h>

#include "format/delay_pairs.hpp"
#include "format/delay_units.hpp"
#include "model/cost/loggps.hpp"

namespace mstep {

// Seconds, read from the environment. Negative: not set.
struct DelaySettings {
  double L = -1, o = -1, gap = -1, per_byte = -1;
  std::uint64_t rndv = 0;  // MSTEP_DELAY_RNDV: messages of this many bytes or more are rendezvous (0: none)
  std::string pairs_file;  // MSTEP_DELAY_PAIRS: per-pair added latency (format/delay_pairs.hpp)
  std::string native_file;  // MSTEP_DELAY_NATIVE: the calibrated network the added L adds to
  std::string error;  // a setting that could not be read, in one line
  bool any() const { return L >= 0 || o >= 0 || gap >= 0 || per_byte >= 0 || !pairs_file.empty(); }
};

DelaySettings read_delay_settings();

// The LogGPS parameters of a parameter file of `mstep calibrate` (L and o required; Os, Or, g,
// Gs, Gl and H 0 when absent; s and S infinite when absent or null; "rendezvous": "paper" or
// "delivered"). False with `error` (one line, without the file's name) when it cannot be read.
bool read_native_network(const std::string& path, model::LogGPSParams& out, std::string& error);

class DelayApparatus {
 public:
  // At MPI_Init, collectively on every rank (it duplicates MPI_COMM_WORLD when L is set).
  // `to_rank0_ns`: rank 0's CLOCK_MONOTONIC minus this rank's (ClockSync::offset_ns at Init).
  // Prints a malformed setting on rank 0 and leaves the apparatus off.
  void start(int rank, std::int64_t to_rank0_ns);
  bool on() const { return on_; }
  const DelaySettings& settings() const { return settings_; }
  // MSTEP_DELAY_PAIRS's table (empty without one): the substitute E-SSSP broadcast plans on it.
  const PairLatency& pairs() const { return pairs_; }
  // meta.json's "delay" object: the settings applied, in seconds ("null" when off).
  std::string json() const;

  // Before the PMPI send of `bytes` bytes to world rank `peer` with `tag` (not MPI_PROC_NULL).
  void before_send(std::int32_t peer, int tag, std::uint64_t bytes);
  // After a blocking send's PMPI call returned: a rendezvous-sized one (the last before_send) is
  // held until its data could have been delivered.
  void after_blocking_send() { after_blocking_send(now_ns()); }
  // The same where the PMPI call returned at `returned_ns`, before other holds of the same call:
  // a receiver that posted late makes the send return late.
  void after_blocking_send(std::int64_t returned_ns);
  // After a Sendrecv's PMPI call returned: its receive of `bytes` bytes from world rank `source`
  // (negative: none) as after_recv, then its send (`sent`: it had a destination) as
  // after_blocking_send, counted from the call's return, not from the end of the receive's hold.
  void after_sendrecv(std::int32_t source, int tag, std::uint64_t bytes, bool sent);
  // After a nonblocking send's PMPI call: when its completion may return if it is rendezvous-sized
  // (the last before_send), else INT64_MIN; the Wait/Test that completes it calls hold_until.
  // A receiver that posted late is not seen here (the completion's return need not be the
  // delivery's), so such a send is held as if its receiver had been waiting.
  std::int64_t take_send_hold();
  static void hold_until(std::int64_t t_ns) { spin_until(t_ns); }
  // After a receive of `bytes` bytes from world rank `source` with `tag` completed (not
  // MPI_PROC_NULL).
  void after_recv(std::int32_t source, int tag, std::uint64_t bytes);

 private:
  static std::int64_t now_ns();
  static void spin_until(std::int64_t t_ns);

  bool on_ = false;
  DelaySettings settings_;
  std::int64_t o_ns_ = 0, gap_ns_ = 0, L_ns_ = 0;
  double per_byte_ns_ = 0;
  std::uint64_t rndv_bytes_ = UINT64_MAX;  // MSTEP_DELAY_RNDV
  // The last rendezvous send's delivery, this rank's clock: its native delivery (the earlier of
  // the native network's and its natural return) plus added_ns_, and not before its natural
  // return plus late_ns_ (a receiver that posted late still pays reply and data).
  std::int64_t delivered_ns_ = INT64_MIN;  // native estimate; INT64_MIN: no hold pending
  std::int64_t added_ns_ = 0;
  std::int64_t late_ns_ = 0;
  model::LogGPSParams native_{};     // MSTEP_DELAY_NATIVE (all 0 without: the added L replaces)
  bool native_set_ = false;
  bool carry_time_ = false;          // L or pairs set: send times travel on shadow_
  PairLatency pairs_;                // added per (sender, receiver), on top of L
  int rank_ = 0;
  std::int64_t to_rank0_ns_ = 0;
  std::int64_t last_send_ns_ = INT64_MIN / 2;
  std::int64_t wire_free_ns_ = INT64_MIN / 2;  // G: when this rank's wire has sent its last byte
  MPI_Comm shadow_ = MPI_COMM_NULL;
};

extern DelayApparatus g_delay;

}  // namespace mstep
