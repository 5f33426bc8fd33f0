#include "tools/mstep/advise_sites.hpp"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "model/analysis/collective_spans.hpp"
#include "model/analysis/report.hpp"
#include "model/replay/replay_collectives.hpp"
#include "model/trace/matching.hpp"
#include "model/trace/stream_pass.hpp"
#include "model/trace/timeline.hpp"
#include "tools/symbols/symbolizer.hpp"

namespace mstep::cli {
namespace {

// The application's line of a call site, resolved once per distinct stack.
class SiteNames {
 public:
  // The name stays where it is for the life of this object (one per distinct stack).
  const std::string* name(const CallsiteDef* def) {
    if (!def) return &unknown_;
    std::string key;
    for (const auto& f : def->frames) key += fmt::format("{}+{:x};", f.module, f.offset);
    auto it = names_.find(key);
    if (it == names_.end()) it = names_.emplace(key, symbolizer_.describe(*def)).first;
    return &it->second;
  }

 private:
  Symbolizer symbolizer_;
  std::map<std::string, std::string> names_;
  std::string unknown_ = "?";
};

// A Barrier or Bcast record's site: (call, location, communicator size, root, message size). The
// location is the interned name's address; the sites are put in (op, location, ...) order at the
// end, so the output does not depend on addresses.
using SiteKey = std::tuple<Op, const std::string*, std::uint32_t, std::uint32_t, std::uint64_t>;

// Each rank's call sites named and its communicators indexed once, so that a record's site is
// only lookups by id.
class SiteKeys {
 public:
  explicit SiteKeys(const TraceDir& trace) : ranks_(trace.ranks.size()) {
    for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
      if (!trace.ranks[r]) continue;
      for (const CommDef& c : trace.ranks[r]->comms) {
        if (c.id >= ranks_[r].comm_of.size()) ranks_[r].comm_of.resize(c.id + 1u, nullptr);
        ranks_[r].comm_of[c.id] = &c;
      }
      for (const CallsiteDef& d : trace.ranks[r]->callsites) ranks_[r].name_of[d.id] = names_.name(&d);
    }
  }
  // The record's communicator when it is an intracommunicator this rank defined, else null.
  const CommDef* intra_comm(std::size_t rank, const Event& e) const {
    const auto& of = ranks_[rank].comm_of;
    const CommDef* c = e.comm < of.size() ? of[e.comm] : nullptr;
    return c && !c->inter ? c : nullptr;
  }
  SiteKey key(std::size_t rank, const Event& e, const CommDef& comm) {
    const auto n = static_cast<std::uint32_t>(comm.world_ranks.size());
    std::uint32_t root = 0;
    if (e.op == Op::Bcast) {
      const std::int64_t at = comm.world_ranks.rank_of(e.peer);
      root = at < 0 ? 0 : static_cast<std::uint32_t>(at);
    }
    const std::uint64_t bytes = e.op == Op::Bcast ? model::collective_block_bytes(e, n) : 0;
    const auto& name_of = ranks_[rank].name_of;
    const auto named = name_of.find(e.callsite);
    return SiteKey{e.op, named == name_of.end() ? names_.name(nullptr) : named->second, n, root, bytes};
  }
  static bool advised(const Event& e) { return (e.op == Op::Barrier || e.op == Op::Bcast) && is_collective_call(e); }

 private:
  struct Rank {
    std::vector<const CommDef*> comm_of;
    std::unordered_map<std::uint32_t, const std::string*> name_of;
  };
  SiteNames names_;
  std::vector<Rank> ranks_;
};

// Every rank's records, read a frame at a time: the Barrier and Bcast calls summed per call site,
// communicator size, root and message size. `index` gets each site's position in the result.
AdviseSites gather_sites(const TraceDir& trace, SiteKeys& keys, std::map<SiteKey, std::size_t>& index) {
  AdviseSites g;
  struct Acc {
    CollectiveSite site;
    std::size_t last_rank = ~std::size_t{0};  // the rank that last called it (counts ranks once each)
  };
  std::map<SiteKey, Acc> sites;
  std::vector<Event> chunk;
  for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
    if (!trace.ranks[r]) continue;
    const RankTrace& t = *trace.ranks[r];
    const double ns_per_tick = rank_clock(t).ns_per_tick;
    std::uint64_t init_exit = 0, finalize_enter = 0;
    bool have_init = false;
    try {
      RankEventReader reader(t.path);
      while (true) {
        chunk.clear();
        const bool more = reader.read(chunk);
        for (const Event& e : chunk) {
          if (e.op == Op::Init && !have_init) init_exit = e.t_exit, have_init = true;
          finalize_enter = e.op == Op::Finalize ? e.t_enter : std::max(finalize_enter, e.t_exit);
          if (!SiteKeys::advised(e)) continue;
          const CommDef* comm = keys.intra_comm(r, e);
          if (!comm) {
            ++g.intercomm_calls;
            continue;
          }
          const SiteKey key = keys.key(r, e, *comm);
          Acc& acc = sites[key];
          CollectiveSite& s = acc.site;
          if (s.records == 0) {
            s.op = e.op, s.location = *std::get<1>(key), s.comm_size = std::get<2>(key), s.root = std::get<3>(key),
            s.bytes = std::get<4>(key);
            if (s.comm_size <= model::kAdviseMaxScheduleRanks) s.members = comm->world_ranks.vector();
          }
          ++s.records;
          s.measured_s += static_cast<double>(e.t_exit - e.t_enter) * ns_per_tick * 1e-9;
          if (acc.last_rank != r) acc.last_rank = r, ++s.ranks;
        }
        if (!more) break;
      }
      if (!reader.problem().empty() && damage_is_new(trace, r)) {
        g.problems.push_back(reader.problem() + " (the events before it are kept)");
        g.damaged.push_back(static_cast<int>(r));
      }
    } catch (const TraceError& e) {
      g.problems.push_back(e.what());
    }
    if (have_init && finalize_enter > init_exit)
      g.run_s = std::max(g.run_s, static_cast<double>(finalize_enter - init_exit) * ns_per_tick * 1e-9);
  }
  std::vector<std::pair<SiteKey, CollectiveSite>> sorted;
  for (auto& [k, acc] : sites) sorted.emplace_back(k, std::move(acc.site));
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    const CollectiveSite &x = a.second, &y = b.second;
    return std::tie(x.op, x.location, x.comm_size, x.root, x.bytes) < std::tie(y.op, y.location, y.comm_size, y.root, y.bytes);
  });
  for (auto& [k, s] : sorted) {
    index[k] = g.sites.size();
    g.sites.push_back(std::move(s));
  }
  return g;
}

// The measured span of every instance of each site (model/analysis/collective_spans.hpp), in a
// streaming pass over all ranks at once. Not for traces the pass cannot read (several threads
// per rank, intercommunicators): then false.
bool measure_spans(const TraceDir& trace, SiteKeys& keys, const std::map<SiteKey, std::size_t>& index,
                   std::vector<CollectiveSite>& sites) {
  if (!model::can_stream(trace)) return false;
  const auto [ranks, files] = model::stream_inputs(trace);
  const Timeline timeline(ranks);
  struct Spans final : StreamVisitor {
    Spans(SiteKeys& k, const std::map<SiteKey, std::size_t>& i, std::vector<CollectiveSite>& s, const Timeline& t)
        : keys(k), index(i), sites(s), timeline(t) {}
    SiteKeys& keys;
    const std::map<SiteKey, std::size_t>& index;
    std::vector<CollectiveSite>& sites;
    const Timeline& timeline;
    std::vector<model::SpanMember> m;  // one instance's members, reused
    RecordTag record(std::int32_t rank, std::uint32_t, const Event& e) override {
      if (!SiteKeys::advised(e)) return {};
      const CommDef* comm = keys.intra_comm(static_cast<std::size_t>(rank), e);
      if (!comm) return {};
      const auto it = index.find(keys.key(static_cast<std::size_t>(rank), e, *comm));
      return it == index.end() ? RecordTag{} : RecordTag{it->second + 1, 0};
    }
    void collective(std::span<const StreamedMember> members) override {
      if (members.empty() || members.front().tag.a == 0) return;
      const std::size_t site = members.front().tag.a - 1;
      m.clear();
      for (const StreamedMember& x : members)
        m.push_back({timeline.seconds(x.rank, x.call.t_enter), timeline.seconds(x.rank, x.call.t_exit),
                     (x.call.flags & kRoot) != 0});
      if (const auto span = model::instance_span(sites[site].op, m)) sites[site].spans.add(*span);
    }
  };
  Spans visitor(keys, index, sites, timeline);
  stream_pass(ranks, files, timeline, visitor);
  return true;
}

}  // namespace

AdviseSites gather_advise_sites(const TraceDir& trace) {
  SiteKeys keys(trace);
  std::map<SiteKey, std::size_t> index;
  AdviseSites g = gather_sites(trace, keys, index);
  g.spans_measured = measure_spans(trace, keys, index, g.sites);
  return g;
}

}  // namespace mstep::cli
