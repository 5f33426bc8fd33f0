#include "model/replay/collective_charge.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "format/rank_trace.hpp"
#include "model/replay/replay.hpp"

namespace mstep::model {

namespace {

// One rank's record of the collective, sized as libmstep records it (share/trace-format.md) for
// 2 ranks, root 0.
Event member_record(Op op, int rank, std::uint64_t m) {
  Event e;
  e.op = op;
  e.comm = 0;
  const Role role = op_role(op);
  if (role == Role::CollRootOut || role == Role::CollRootIn) {
    e.peer = 0;
    if (rank == 0) e.flags = kRoot;
    const bool root_sends = role == Role::CollRootOut;
    if ((rank == 0) == root_sends) e.send_bytes = m;
    else e.recv_bytes = m;
  } else if (op == Op::Scan || op == Op::Exscan) {  // rank i sends m (n-1-i), receives m i
    (rank == 0 ? e.send_bytes : e.recv_bytes) = m;
  } else if (op != Op::Barrier) {
    e.send_bytes = e.recv_bytes = m;
  }
  return e;
}

// The replay's time in calls of one operation, both ranks together (MPI_Waitall's: the exchange's
// three calls, MPI_Irecv and MPI_Isend too).
class OpTime final : public ReplayObserver {
 public:
  explicit OpTime(Op op) : op_(op) {}
  void call(std::int32_t, Op op, double entry_s, double exit_s) override {
    if (op == op_ || (op_ == Op::Waitall && (op == Op::Irecv || op == Op::Isend))) seconds += std::max(0.0, exit_s - entry_s);
  }
  double seconds = 0;

 private:
  Op op_;
};

}  // namespace

double collective_charge(const LogGPSParams& p, const ColdStart& cold, Op op, std::uint64_t m, std::uint32_t calls,
                         double gap_s) {
  // Ticks are nanoseconds here: the recorded computation before each call is the gap.
  const auto gap = static_cast<std::uint64_t>(std::llround(std::max(0.0, gap_s) * 1e9));
  std::vector<RankTrace> traces(2);
  for (int r = 0; r < 2; ++r) {
    RankTrace& t = traces[static_cast<std::size_t>(r)];
    t.header.rank = r;
    t.header.world_size = 2;
    t.header.clock_kind = 1;
    t.header.ticks_per_second = 1e9;
    t.comms.push_back({0, false, MemberList::identity(2)});
    t.clocks.push_back(ClockSync{ClockSync::AtInit, 0, 0, 0, 0});
    Event init;
    init.op = Op::Init;
    init.t_enter = 0, init.t_exit = 1000;
    t.events.push_back(init);
    // Back to back: no computation between the calls (their recorded durations do not matter);
    // isolated: `gap` ticks of it before each.
    std::uint64_t t0 = 1000;
    for (std::uint32_t k = 0; k < calls; ++k) {
      t0 += gap;
      if (op == Op::Sendrecv) {  // an exchange with the other rank: its send, then its receive
        Event e;
        e.op = op;
        e.peer = 1 - r;
        e.send_bytes = m;
        e.t_enter = e.t_exit = t0;
        t.events.push_back(e);
        e.send_bytes = 0;
        e.recv_bytes = m;
        e.flags = kContinuation | kRecvHalf;
        t.events.push_back(e);
        continue;
      }
      if (op == Op::Waitall) {  // the same exchange as libmstep records MPI_Irecv, MPI_Isend, MPI_Waitall
        const auto recv_request = 2 * k + 1, send_request = 2 * k + 2;
        Event post;
        post.op = Op::Irecv;
        post.peer = 1 - r;
        post.request = recv_request;
        post.t_enter = post.t_exit = t0;
        t.events.push_back(post);
        Event out = post;
        out.op = Op::Isend;
        out.send_bytes = m;
        out.request = send_request;
        t.events.push_back(out);
        Event got = post;  // the receive's completion names its source and size
        got.op = Op::Waitall;
        got.recv_bytes = m;
        got.flags = kRecvHalf;
        t.events.push_back(got);
        Event done;  // the send's names neither
        done.op = Op::Waitall;
        done.request = send_request;
        done.flags = kContinuation;
        done.t_enter = done.t_exit = t0;
        t.events.push_back(done);
        continue;
      }
      Event e = member_record(op, r, m);
      e.t_enter = e.t_exit = t0;
      t.events.push_back(e);
    }
    Event fin;
    fin.op = Op::Finalize;
    fin.t_enter = fin.t_exit = t0;
    t.events.push_back(fin);
    t.event_thread.assign(t.events.size(), 0);
  }
  const std::vector<const RankTrace*> ranks{&traces[0], &traces[1]};
  const Matching matching = match_messages(ranks);
  const Timeline timeline(ranks);
  OpTime observer(op);
  ReplayInput in{ranks, matching, timeline};
  in.observer = &observer;
  (void)replay_loggps(in, p, cold);
  return observer.seconds / (2.0 * calls);
}

}  // namespace mstep::model
