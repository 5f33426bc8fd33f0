#include "model/analysis/waits.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

namespace mstep::model {
namespace {

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
    case Op::Irecv:
    case Op::Start:
    case Op::Startall:
    case Op::Imrecv:
    case Op::Ineighbor_allgather:
    case Op::Ineighbor_allgatherv:
    case Op::Ineighbor_alltoall:
    case Op::Ineighbor_alltoallv:
    case Op::Ineighbor_alltoallw: return false;
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

WaitMeter::WaitMeter(const Timeline& timeline, const WaitOptions& options)
    : tl_(timeline), options_(options), model_{options.loggps.value_or(LogGPSParams{})}, sites_(timeline.ranks()) {}

void WaitMeter::add(WaitKind kind, std::int32_t rank, std::uint32_t callsite, Op op, double wait, double predicted) {
  if (wait <= 0) return;
  const auto kind_op = static_cast<std::uint16_t>((static_cast<unsigned>(kind) << 8) | static_cast<unsigned>(op));
  const auto r = static_cast<std::size_t>(rank);
  if (r >= sites_.size()) sites_.resize(r + 1);  // (a timeline of fewer ranks: the tests' own)
  auto& list = sites_[r];
  const auto before = [](const Site& s, std::pair<std::uint32_t, std::uint16_t> key) {
    return std::pair(s.callsite, s.kind_op) < key;
  };
  Site* s = std::lower_bound(list.begin(), list.end(), std::pair(callsite, kind_op), before);
  if (s == list.end() || s->callsite != callsite || s->kind_op != kind_op) {
    Site site;
    site.callsite = callsite;
    site.kind_op = kind_op;
    s = list.insert(s, site);
  }
  s->wait.add(wait);
  s->predicted.add(predicted);
  ++s->count;
}

void WaitMeter::message(const Message& m, const Event& send, const Event& post, const Event& done,
                        std::uint32_t done_call, bool single) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const bool predict = options_.loggps.has_value();
  const double ts = tl_.seconds(m.src, send.t_enter);
  const double tr = tl_.seconds(m.dst, post.t_enter);
  // Late receiver: a synchronous send blocked until the receive was posted.
  const bool synchronous = send.op == Op::Ssend || (send.flags & kSyncMode) || m.bytes >= options_.rendezvous_bytes;
  if (synchronous && blocks(send.op)) {
    const double wait = clamp_wait(tr - ts, tl_.duration(m.src, send.t_exit - send.t_enter));
    const double predicted = predict ? model_.sender_wait(m.bytes, ts, tr) : nan;
    add(WaitKind::LateReceiver, m.src, send.callsite, send.op, wait, predicted);
  }
  // Late sender: the blocking call that completed the receive waited for the send to start.
  if (blocks(done.op)) {
    const double enter = tl_.seconds(m.dst, done.t_enter);
    const double wait = clamp_wait(ts - enter, tl_.duration(m.dst, done.t_exit - done.t_enter));
    const double predicted = predict ? model_.receiver_wait(m.bytes, ts, enter) : nan;
    if (single) {
      add(WaitKind::LateSender, m.dst, done.callsite, done.op, wait, predicted);
      return;
    }
    const std::uint64_t key = open_call_key(m.dst, done_call);
    OpenCall* c = open_calls_.find(key);
    if (!c) c = &open_calls_.insert(key, OpenCall{done.callsite, done.op});
    if (wait >= c->wait) c->wait = wait, c->predicted = predicted;
  }
}

void WaitMeter::call_complete(std::int32_t rank, std::uint32_t call) {
  const std::uint64_t key = open_call_key(rank, call);
  const OpenCall* c = open_calls_.find(key);
  if (!c) return;
  add(WaitKind::LateSender, rank, c->callsite, c->op, c->wait, c->predicted);
  open_calls_.erase(key);
}

void WaitMeter::collective(std::span<const StreamedMember> members) {
  // Each member waited from its arrival until the last member's.
  double last = -std::numeric_limits<double>::infinity();
  for (const auto& c : members) last = std::max(last, tl_.seconds(c.rank, c.call.t_enter));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const auto& c : members) {
    const Event& e = c.call;
    // A nonblocking collective's call returns at once: its wait, if any, is in the Wait/Test that
    // completes it, which this does not attribute.
    if (is_nonblocking_collective(e.op)) continue;
    const double wait = clamp_wait(last - tl_.seconds(c.rank, e.t_enter), tl_.duration(c.rank, e.t_exit - e.t_enter));
    // Every model waits for the last arrival alike: the prediction at measured arrivals is the same.
    add(WaitKind::Collective, c.rank, e.callsite, e.op, wait, options_.loggps ? wait : nan);
  }
}

std::vector<WaitSite> WaitMeter::sites() {
  // In the order of (rank, call): the sums come out the same whatever the hash map's order.
  std::vector<std::pair<std::uint64_t, OpenCall>> left;
  left.reserve(open_calls_.size());
  open_calls_.for_each([&](std::uint64_t key, const OpenCall& c) { left.emplace_back(key, c); });
  std::sort(left.begin(), left.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [key, c] : left)
    add(WaitKind::LateSender, static_cast<std::int32_t>(key >> 32), c.callsite, c.op, c.wait, c.predicted);
  open_calls_.clear();
  std::vector<WaitSite> out;
  for (std::size_t r = 0; r < sites_.size(); ++r)
    for (const Site& s : sites_[r]) {
      WaitSite& site = out.emplace_back();
      site.kind = static_cast<WaitKind>(s.kind_op >> 8);
      site.rank = static_cast<std::int32_t>(r);
      site.callsite = s.callsite;
      site.op = static_cast<Op>(s.kind_op & 0xff);
      site.wait_s = s.wait.value();
      site.predicted_wait_s = s.predicted.value();
      site.count = s.count;
    }
  // In the order of (kind, rank, call site, operation) first, so that sites of equal waits come out
  // in the same order whatever order they were kept in.
  std::sort(out.begin(), out.end(), [](const WaitSite& a, const WaitSite& b) {
    return std::tie(a.kind, a.rank, a.callsite, a.op) < std::tie(b.kind, b.rank, b.callsite, b.op);
  });
  std::sort(out.begin(), out.end(), [](const WaitSite& a, const WaitSite& b) { return a.wait_s > b.wait_s; });
  return out;
}

std::vector<WaitSite> measure_waits(std::span<const RankTrace* const> ranks, const Matching& matching,
                                    const Timeline& tl, const WaitOptions& options) {
  WaitMeter meter(tl, options);
  for (const Message& m : matching.messages) {
    const auto& sender = ranks[static_cast<std::size_t>(m.src)]->events;
    const auto& receiver = ranks[static_cast<std::size_t>(m.dst)]->events;
    const std::uint32_t done_call = call_start(receiver, m.recv_event);
    meter.message(m, sender[m.send_event], receiver[m.post_event], receiver[done_call], done_call);
  }
  std::vector<StreamedMember> members;
  for (const auto& calls : collective_instances(ranks)) {
    members.clear();
    for (const auto& c : calls)
      members.push_back({c.rank, c.event, ranks[static_cast<std::size_t>(c.rank)]->events[c.event], {}});
    meter.collective(members);
  }
  return meter.sites();
}

}  // namespace mstep::model
