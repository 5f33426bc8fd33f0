// mstep stats: what was recorded, per rank and per MPI function.
#include <array>
#include <cstdio>
#include <map>

#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "format/rank_steps.hpp"
#include "format/trace_file.hpp"
#include "model/trace/trace_dir.hpp"
#include "tools/mstep/commands.hpp"
#include "tools/mstep/output.hpp"

namespace mstep::cli {
namespace {

struct OpTotals {
  std::uint64_t calls = 0;
  std::uint64_t send_bytes = 0;
  std::uint64_t recv_bytes = 0;
  double seconds = 0;
};

struct OpRow {
  Op op{};
  OpTotals totals;
};

// The functions with records, in op order. A table of every function per rank (kOpCount of them,
// 32 bytes each) was 5 KB a rank: gigabytes at a million ranks for a few functions each.
std::vector<OpRow> op_rows(const std::array<OpTotals, kOpCount>& ops) {
  std::vector<OpRow> rows;
  for (int i = 0; i < kOpCount; ++i) {
    const OpTotals& o = ops[static_cast<std::size_t>(i)];
    if (o.calls || o.send_bytes || o.recv_bytes) rows.push_back({static_cast<Op>(i), o});
  }
  return rows;
}

struct RankStats {
  int rank = 0;
  std::vector<OpRow> ops;
  std::uint64_t events = 0;
  std::uint64_t steps = 0;
  std::uint64_t trace_bytes = 0;
  double mpi_seconds = 0;
  double tool_seconds = 0;  // trace flushes
  std::string status;
};

// One rank's records counted as they are read, a chunk at a time: memory does not grow with the
// trace. A frame found damaged here (the metadata read skips payloads) ends the rank as it would
// for a whole read, and is added to the trace's problems.
RankStats count(TraceDir& d, int rank) {
  const RankTrace& t = *d.ranks[static_cast<std::size_t>(rank)];
  RankStats s;
  s.rank = rank;
  s.trace_bytes = t.file_bytes;
  const double spt = seconds_per_tick(t);
  RankEventReader reader(t.path);
  std::vector<Event> chunk;
  std::optional<Event> last;
  std::array<OpTotals, kOpCount> ops{};
  // The M-steps of the records read (a version 4 trace marks them on its records; an older one
  // recorded them in Steps frames, which the same rule gives again).
  RankStepDeriver steps(t.header.rank, t.header.world_size, t.comms);
  while (reader.read(chunk)) {
    s.events += chunk.size();
    if (!chunk.empty()) last = chunk.back();
    for (const Event& e : chunk) {
      s.steps += steps.feed(e);
      steps.clear_closed();
      OpTotals& o = ops[static_cast<std::size_t>(e.op)];
      o.send_bytes += e.send_bytes;
      o.recv_bytes += e.recv_bytes;
      if (e.continuation()) continue;  // same call as the record before
      const double dur = static_cast<double>(e.t_exit - e.t_enter) * spt;
      ++o.calls;
      o.seconds += dur;
      if (e.op == Op::ToolFlush) s.tool_seconds += dur;
      else s.mpi_seconds += dur;
    }
    chunk.clear();
  }
  s.ops = op_rows(ops);
  if (last) {
    steps.finish(last->t_exit);
    s.steps += steps.closed().size();
  }
  TraceEnd end = t.end;
  if (damage_is_new(d, static_cast<std::size_t>(rank)) && reader.end() == TraceEnd::Corrupt) {
    end = TraceEnd::Corrupt;
    d.states[static_cast<std::size_t>(rank)] = RankState::Corrupt;
    d.problems.push_back(reader.problem() + " (the events before it are kept)");
  }
  s.status = trace_end_name(end);
  if (last && last->op == Op::Abort && t.events_on_disk > 0)  // (a whole read already said so)
    d.problems.push_back(fmt::format("{}: the rank called MPI_Abort (error code {}): the run was aborted", t.path,
                                     last->tag));
  return s;
}

// The functions the JSON lists: called, and not libmstep's own trace flushes.
bool listed(const OpRow& row) { return row.totals.calls != 0 && row.op != Op::ToolFlush; }

nlohmann::json rank_json(const RankStats& r) {
  nlohmann::json calls = nlohmann::json::object(), sent = nlohmann::json::object(),
                 received = nlohmann::json::object(), seconds = nlohmann::json::object();
  for (const OpRow& row : r.ops) {
    if (!listed(row)) continue;
    const std::string name = mpi_name(row.op);
    calls[name] = row.totals.calls;
    sent[name] = row.totals.send_bytes;
    received[name] = row.totals.recv_bytes;
    seconds[name] = row.totals.seconds;
  }
  return {{"rank", r.rank}, {"calls", calls}, {"bytes_sent", sent},
          {"bytes_received", received}, {"time_s", seconds}, {"steps", r.steps},
          {"events", r.events}, {"trace_bytes", r.trace_bytes},
          {"mpi_time_s", r.mpi_seconds}, {"tool_time_s", r.tool_seconds},
          {"status", r.status}};
}

// The JSON document, as nlohmann::json's dump(2) of the whole would print it, but written a rank at
// a time: the whole tree was 10 KB a rank (600 MB at 65 536 ranks, more than this machine has at a
// million). The ranks' array goes where a placeholder value stood in the dump of the rest.
void print_json(const TraceDir& d, const std::vector<RankStats>& ranks) {
  std::uint64_t events = 0, bytes = 0;
  std::map<std::string, std::uint64_t> total_calls;
  for (const RankStats& r : ranks) {
    events += r.events;
    bytes += r.trace_bytes;
    for (const OpRow& row : r.ops)
      if (listed(row)) total_calls[mpi_name(row.op)] += row.totals.calls;
  }
  nlohmann::json j;
  j["trace"] = d.path;
  j["ranks"] = d.ranks.size();
  std::size_t read = 0;
  for (const auto& r : d.ranks) read += r.has_value();
  j["ranks_read"] = read;
  j["events"] = events;
  j["trace_bytes"] = bytes;
  j["complete"] = trace_completeness(d).complete;
  j["command"] = d.meta.command;
  if (!d.meta.writer.empty()) j["writer"] = d.meta.writer;
  if (!d.meta.compress.empty()) j["compress"] = d.meta.compress;
  j["calls"] = total_calls;
  j["problems"] = d.problems;
  const std::string placeholder = "\x01per_rank\x01";
  j["per_rank"] = placeholder;
  const std::string whole = j.dump(2);
  const std::string quoted = nlohmann::json(placeholder).dump();
  const std::size_t at = whole.find(quoted);
  std::fwrite(whole.data(), 1, at, stdout);
  if (ranks.empty()) {
    std::fputs("[]", stdout);
  } else {
    std::fputs("[\n", stdout);
    std::string element;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      element = rank_json(ranks[i]).dump(2);
      std::fputs(i ? ",\n    " : "    ", stdout);
      for (std::size_t from = 0; from < element.size();) {  // each line indented 4 more
        const std::size_t nl = std::min(element.find('\n', from), element.size() - 1);
        std::fwrite(element.data() + from, 1, nl + 1 - from, stdout);
        if (element[nl] == '\n') std::fputs("    ", stdout);
        from = nl + 1;
      }
    }
    std::fputs("\n  ]", stdout);
  }
  const std::size_t rest = at + quoted.size();
  std::fwrite(whole.data() + rest, 1, whole.size() - rest, stdout);
  std::fputc('\n', stdout);
}

void print_text(const TraceDir& d, const std::vector<RankStats>& ranks) {
  std::uint64_t events = 0, bytes = 0;
  for (const auto& r : ranks) events += r.events, bytes += r.trace_bytes;
  fmt::print("mstep stats: {} ({} ranks, {})\n", d.path, d.ranks.size(),
             trace_completeness(d).complete ? "complete" : "incomplete");
  if (!d.meta.command.empty()) fmt::print("command: {}\n", fmt::join(d.meta.command, " "));
  if (!d.meta.mpi_library.empty()) fmt::print("MPI: {}\n", d.meta.mpi_library);
  // "flush s" is not the same time with the writer thread: say which it is.
  if (d.meta.writer == "thread")
    fmt::print("frames: written by libmstep's writer thread (flush s: time a rank spent handing buffers over and waiting for it)\n");
  else if (d.meta.compress == "later")
    fmt::print("frames: compressed after the run (flush s: time a rank spent encoding and writing them, not compressing)\n");
  fmt::print("\n{:>5} {:>10} {:>7} {:>12} {:>8} {:>12} {:>12}  {}\n", "rank", "events", "steps",
             "trace bytes", "B/event", "MPI time s", "flush s", "status");
  for (const auto& r : ranks) {
    fmt::print("{:>5} {:>10} {:>7} {:>12} {:>8.2f} {:>12.6f} {:>12.6f}  {}\n", r.rank, r.events,
               r.steps, r.trace_bytes,
               r.events ? static_cast<double>(r.trace_bytes) / static_cast<double>(r.events) : 0.0,
               r.mpi_seconds, r.tool_seconds, r.status);
  }
  fmt::print("{:>5} {:>10} {:>7} {:>12} {:>8.2f}\n", "all", events, "", bytes,
             events ? static_cast<double>(bytes) / static_cast<double>(events) : 0.0);

  // Aggregate first (what users read), then each rank.
  std::array<OpTotals, kOpCount> all{};
  for (const auto& r : ranks)
    for (const auto& [op, o] : r.ops) {
      auto& a = all[static_cast<std::size_t>(op)];
      a.calls += o.calls, a.send_bytes += o.send_bytes, a.recv_bytes += o.recv_bytes, a.seconds += o.seconds;
    }
  auto table = [](const std::string& title, const std::vector<OpRow>& ops) {
    // 30: the longest name, MPI_Dist_graph_create_adjacent.
    fmt::print("\n{}\n{:<30} {:>10} {:>14} {:>14} {:>12}\n", title, "function", "calls",
               "bytes sent", "bytes recv", "time s");
    for (const auto& [op, o] : ops) {
      if (o.calls == 0 || op == Op::ToolFlush) continue;
      fmt::print("{:<30} {:>10} {:>14} {:>14} {:>12.6f}\n", mpi_name(op), o.calls, o.send_bytes, o.recv_bytes,
                 o.seconds);
    }
  };
  table("All ranks", op_rows(all));
  for (const auto& r : ranks) table(fmt::format("Rank {}", r.rank), r.ops);
}

}  // namespace

void add_stats(CLI::App& app) {
  struct Options {
    std::string dir;
    std::string format = "text";
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("stats", "Per rank and per MPI function: calls, bytes, time, M-steps");
  cmd->add_option("trace", o->dir, "Trace directory written by mstep record")->required();
  add_format_option(*cmd, o->format);
  cmd->callback([o] {
    TraceDir d = load_trace_dir(o->dir, std::nullopt, {}, true);  // the records are counted as they are read
    // Every rank has a row: a missing or unreadable one says so, with nothing counted.
    std::vector<RankStats> ranks;
    PackHolder pack;  // a packed trace's file opened once for its ranks, not once a rank
    for (std::size_t r = 0; r < d.ranks.size(); ++r) {
      if (d.ranks[r]) {
        pack.hold(d.ranks[r]->path);
        ranks.push_back(count(d, static_cast<int>(r)));
      } else {
        RankStats missing;
        missing.rank = static_cast<int>(r);
        missing.status = rank_state_name(d.states[r]);
        ranks.push_back(missing);
      }
    }
    if (o->format == "json") print_json(d, ranks);
    else print_text(d, ranks);
    report_problems(d);
  });
}

}  // namespace mstep::cli
