#include "model/export/perfetto.hpp"

#include <cmath>
#include <limits>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "format/step_tracker.hpp"
#include "model/trace/rank_comms.hpp"
#include "model/trace/matching.hpp"
#include "model/trace/stream_pass.hpp"
#include "model/trace/timeline.hpp"

namespace mstep::model {
namespace {

// Nanoseconds as the format's microseconds, exactly: an enclosing slice and the call that ends it
// end on the same printed digit, so no rounding makes a call stick out of its M-step.
struct Micros {
  std::int64_t ns;
};

}  // namespace
}  // namespace mstep::model

template <>
struct fmt::formatter<mstep::model::Micros> : fmt::formatter<std::string_view> {
  auto format(mstep::model::Micros t, format_context& ctx) const {
    const bool negative = t.ns < 0;
    const std::uint64_t a = negative ? 0 - static_cast<std::uint64_t>(t.ns) : static_cast<std::uint64_t>(t.ns);
    return fmt::format_to(ctx.out(), "{}{}.{:03}", negative ? "-" : "", a / 1000, a % 1000);
  }
};

namespace mstep::model {
namespace {

class PerfettoWriter final : public StreamVisitor {
 public:
  // `infer_steps`: M-steps from the recorder's rules run again on the records (the streaming pass);
  // false: the caller hands the recorded ones (recorded_steps).
  PerfettoWriter(std::span<const RankTrace* const> metas, const Timeline& timeline, std::ostream& out,
                 const SiteNamer& name_site, const TimeWindow& window, bool infer_steps = true)
      : timeline_(timeline), out_(out), ranks_(metas.size()), window_(window) {
    double zero = std::numeric_limits<double>::infinity();
    for (std::size_t r = 0; r < metas.size(); ++r)
      if (metas[r] && !metas[r]->events.empty())
        zero = std::min(zero, timeline.seconds(static_cast<int>(r), metas[r]->events.front().t_enter));
    zero_s_ = std::isfinite(zero) ? zero : 0.0;
    fmt::format_to(std::back_inserter(buf_), "{{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
    std::unordered_map<std::string, std::uint32_t> interned;
    for (std::size_t r = 0; r < metas.size(); ++r) {
      if (!metas[r]) continue;
      Rank& rs = ranks_[r];
      rs.comms = RankComms(metas[r]->comms);
      for (const CallsiteDef& site : metas[r]->callsites) {
        if (site.id == 0) continue;
        const std::string quoted = nlohmann::json(name_site(site)).dump();
        const auto [it, added] = interned.try_emplace(quoted, static_cast<std::uint32_t>(sites_.size()));
        if (added) sites_.push_back(quoted);
        if (site.id >= rs.site_of.size()) rs.site_of.resize(site.id + 1u, kNoSite);
        rs.site_of[site.id] = it->second;
      }
      if (infer_steps && !metas[r]->events.empty())
        rs.tracker.emplace(static_cast<std::int32_t>(r), static_cast<std::int32_t>(metas.size()),
                           metas[r]->events.front().t_enter, /*reserve_partners=*/4);
      begin_event();
      fmt::format_to(std::back_inserter(buf_),
                     "{{\"ph\":\"M\",\"pid\":{0},\"name\":\"process_name\",\"args\":{{\"name\":\"rank {0}\"}}}},"
                     "{{\"ph\":\"M\",\"pid\":{0},\"name\":\"process_sort_index\",\"args\":{{\"sort_index\":{0}}}}},"
                     "{{\"ph\":\"M\",\"pid\":{0},\"tid\":0,\"name\":\"thread_name\",\"args\":{{\"name\":\"MPI calls\"}}}}",
                     r);
    }
  }

  RecordTag record(std::int32_t rank, std::uint32_t /*index*/, const Event& e) override {
    Rank& rs = ranks_[static_cast<std::size_t>(rank)];
    if (e.continuation() && rs.call) {
      rs.sent += e.send_bytes;
      rs.received += e.recv_bytes;
      ++rs.records;
      if (e.peer != rs.call->peer) rs.one_peer = false;
    } else {
      flush_call(rank);
      rs.call = e;
      rs.sent = e.send_bytes;
      rs.received = e.recv_bytes;
      rs.records = 1;
      rs.one_peer = true;
    }
    if (rs.tracker) {
      feed_step_tracker(*rs.tracker, e, rs.comms.find(e.comm));  // partner lists are not drawn
      rs.last_exit = e.t_exit;
      write_steps(rank);
    }
    return {};
  }

  void message(const StreamedMessage& m) override { flow(m.message.src, 0, m.send, m.message.dst, 0, m.done); }

  // An arrow from the send record `send` (thread `send_tid` of rank `src`) to the record `done` that
  // completed its receive.
  void flow(std::int32_t src, int send_tid, const Event& send, std::int32_t dst, int done_tid, const Event& done) {
    if (!window_.all() && !(in_window(src, send) && in_window(dst, done))) {
      ++summary_.outside;
      return;
    }
    const std::uint64_t id = ++summary_.flows;
    begin_event();
    fmt::format_to(std::back_inserter(buf_),
                   "{{\"ph\":\"s\",\"id\":{},\"pid\":{},\"tid\":{},\"ts\":{},\"name\":\"message\",\"cat\":\"message\"}},"
                   "{{\"ph\":\"f\",\"bp\":\"e\",\"id\":{},\"pid\":{},\"tid\":{},\"ts\":{},\"name\":\"message\",\"cat\":\"message\"}}",
                   id, src, send_tid, middle(src, send), id, dst, done_tid, middle(dst, done));
  }

  // A thread's track of its own (the whole-trace path: threads of one rank).
  void thread_track(std::int32_t rank, int tid, std::string_view name) {
    begin_event();
    fmt::format_to(std::back_inserter(buf_), "{{\"ph\":\"M\",\"pid\":{},\"tid\":{},\"name\":\"thread_name\",\"args\":{{\"name\":\"{}\"}}}}",
                   rank, tid, name);
  }
  // The records of one thread of a rank, in call order, on track `tid`.
  void thread_records(std::int32_t rank, int tid, std::span<const Event* const> records) {
    ranks_[static_cast<std::size_t>(rank)].tid = tid;
    for (const Event* e : records) record(rank, 0, *e);
    flush_call(rank);
    ranks_[static_cast<std::size_t>(rank)].tid = 0;
  }
  // The M-steps the recorder closed, on track `tid`.
  void recorded_steps(std::int32_t rank, int tid, std::span<const StepRecord> steps) {
    for (const StepRecord& s : steps) step_slice(rank, tid, s);
  }
  void unmatched_count(std::uint64_t n) { summary_.unmatched += n; }

  void unmatched(std::int32_t, std::uint32_t, RecordTag) override { ++summary_.unmatched; }

  void rank_end(std::int32_t rank, std::uint64_t records) override {
    flush_call(rank);
    Rank& rs = ranks_[static_cast<std::size_t>(rank)];
    if (rs.tracker && records > 0) {
      rs.tracker->finish(rs.last_exit);
      write_steps(rank);
    }
    rs.tracker.reset();
  }

  // The prediction's calls on thread 1 of each rank.
  class PredictedTrack final : public ReplayObserver {
   public:
    explicit PredictedTrack(PerfettoWriter& w) : w_(w) {}
    void call(std::int32_t rank, Op op, double entry_s, double exit_s) override {
      const std::int64_t begin = static_cast<std::int64_t>(std::llround((entry_s - w_.zero_s_) * 1e9));
      const std::int64_t end = std::max(begin, static_cast<std::int64_t>(std::llround((exit_s - w_.zero_s_) * 1e9)));
      if (!w_.window_.overlaps(begin, end)) {
        ++w_.summary_.outside;
        return;
      }
      w_.begin_event();
      fmt::format_to(std::back_inserter(w_.buf_),
                     "{{\"ph\":\"X\",\"pid\":{},\"tid\":1,\"ts\":{},\"dur\":{},\"name\":\"{}\",\"cat\":\"loggps\"}}",
                     rank, Micros{begin}, Micros{end - begin}, mpi_name(op));
      ++w_.summary_.predicted;
    }

   private:
    PerfettoWriter& w_;
  };

  void predicted(const PredictedReplay& predict) {
    for (std::size_t r = 0; r < ranks_.size(); ++r) {
      begin_event();
      fmt::format_to(std::back_inserter(buf_),
                     "{{\"ph\":\"M\",\"pid\":{},\"tid\":1,\"name\":\"thread_name\",\"args\":{{\"name\":\"LogGPS prediction\"}}}}", r);
    }
    PredictedTrack track(*this);
    predict(track);
  }

  PerfettoSummary finish() {
    fmt::format_to(std::back_inserter(buf_), "],\"otherData\":{{\"generator\":\"mstep\",\"sites\":{}}}}}\n", sites_.size());
    drain(0);
    return summary_;
  }

 private:
  static constexpr std::uint32_t kNoSite = std::numeric_limits<std::uint32_t>::max();

  struct Rank {
    std::optional<Event> call;  // the call being gathered (its first record)
    int tid = 0;                // the track its calls go to
    std::uint64_t sent = 0, received = 0;
    std::uint32_t records = 0;
    bool one_peer = true;
    std::optional<StepTracker> tracker;
    std::uint64_t last_exit = 0;
    RankComms comms;
    std::vector<std::uint32_t> site_of;  // call-site id -> index in sites_
  };

  std::int64_t ns(std::int32_t rank, std::uint64_t ticks) const {
    return std::llround((timeline_.seconds(rank, ticks) - zero_s_) * 1e9);
  }
  Micros middle(std::int32_t rank, const Event& e) const { return {(ns(rank, e.t_enter) + ns(rank, e.t_exit)) / 2}; }
  // Whether the slice of the call whose record is `e` is written (a call's records share its times).
  bool in_window(std::int32_t rank, const Event& e) const {
    const std::int64_t begin = ns(rank, e.t_enter);
    return window_.overlaps(begin, std::max(begin, ns(rank, e.t_exit)));
  }

  void begin_event() {
    if (!first_) buf_.push_back(',');
    first_ = false;
    buf_.push_back('\n');
    drain(1u << 20);
  }
  void drain(std::size_t above) {
    if (buf_.size() < above) return;
    out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }

  void flush_call(std::int32_t rank) {
    Rank& rs = ranks_[static_cast<std::size_t>(rank)];
    if (!rs.call) return;
    const Event& e = *rs.call;
    const std::int64_t begin = ns(rank, e.t_enter), end = std::max(begin, ns(rank, e.t_exit));
    if (!window_.overlaps(begin, end)) {
      ++summary_.outside;
      rs.call.reset();
      return;
    }
    const bool tool = op_role(e.op) == Role::Tool;
    begin_event();
    auto it = std::back_inserter(buf_);
    fmt::format_to(it, "{{\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{},\"name\":\"{}\",\"cat\":\"{}\",\"args\":{{",
                   rank, rs.tid, Micros{begin}, Micros{end - begin}, tool ? "mstep flush" : mpi_name(e.op), tool ? "tool" : "mpi");
    bool comma = false;
    auto field = [&](std::string_view key, auto value) {
      fmt::format_to(it, "{}\"{}\":{}", comma ? "," : "", key, value);
      comma = true;
    };
    if (rs.sent) field("sent_bytes", rs.sent);
    if (rs.received) field("received_bytes", rs.received);
    const Role role = op_role(e.op);
    const bool coll = role == Role::CollRootOut || role == Role::CollRootIn || role == Role::CollAll;
    if (rs.one_peer && e.peer >= 0) field(coll ? "root" : "partner", e.peer);
    if (rs.one_peer && e.peer == kAnySource) field("partner", "\"any\"");
    if (rs.records > 1) field("records", rs.records);
    if (e.tag != kNoTag && !coll) field("tag", e.tag);
    if (!tool) field("comm", e.comm);
    if (e.flags & kIncomplete) field("found_nothing", "true");
    const std::uint32_t site = e.callsite < rs.site_of.size() ? rs.site_of[e.callsite] : kNoSite;
    if (site != kNoSite) field("site", std::string_view(sites_[site]));
    buf_.append(std::string_view("}}"));
    ++summary_.calls;
    rs.call.reset();
  }

  void write_steps(std::int32_t rank) {
    Rank& rs = ranks_[static_cast<std::size_t>(rank)];
    for (const StepRecord& st : rs.tracker->closed()) step_slice(rank, 0, st);
    rs.tracker->clear_closed();
    rs.tracker->trim(0);
  }

  void step_slice(std::int32_t rank, int tid, const StepRecord& s) {
    const std::int64_t begin = ns(rank, s.begin), end = std::max(begin, ns(rank, s.end));
    if (!window_.overlaps(begin, end)) {
      ++summary_.outside;
      return;
    }
    const double us_per_tick = timeline_.duration(rank, 1) * 1e6;
    begin_event();
    fmt::format_to(std::back_inserter(buf_),
                   "{{\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{},\"name\":\"M-step {}\",\"cat\":\"mstep\","
                   "\"args\":{{\"compute_us\":{:.3f},\"mpi_us\":{:.3f},\"bytes_in\":{},\"bytes_out\":{},"
                   "\"msgs_in\":{},\"msgs_out\":{}}}}}",
                   rank, tid, Micros{begin}, Micros{end - begin}, s.index, static_cast<double>(s.compute) * us_per_tick,
                   static_cast<double>(s.mpi) * us_per_tick, s.bytes_in, s.bytes_out, s.msgs_in, s.msgs_out);
    ++summary_.steps;
  }

  const Timeline& timeline_;
  std::ostream& out_;
  std::vector<Rank> ranks_;
  std::vector<std::string> sites_;  // call-site names, quoted for JSON
  double zero_s_ = 0;
  fmt::memory_buffer buf_;
  bool first_ = true;
  PerfettoSummary summary_;
  TimeWindow window_;
};

}  // namespace

PerfettoSummary write_perfetto(std::span<const RankTrace* const> metas, std::span<const std::string> files,
                               std::ostream& out, const SiteNamer& name_site, const PredictedReplay& predict,
                               const TimeWindow& window) {
  const Timeline timeline(std::vector<const RankTrace*>(metas.begin(), metas.end()));
  PerfettoWriter writer(metas, timeline, out, name_site, window);
  const StreamPassResult pass = stream_pass(metas, files, timeline, writer);
  if (predict) writer.predicted(predict);
  PerfettoSummary s = writer.finish();
  s.damaged = pass.damaged;
  s.problems = pass.problems;
  return s;
}

PerfettoSummary write_perfetto_whole(std::span<const RankTrace* const> ranks, std::ostream& out, const SiteNamer& name_site,
                                     const TimeWindow& window) {
  const Timeline timeline(std::vector<const RankTrace*>(ranks.begin(), ranks.end()));
  PerfettoWriter writer(ranks, timeline, out, name_site, window, false);
  constexpr int kStepsTrack = 65536;  // beyond any thread id: the M-steps' own track
  std::vector<const Event*> records;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    if (!ranks[r]) continue;
    const RankTrace& t = *ranks[r];
    const auto rank = static_cast<std::int32_t>(r);
    std::vector<std::uint16_t> threads(t.event_thread.begin(), t.event_thread.end());
    std::sort(threads.begin(), threads.end());
    threads.erase(std::unique(threads.begin(), threads.end()), threads.end());
    for (const std::uint16_t thread : threads) {
      if (thread != 0) writer.thread_track(rank, thread, fmt::format("thread {}", thread));
      records.clear();
      for (std::size_t i = 0; i < t.events.size(); ++i)
        if (t.event_thread[i] == thread) records.push_back(&t.events[i]);
      writer.thread_records(rank, thread, records);
    }
    writer.thread_track(rank, kStepsTrack, "M-steps");
    writer.recorded_steps(rank, kStepsTrack, t.steps);
  }
  const Matching matching = match_messages(ranks);
  for (const Message& m : matching.messages) {
    const RankTrace& src = *ranks[static_cast<std::size_t>(m.src)];
    const RankTrace& dst = *ranks[static_cast<std::size_t>(m.dst)];
    writer.flow(m.src, src.event_thread[m.send_event], src.events[m.send_event], m.dst, dst.event_thread[m.recv_event],
                dst.events[m.recv_event]);
  }
  writer.unmatched_count(matching.unmatched.size());
  return writer.finish();
}

}  // namespace mstep::model
