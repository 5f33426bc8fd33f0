// M-step inference (MODELS.md section 1), fed one rank's Event records in call order. Pure (no
// MPI, clock or I/O): libmstep.so makes the decision at run time (StepMarker, on its flush: which
// records close a step), and every reader derives the steps from the records with StepTracker,
// which must close a step exactly where the marks say.
//
// Rules, in the words of the code below:
// - A rank starts in step 1 at start_ticks.
// - Per call (records without kContinuation; continuation records share the call's times):
//   MPI time += t_exit - t_enter, computation += t_enter - the previous call's t_exit. ToolFlush
//   time is neither (the gap before it is computation); it still moves "previous exit" on. The
//   time of one-sided and MPI-IO calls (is_unmodelled) is computation: no model has a term for it,
//   so BSPWB and MPM keep it as the step's work, as the LogGPS replay keeps their recorded duration.
// - Send side: the start of Send/Isend records, of Sendrecv's send record (no kRecvHalf), and of
//   collectives that send. Receive side: the completion of Recv records, of Wait/Test records
//   flagged kRecvHalf, of Sendrecv's kRecvHalf record, and of collectives that receive.
// - A send side after a receive of the current step closes that step at its last receive's
//   completion; whatever happened since (computation, MPI time of calls that received nothing)
//   is carried into the new step, which begins at that completion.
// - A collective: its send side at t_enter (may close the previous step as above), its receive
//   side at t_exit, then the step closes at t_exit (its MPI time belongs to that step).
//   CollRootOut: the root sends, the others receive from Event::peer (the root).
//   CollRootIn: the others send, the root receives from every member. CollAll: both, all members.
// - Messages: one out per send side; one in per point-to-point receive, and per collective
//   receive one per incoming partner other than the rank itself (an approximation: the real
//   algorithm's messages are the MPI library's business). Bytes are the record's send_bytes and
//   recv_bytes.
// - A collective in which the rank hears every member of a communicator of kListedMembers or more
//   (other than the shared id kSharedCommId) does not add them to the partners one by one: the step
//   names the communicator (StepRecord::whole_comm), and its messages in are the members but itself
//   (all of an intercommunicator's remote group), counted from the size alone: O(1), where listing
//   a world collective's members cost O(ranks) per rank and call and ranks squared in the trace.
// - Peers kNoPeer (MPI_PROC_NULL) have no effect on steps; kIncomplete records are MPI time only.
// - finish(t) ends the trace as a send side would: a step whose receives are followed by other
//   work closes at its last receive, and the remainder (the program's last computation) becomes a
//   step of its own ending at t. A step with neither an MPI call nor computation is dropped.
//
// With MPI_THREAD_MULTIPLE the records of several threads arrive interleaved: times are then
// clamped (a gap is never negative, a step never ends before it begins), nothing more.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "format/trace_format.hpp"

namespace mstep {

// What a record is to the M-step rule (the rules above): the start of a send, the completion of a
// receive, a collective, or nothing (MPI time only). The one reading of roles, flags and peers
// that the tracker and the recorder's StepMarker share.
enum class StepSide : std::uint8_t { None, Send, Receive, Collective };
inline StepSide step_side(const Event& e, Role role) {
  if (e.flags & kIncomplete) return StepSide::None;  // a Test/Iprobe that found nothing
  switch (role) {
    case Role::Send:
    case Role::Isend: return e.peer >= 0 ? StepSide::Send : StepSide::None;
    case Role::Recv: return e.peer >= 0 ? StepSide::Receive : StepSide::None;
    case Role::Complete:
      // Completing a send request is not a send side: the send started at its Isend.
      return (e.flags & kRecvHalf) && e.peer >= 0 ? StepSide::Receive : StepSide::None;
    case Role::SendRecv:
      if (e.peer < 0) return StepSide::None;
      return (e.flags & kRecvHalf) ? StepSide::Receive : StepSide::Send;
    case Role::CollRootOut:
    case Role::CollRootIn:
    case Role::CollAll: return StepSide::Collective;
    case Role::Other:
    case Role::Start:  // event_role made it Isend or Irecv
    case Role::Irecv:
    case Role::Tool: return StepSide::None;
  }
  return StepSide::None;
}

// The run-time decision alone (trace format 4): whether a record closes the open M-step, which
// the recorder marks on the record (kClosesStep). A send side after a receive of the step closes
// it, and a collective always closes the step it is in; the times, sizes and partners of a step
// follow from the records between the marks, and StepTracker derives them when a trace is read.
// A few instructions a record, where the whole tracker on the recorder's flush was two fifths of
// its cost (a ping-pong closes a step every two records).
class StepMarker {
 public:
  bool closes(const Event& e) {
    switch (step_side(e, event_role(e))) {
      case StepSide::Send:
        if (!has_recv_) return false;
        has_recv_ = false;
        return true;
      case StepSide::Receive: has_recv_ = true; return false;
      case StepSide::Collective: has_recv_ = false; return true;
      case StepSide::None: return false;
    }
    return false;
  }

 private:
  bool has_recv_ = false;  // a receive completed in the open step
};

class StepTracker {
 public:
  // `reserve_partners`: the partner list's first capacity, at most the world's size. The recorder
  // reserves a few steps' worth so that its hot path does not allocate while warming up; the
  // analysis, holding a tracker for every rank of a run, reserves little (64 each: 16 MB at 65 536).
  StepTracker(std::int32_t self_world_rank, std::int32_t world_size, std::uint64_t start_ticks,
              std::size_t reserve_partners = 64);

  // `comm_members`: world ranks of the record's communicator in communicator rank order (the
  // remote group for an intercommunicator, `comm_inter`); read only for collectives. Negative
  // entries (processes outside MPI_COMM_WORLD) are skipped where members are listed.
  // Inline: the analyses feed every record of a run through it (MPICH's ping-pong: a step every
  // two records), and a call a record, with what it saves and restores, was a third of its cost
  // on the recorder's flush when the recorder ran it. Collectives go out of line.
  void feed(const Event& e, std::span<const std::int32_t> comm_members, bool comm_inter = false) {
    const Role role = event_role(e);
    if (!e.continuation()) account(e, role == Role::Tool);
    switch (step_side(e, role)) {
      case StepSide::Send: send_side(e.send_bytes); break;
      case StepSide::Receive: receive(e.peer, e.recv_bytes, e.t_exit); break;
      case StepSide::Collective: collective(e, role, comm_members, comm_inter); break;
      case StepSide::None:
        // Checked here, off the path of the messages and collectives that make most records.
        if (is_unmodelled(e.op) && !e.continuation()) [[unlikely]] count_as_computation(e);
        break;
    }
  }
  // Whether feed reads a record's communicator members (a collective's): others may be fed
  // without looking them up.
  static bool needs_members(const Event& e) {
    const Role r = op_role(e.op);
    return r == Role::CollRootOut || r == Role::CollRootIn || r == Role::CollAll;
  }

  // End of the rank's records (after MPI_Finalize's record, or the last record of a trace).
  // Time between the last record's exit and end_ticks counts as computation.
  void finish(std::uint64_t end_ticks);

  // Steps closed since the last clear_closed(), in order. Valid until the next feed/finish.
  std::span<const StepRecord> closed() const { return {closed_.data(), n_closed_}; }
  void clear_closed() { n_closed_ = 0; }

  // Gives back the memory of partner lists longer than `keep` entries (a step of many partners)
  // and of membership bits not in use. What the recorder keeps for speed, one tracker a process,
  // would be ranks squared in an analysis that runs a tracker for every rank of a large run. Call
  // after clear_closed().
  void trim(std::size_t keep);

  // Up to this many partners (self included) a step finds duplicates by looking along its list;
  // beyond, by membership bits. Only a step of more leaves trim() anything to give back.
  static constexpr std::size_t kListedPartners = 16;

  // Index of the open step (1-based).
  std::uint32_t current_index() const { return index_; }

 private:
  // Time and calls of a stretch of the rank's life.
  struct Usage {
    std::uint64_t compute = 0;
    std::uint64_t mpi = 0;
    std::uint32_t calls = 0;  // MPI calls (ToolFlush excluded)
    void add(const Usage& u) {
      compute += u.compute;
      mpi += u.mpi;
      calls += u.calls;
    }
  };

  static std::uint64_t duration(const Event& e) { return e.t_exit > e.t_enter ? e.t_exit - e.t_enter : 0; }
  void account(const Event& e, bool tool) {
    // Threads may interleave: never let a gap or a duration go negative.
    const std::uint64_t gap = e.t_enter > last_exit_ ? e.t_enter - last_exit_ : 0;
    const std::uint64_t dur = duration(e);
    if (e.t_exit > last_exit_) last_exit_ = e.t_exit;
    const Usage u{gap, tool ? 0 : dur, tool ? 0u : 1u};
    step_.add(u);
    pending_.add(u);
  }
  // A one-sided or MPI-IO call, just accounted as MPI time: its duration is computation instead.
  void count_as_computation(const Event& e) {
    const std::uint64_t dur = duration(e);
    step_.mpi -= dur, step_.compute += dur;
    pending_.mpi -= dur, pending_.compute += dur;
  }
  void send_side(std::uint64_t bytes) {
    // A send after a receive of this step: the step ended with that receive (MODELS.md 1), and
    // what happened since (pending_, this call included) opens the next one.
    if (has_recv_) close(last_recv_t_, pending_);
    bytes_out_ += bytes;
    ++msgs_out_;
  }
  void receive(std::int32_t from, std::uint64_t bytes, std::uint64_t t) {
    add_partner(from);
    bytes_in_ += bytes;
    ++msgs_in_;  // a point-to-point message from itself is a message too
    has_recv_ = true;
    last_recv_t_ = t > begin_ ? t : begin_;
    // Everything up to this completion belongs to the step that receives.
    pending_ = Usage{};
  }
  [[gnu::noinline]] void collective(const Event& e, Role role, std::span<const std::int32_t> members, bool inter);
  void add_partner(std::int32_t rank) {
    if (rank < 0) return;
    // A few partners: a look along the list. Membership bits indexed by world rank would cost
    // every tracker rank / 8 bytes for itself alone (an analysis that runs one per rank: ranks
    // squared; a million ranks took 64 GB), so they are taken only by a step of many partners.
    if (!use_bits_) [[likely]] {
      for (const std::int32_t p : partners_)
        if (p == rank) return;
      if (partners_.size() < kListedPartners) [[likely]] {
        partners_.push_back(rank);
        return;
      }
    }
    add_partner_slow(rank);
  }
  [[gnu::noinline]] void add_partner_slow(std::int32_t rank);
  bool set_bit(std::int32_t rank);  // false if it was set already
  // Closes the open step at `t`; `carry` (part of the open step's usage, what happened after t)
  // becomes the start of the next step.
  [[gnu::noinline]] void close(std::uint64_t t, Usage carry);
  bool empty() const { return step_.calls == 0 && step_.compute == 0; }

  std::int32_t self_;

  // The open step.
  std::uint32_t index_ = 1;
  std::uint64_t begin_;
  Usage step_;                    // everything in the open step, pending_ included
  Usage pending_;                 // the part of step_ after the last completed receive
  std::uint64_t bytes_in_ = 0, bytes_out_ = 0;
  std::uint32_t msgs_in_ = 0, msgs_out_ = 0;
  bool has_recv_ = false;         // a receive completed in the open step
  std::uint64_t last_recv_t_ = 0; // completion of that step's last receive
  std::vector<std::int32_t> partners_;    // Gamma of the open step, unsorted, self included
  // Membership of partners_, one bit per world rank up to the highest, once partners_ has more than
  // kListedPartners entries (use_bits_); all zero otherwise.
  std::vector<std::uint64_t> partner_bits_;
  bool use_bits_ = false;
  std::int32_t whole_comm_ = kNoWholeComm;   // a communicator all of whose members are partners too

  std::uint64_t last_exit_;       // exit of the previous call (computation starts there)

  // Closed steps; entries past n_closed_ are kept so that their partner vectors' memory is
  // reused and steady state does not allocate.
  std::vector<StepRecord> closed_;
  std::size_t n_closed_ = 0;
};

}  // namespace mstep
