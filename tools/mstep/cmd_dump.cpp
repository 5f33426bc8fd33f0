// mstep dump: the recorded events and M-steps themselves.
#include <iterator>
#include <span>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/trace/trace_dir.hpp"
#include "tools/mstep/commands.hpp"
#include "tools/mstep/output.hpp"
#include "tools/symbols/symbolizer.hpp"

namespace mstep::cli {
namespace {

// A list of ranks as the text dump writes it: each ascending run of three or more as "a..b", the
// order kept (a world of a million ranks is "0..1048575", not 7 MB of numbers). JSON lists them all.
std::string rank_list(std::span<const std::int32_t> ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && static_cast<std::int64_t>(ranks[j + 1]) == static_cast<std::int64_t>(ranks[j]) + 1) ++j;
    if (!out.empty()) out += ',';
    if (j - i >= 2) fmt::format_to(std::back_inserter(out), "{}..{}", ranks[i], ranks[j]);
    else if (j > i) fmt::format_to(std::back_inserter(out), "{},{}", ranks[i], ranks[j]);
    else fmt::format_to(std::back_inserter(out), "{}", ranks[i]);
    i = j + 1;
  }
  return out;
}

std::string flags_text(std::uint8_t f) {
  std::string s;
  if (f & kContinuation) s += "+";
  if (f & kRecvHalf) s += "r";
  if (f & kRoot) s += "R";
  if (f & kIncomplete) s += "i";
  return s.empty() ? "-" : s;
}

std::string peer_text(std::int32_t p) {
  if (p == kNoPeer) return "-";
  if (p == kAnySource) return "any";
  return std::to_string(p);
}

nlohmann::json rank_json(const RankTrace& t, int rank, Symbolizer& sym) {
  const double spt = seconds_per_tick(t);
  const std::uint64_t t0 = t.events.empty() ? 0 : t.events.front().t_enter;
  nlohmann::json events = nlohmann::json::array();
  for (const Event& e : t.events) {
    events.push_back({{"op", mpi_name(e.op)}, {"t_enter_s", static_cast<double>(e.t_enter - t0) * spt},
                      {"duration_s", static_cast<double>(e.t_exit - e.t_enter) * spt},
                      {"peer", e.peer}, {"tag", e.tag}, {"comm", e.comm},
                      {"send_bytes", e.send_bytes}, {"recv_bytes", e.recv_bytes},
                      {"request", e.request}, {"callsite", e.callsite}, {"flags", e.flags}});
  }
  nlohmann::json steps = nlohmann::json::array();
  for (const StepRecord& s : t.steps) {
    steps.push_back({{"index", s.index}, {"begin_s", static_cast<double>(s.begin - t0) * spt},
                     {"end_s", static_cast<double>(s.end - t0) * spt},
                     {"compute_s", static_cast<double>(s.compute) * spt},
                     {"mpi_s", static_cast<double>(s.mpi) * spt}, {"bytes_in", s.bytes_in},
                     {"bytes_out", s.bytes_out}, {"msgs_in", s.msgs_in}, {"msgs_out", s.msgs_out},
                     {"partners", step_partners(s, t.comms)},
                     {"whole_comm", s.whole_comm == kNoWholeComm ? nlohmann::json(nullptr) : nlohmann::json(s.whole_comm)}});
  }
  nlohmann::json comms = nlohmann::json::array();
  for (const CommDef& c : t.comms) comms.push_back({{"id", c.id}, {"inter", c.inter}, {"world_ranks", c.world_ranks.vector()}});
  nlohmann::json sites = nlohmann::json::array();
  for (const CallsiteDef& c : t.callsites) sites.push_back({{"id", c.id}, {"location", sym.describe(c)}});
  return {{"rank", rank}, {"status", trace_end_name(t.end)}, {"events", events}, {"steps", steps},
          {"comms", comms}, {"callsites", sites}};
}

void print_rank(const RankTrace& t, int rank, Symbolizer& sym) {
  const double spt = seconds_per_tick(t);
  const std::uint64_t t0 = t.events.empty() ? 0 : t.events.front().t_enter;
  fmt::print("# rank {} ({} events, {} steps, {})\n", rank, t.events.size(), t.steps.size(),
             trace_end_name(t.end));
  fmt::print("{:>14} {:>12} {:<22} {:>5} {:>6} {:>6} {:>10} {:>10} {:>6} {:>5} {}\n", "t s", "dur s",
             "call", "flags", "peer", "tag", "sent", "recv", "req", "comm", "site");
  for (const Event& e : t.events) {
    fmt::print("{:>14.9f} {:>12.9f} {:<22} {:>5} {:>6} {:>6} {:>10} {:>10} {:>6} {:>5} {}\n",
               static_cast<double>(e.t_enter - t0) * spt,
               static_cast<double>(e.t_exit - e.t_enter) * spt, mpi_name(e.op), flags_text(e.flags),
               peer_text(e.peer), e.tag, e.send_bytes, e.recv_bytes, e.request, e.comm, e.callsite);
  }
  fmt::print("\n# rank {} M-steps\n{:>5} {:>14} {:>14} {:>12} {:>12} {:>10} {:>10} {:>5} {:>5}  {}\n",
             rank, "step", "begin s", "end s", "compute s", "MPI s", "bytes in", "bytes out", "in",
             "out", "partners");
  for (const StepRecord& s : t.steps) {
    // A step that heard all of a large communicator names it rather than listing its members.
    fmt::print("{:>5} {:>14.9f} {:>14.9f} {:>12.9f} {:>12.9f} {:>10} {:>10} {:>5} {:>5}  {{{}}}{}\n",
               s.index, static_cast<double>(s.begin - t0) * spt, static_cast<double>(s.end - t0) * spt,
               static_cast<double>(s.compute) * spt, static_cast<double>(s.mpi) * spt, s.bytes_in,
               s.bytes_out, s.msgs_in, s.msgs_out, rank_list(s.partners),
               s.whole_comm == kNoWholeComm ? std::string() : fmt::format(" + all of communicator {}", s.whole_comm));
  }
  fmt::print("\n# rank {} communicators\n", rank);
  for (const CommDef& c : t.comms)
    fmt::print("{:>5} {}world ranks {{{}}}\n", c.id, c.inter ? "inter, remote " : "", rank_list(c.world_ranks));
  fmt::print("\n# rank {} call sites\n", rank);
  for (const CallsiteDef& c : t.callsites) fmt::print("{:>5} {}\n", c.id, sym.describe(c));
  fmt::print("\n");
}

}  // namespace

void add_dump(CLI::App& app) {
  struct Options {
    std::string dir;
    std::optional<int> rank;
    std::string format = "text";
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("dump", "Print the recorded events, M-steps, communicators and call sites");
  cmd->add_option("trace", o->dir, "Trace directory written by mstep record")->required();
  cmd->add_option("-r,--rank", o->rank, "Only this rank");
  add_format_option(*cmd, o->format);
  cmd->callback([o] {
    const TraceDir d = load_trace_dir(o->dir, o->rank);
    Symbolizer sym;
    nlohmann::json all = nlohmann::json::array();
    for (std::size_t r = 0; r < d.ranks.size(); ++r) {
      if (!d.ranks[r]) continue;
      if (o->format == "json") all.push_back(rank_json(*d.ranks[r], static_cast<int>(r), sym));
      else print_rank(*d.ranks[r], static_cast<int>(r), sym);
    }
    if (o->format == "json") fmt::print("{}\n", (o->rank && all.size() == 1 ? all[0] : all).dump(1));
    report_problems(d);
  });
}

}  // namespace mstep::cli
