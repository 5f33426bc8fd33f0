#include "model/analysis/waits.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

namespace mstep::model {
namespace {

using SiteKey = std::tuple<WaitKind, std::int32_t, std::uint32_t, Op>;

struct Accumulator {
  std::map<SiteKey, WaitSite> sites;
  void add(WaitKind kind, std::int32_t rank, const Event& call, double wait, double predicted) {
    if (wait <= 0) return;
    WaitSite& s = sites[{kind, rank, call.callsite, call.op}];
    s.kind = kind;
    s.rank = rank;
    s.callsite = call.callsite;
    s.op = call.op;
    s.wait_s += wait;
    s.predicted_wait_s += predicted;
    ++s.count;
  }
};

// The first record of the call a record belongs to (continuations share their call's times).
std::uint32_t call_start(const std::vector<Event>& events, std::uint32_t i) {
  while (i > 0 && events[i].continuation()) --i;
  return i;
}

bool blocks(Op op) {
  switch (op) {
    case Op::Test:
    case Op::Testall:
    case Op::Testany:
    case Op::Testsome:
    case Op::Isend:
    case Op::Issend:
    case Op::Ibsend:
    case Op::Irsend:
    case Op::Irecv: return false;
    default: return true;
  }
}

double clamp_wait(double wait, double duration) { return std::clamp(wait, 0.0, std::max(duration, 0.0)); }

}  // namespace

const char* wait_kind_name(WaitKind k) {
  switch (k) {
    case WaitKind::LateReceiver: return "late_receiver";
    case WaitKind::LateSender: return "late_sender";
    case WaitKind::Collective: return "collective";
  }
  return "?";
}

std::vector<WaitSite> measure_waits(std::span<const RankTrace* const> ranks, const Matching& matching,
                                    const Timeline& tl, const WaitOptions& options) {
  Accumulator acc;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const bool predict = options.loggps.has_value();
  const LogGPS model{options.loggps.value_or(LogGPSParams{})};

  // A call that completed several messages (Waitall, Sendrecv) waited once: its longest wait.
  std::map<std::pair<std::int32_t, std::uint32_t>, std::pair<double, double>> recv_calls;
  for (const Message& m : matching.messages) {
    const auto& sender = ranks[static_cast<std::size_t>(m.src)]->events;
    const auto& receiver = ranks[static_cast<std::size_t>(m.dst)]->events;
    const Event& send = sender[m.send_event];
    const Event& post = receiver[m.post_event];
    const std::uint32_t done_call = call_start(receiver, m.recv_event);
    const Event& done = receiver[done_call];
    const double ts = tl.seconds(m.src, send.t_enter);
    const double tr = tl.seconds(m.dst, post.t_enter);

    // Late receiver: a synchronous send blocked until the receive was posted.
    const bool synchronous = send.op == Op::Ssend || m.bytes >= options.rendezvous_bytes;
    if (synchronous && blocks(send.op)) {
      const double wait = clamp_wait(tr - ts, tl.duration(m.src, send.t_exit - send.t_enter));
      const double predicted = predict ? model.sender_wait(m.bytes, ts, tr) : nan;
      acc.add(WaitKind::LateReceiver, m.src, send, wait, predicted);
    }
    // Late sender: the blocking call that completed the receive waited for the send to start.
    if (blocks(done.op)) {
      const double enter = tl.seconds(m.dst, done.t_enter);
      const double wait = clamp_wait(ts - enter, tl.duration(m.dst, done.t_exit - done.t_enter));
      const double predicted = predict ? model.receiver_wait(m.bytes, ts, enter) : nan;
      auto& [w, p] = recv_calls.try_emplace({m.dst, done_call}, 0.0, 0.0).first->second;
      if (wait >= w) w = wait, p = predicted;
    }
  }
  for (const auto& [key, wp] : recv_calls) {
    const Event& call = ranks[static_cast<std::size_t>(key.first)]->events[key.second];
    acc.add(WaitKind::LateSender, key.first, call, wp.first, wp.second);
  }

  // Collectives: each member waited from its arrival until the last member's.
  for (const auto& members : collective_instances(ranks)) {
    double last = -std::numeric_limits<double>::infinity();
    for (const auto& c : members)
      last = std::max(last, tl.seconds(c.rank, ranks[static_cast<std::size_t>(c.rank)]->events[c.event].t_enter));
    for (const auto& c : members) {
      const Event& e = ranks[static_cast<std::size_t>(c.rank)]->events[c.event];
      const double wait = clamp_wait(last - tl.seconds(c.rank, e.t_enter), tl.duration(c.rank, e.t_exit - e.t_enter));
      // Every model waits for the last arrival alike: the prediction at measured arrivals is the same.
      acc.add(WaitKind::Collective, c.rank, e, wait, predict ? wait : nan);
    }
  }
  std::vector<WaitSite> out;
  out.reserve(acc.sites.size());
  for (auto& [k, s] : acc.sites) out.push_back(s);
  std::sort(out.begin(), out.end(), [](const WaitSite& a, const WaitSite& b) { return a.wait_s > b.wait_s; });
  return out;
}

}  // namespace mstep::model
