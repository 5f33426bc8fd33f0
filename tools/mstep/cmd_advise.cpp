// mstep advise: for every MPI_Barrier and MPI_Bcast call site of a trace, the predicted time of
// each algorithm of the papers (model/analysis/advise.hpp) under the trace's parameters, or under
// a what-if network, the best one, and what the run would gain if that site used it.
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "format/delay_pairs.hpp"
#include "model/analysis/advise.hpp"
#include "model/analysis/collective_spans.hpp"
#include "model/analysis/report.hpp"
#include "model/trace/stream_pass.hpp"
#include "model/trace/matching.hpp"
#include "model/trace/timeline.hpp"
#include "model/replay/replay_collectives.hpp"
#include "tools/mstep/commands.hpp"
#include "tools/mstep/network_options.hpp"
#include "tools/mstep/output.hpp"
#include "tools/mstep/report_common.hpp"
#include "tools/symbols/symbolizer.hpp"

namespace mstep::cli {
namespace {

using model::CollectiveAdvice;
using model::CollectiveSite;

struct AdviseOptions {
  std::string dir, format = "text", pairs;
  std::vector<std::string> params;
  NetworkOptions net;
};

struct Gathered {
  std::vector<CollectiveSite> sites;
  double run_s = 0;                 // slowest rank, MPI_Init exit to MPI_Finalize entry (its own clock)
  std::uint64_t intercomm_calls = 0;
  std::vector<std::string> problems;
  std::vector<int> damaged;  // ranks whose file broke off in a frame the metadata read skipped
  bool spans_measured = false;  // the instances' spans (the trace could be streamed)
};

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
Gathered gather_sites(const TraceDir& trace, SiteKeys& keys, std::map<SiteKey, std::size_t>& index) {
  Gathered g;
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

std::string site_title(const CollectiveSite& s) {
  std::string t = fmt::format("{} at {}: {} rank{}", mpi_name(s.op), s.location, s.comm_size, s.comm_size == 1 ? "" : "s");
  if (s.op == Op::Bcast) t += fmt::format(", root {}, {} B", s.root, s.bytes);
  return t;
}

double pct_of(double part, double whole) { return whole > 0 ? 100 * part / whole : 0; }

std::string span_line(const CollectiveSite& s, bool measured) {
  if (!measured) return "not measured (a rank with several threads, or intercommunicators: the trace is not streamed)";
  if (s.spans.count() == 0) return "no instance with every member's call";
  return fmt::format("median {:.3f} us, mean {:.3f} us over {} instance{}{}", 1e6 * s.spans.median_s(), 1e6 * s.spans.mean_s(),
                     s.spans.count(), s.spans.count() == 1 ? "" : "s",
                     s.spans.sampled() ? fmt::format(" (median of {} drawn at random)", model::SpanStats::kSpanSample) : "");
}

void print_text(const TraceDir& trace, const Gathered& g, const std::vector<CollectiveAdvice>& advice,
                const model::EditedParams& ed, const std::string& params_file, const AdviseOptions& o) {
  const auto c = trace_completeness(trace, g.damaged);
  fmt::print("mstep advise: {} ({} ranks, {})\n", trace.path, trace.ranks.size(), c.complete ? "complete" : "incomplete");
  fmt::print("parameters: {}\n", params_file);
  if (!o.net.network.empty()) fmt::print("network: {}\n", o.net.network);
  if (o.net.any()) {
    fmt::print("changes:{}\n", ed.changes.empty() ? " none" : "");
    for (const auto& ch : ed.changes) fmt::print("  {}\n", model::describe(ch));
  }
  fmt::print("actual run time {:.6f} s (slowest rank, MPI_Init exit to MPI_Finalize entry)\n", g.run_s);
  if (advice.empty()) fmt::print("\nno MPI_Barrier or MPI_Bcast call in this trace: nothing to advise on\n");
  for (const CollectiveAdvice& a : advice) {
    const auto& s = a.site;
    fmt::print("\n{}\n", site_title(s));
    fmt::print("  {:g} call{} per rank, measured {:.3f} us per call (late members included); network: {}\n",
               s.calls_per_rank(), s.calls_per_rank() == 1 ? "" : "s", s.records ? 1e6 * s.measured_s / static_cast<double>(s.records) : 0,
               a.network);
    fmt::print("  measured span per instance (from the last arrival it needed to the last exit): {}\n",
               span_line(s, g.spans_measured));
    const std::string ran = model::algorithm_that_ran(a, trace.meta);
    std::size_t width = 30;
    for (const auto& e : a.algorithms) width = std::max(width, e.name.size() + 2);
    fmt::print("  {:<{}} {:>14}\n", "algorithm", width, "predicted us");
    for (const auto& e : a.algorithms) {
      std::string marks = e.name == a.best ? "  best" : "";
      if (e.name == ran) marks += "  ran";
      fmt::print("  {:<{}} {:>14}{}\n", e.name, width, std::isfinite(e.predicted_s) ? fmt::format("{:.3f}", 1e6 * e.predicted_s) : "-",
                 marks);
    }
    if (a.gain_per_call_s > 0)
      fmt::print("  use {}: {:.3f} us less per call, predicted gain {:.6f} s ({:.2f}% of the run)\n", a.best,
                 1e6 * a.gain_per_call_s, a.gain_s, pct_of(a.gain_s, g.run_s));
    else if (!a.best.empty()) fmt::print("  MPICH's default is the best predicted here\n");
    for (const auto& n : a.notes) fmt::print("  note: {}\n", n);
  }
  for (const auto& n : ed.notes) fmt::print("note: {}\n", n);
  if (g.intercomm_calls)
    fmt::print("note: {} call{} on intercommunicators not advised on\n", g.intercomm_calls, g.intercomm_calls == 1 ? "" : "s");
}

nlohmann::json to_json(const TraceDir& trace, const Gathered& g, const std::vector<CollectiveAdvice>& advice,
                       const model::EditedParams& ed, const std::string& params_file, const AdviseOptions& o) {
  nlohmann::json j;
  j["trace"] = trace.path;
  j["ranks"] = trace.ranks.size();
  j["complete"] = trace_completeness(trace, g.damaged).complete;
  j["params"] = params_file;
  j["network"] = o.net.network.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.net.network);
  j["changes"] = changes_json(ed.changes);
  j["actual_s"] = g.run_s;
  nlohmann::json sites = nlohmann::json::array();
  for (const CollectiveAdvice& a : advice) {
    const auto& s = a.site;
    nlohmann::json algs = nlohmann::json::array();
    for (const auto& e : a.algorithms)
      algs.push_back({{"name", e.name}, {"predicted_s", number_or_null(e.predicted_s)}, {"mpich_default", e.mpich_default}});
    const std::string ran = model::algorithm_that_ran(a, trace.meta);
    nlohmann::json span = nullptr;
    if (g.spans_measured)
      span = {{"instances", s.spans.count()},
              {"median_s", s.spans.count() ? nlohmann::json(s.spans.median_s()) : nlohmann::json(nullptr)},
              {"mean_s", s.spans.count() ? nlohmann::json(s.spans.mean_s()) : nlohmann::json(nullptr)},
              {"sampled", s.spans.sampled()}};
    sites.push_back({{"call", mpi_name(s.op)},
                     {"location", s.location},
                     {"comm_size", s.comm_size},
                     {"root", s.op == Op::Bcast ? nlohmann::json(s.root) : nlohmann::json(nullptr)},
                     {"bytes", s.bytes},
                     {"calls", s.records},
                     {"ranks", s.ranks},
                     {"calls_per_rank", s.calls_per_rank()},
                     {"measured_s", s.measured_s},
                     {"span", span},
                     {"ran", ran.empty() ? nlohmann::json(nullptr) : nlohmann::json(ran)},
                     {"network", a.network},
                     {"algorithms", algs},
                     {"best", a.best},
                     {"default_s", number_or_null(a.default_s)},
                     {"best_s", number_or_null(a.best_s)},
                     {"gain_per_call_s", a.gain_per_call_s},
                     {"gain_s", a.gain_s},
                     {"gain_pct", pct_of(a.gain_s, g.run_s)},
                     {"notes", a.notes}});
  }
  j["sites"] = sites;
  std::vector<std::string> notes = ed.notes;
  if (g.intercomm_calls) notes.push_back(fmt::format("{} calls on intercommunicators not advised on", g.intercomm_calls));
  j["notes"] = notes;
  j["problems"] = trace.problems;
  for (const auto& p : g.problems) j["problems"].push_back(p);
  return j;
}

// CSV quoting for a field that may hold commas or quotes (locations, algorithm names).
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

void print_csv(const TraceDir& trace, const Gathered& g, const std::vector<CollectiveAdvice>& advice) {
  fmt::print("call,location,comm_size,root,bytes,calls_per_rank,measured_s_per_call,span_median_s,span_mean_s,network,"
             "algorithm,predicted_s,mpich_default,best,ran\n");
  for (const CollectiveAdvice& a : advice) {
    const auto& s = a.site;
    const bool spans = g.spans_measured && s.spans.count() > 0;
    const std::string ran = model::algorithm_that_ran(a, trace.meta);
    for (const auto& e : a.algorithms)
      fmt::print("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", mpi_name(s.op), quoted(s.location), s.comm_size,
                 s.op == Op::Bcast ? fmt::format("{}", s.root) : "", s.bytes, s.calls_per_rank(),
                 s.records ? s.measured_s / static_cast<double>(s.records) : 0,
                 spans ? fmt::format("{}", s.spans.median_s()) : "", spans ? fmt::format("{}", s.spans.mean_s()) : "",
                 quoted(a.network), quoted(e.name), std::isfinite(e.predicted_s) ? fmt::format("{}", e.predicted_s) : "",
                 e.mpich_default ? 1 : 0, e.name == a.best ? 1 : 0, e.name == ran ? 1 : 0);
  }
}

void run_advise(const AdviseOptions& o) {
  const std::vector<model::Edit> edits = parse_edits(o.net);
  const std::vector<ParamsFile> given = read_params_given(o.params, o.dir);
  if (given.empty())
    fail(1, fmt::format("advise needs calibrated parameters: run `mstep calibrate -o {}/params.json`, or pass --params FILE",
                        o.dir));
  for (const ParamsFile& p : given) {
    if (!edited_network(p.params, o.net, edits).params.loggps)
      fail(1, fmt::format("advise needs LogGPS parameters (L, o, g, ...), and {} has none: run mstep calibrate",
                          o.net.network.empty() ? p.file : o.net.network));
  }
  TraceDir trace;
  try {
    trace = load_trace_dir(o.dir, std::nullopt, {}, /*metadata_only=*/true);
  } catch (const TraceError& e) {
    fail(1, e.what());
  }
  const ChosenParams chosen = choose_params(given, trace);
  const model::CalibrationParams& baseline = given[chosen.index].params;
  const std::string shown = chosen.choice.empty() ? given[chosen.index].file
                                                  : given[chosen.index].file + " (" + chosen.choice + ")";
  const std::string& params_file = given[chosen.index].file;
  const model::EditedParams ed = edited_network(baseline, o.net, edits);
  warn_if_other_network(baseline, params_file, trace);
  warn_if_other_speed(baseline, trace);
  PairLatency pairs;
  if (!o.pairs.empty()) {
    std::string error;
    pairs = PairLatency::read(o.pairs, static_cast<int>(trace.ranks.size()), error);
    if (!error.empty()) fail(2, fmt::format("--pairs {}: {}", o.pairs, error));
  }
  SiteKeys keys(trace);
  std::map<SiteKey, std::size_t> index;
  Gathered g = gather_sites(trace, keys, index);
  g.spans_measured = measure_spans(trace, keys, index, g.sites);
  std::vector<CollectiveAdvice> advice;
  for (const CollectiveSite& s : g.sites)
    advice.push_back(model::advise_collective(s, ed.params, pairs.empty() ? nullptr : &pairs));
  // The sites that would gain most first; then where the run spends most time in them.
  std::stable_sort(advice.begin(), advice.end(), [](const CollectiveAdvice& a, const CollectiveAdvice& b) {
    if (a.gain_s != b.gain_s) return a.gain_s > b.gain_s;
    return a.site.measured_s > b.site.measured_s;
  });
  if (o.format == "json") {
    nlohmann::json j = to_json(trace, g, advice, ed, params_file, o);
    j["params_choice"] = chosen.choice.empty() ? nlohmann::json(nullptr) : nlohmann::json(chosen.choice);
    fmt::print("{}\n", j.dump(2));
  } else if (o.format == "csv") print_csv(trace, g, advice);
  else print_text(trace, g, advice, ed, shown, o);
  TraceDir problems;
  problems.problems = trace.problems;
  problems.problems.insert(problems.problems.end(), g.problems.begin(), g.problems.end());
  report_problems(problems);
}

}  // namespace

void add_advise(CLI::App& app) {
  auto o = std::make_shared<AdviseOptions>();
  auto* cmd = app.add_subcommand(
      "advise", "Which barrier and broadcast algorithm each call site should use: every algorithm's predicted time");
  cmd->add_option("trace", o->dir, "Trace directory written by mstep record")->required();
  add_params_option(*cmd, o->params, "Parameter file of mstep calibrate");
  add_network_options(*cmd, o->net);
  cmd->add_option("--pairs", o->pairs,
                  "Latency added per pair of ranks, a MSTEP_DELAY_PAIRS file: {\"clusters\": [[0,1],[2,3]], "
                  "\"inter\": \"200us\"} or {\"matrix\": [[...]]} (broadcast schedules and barriers)");
  cmd->add_option("--format", o->format, "Output format: text, json or csv")->check(CLI::IsMember({"text", "json", "csv"}));
  cmd->footer(network_options_help() +
              "\nExamples:\n  mstep advise run1\n  mstep advise run1 --scale L=100   (the same run on a network of "
              "100 times the latency)");
  cmd->callback([o, cmd] {
    collect_edits(*cmd, o->net);
    run_advise(*o);
  });
}

}  // namespace mstep::cli
