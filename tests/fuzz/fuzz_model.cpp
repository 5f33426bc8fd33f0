// libFuzzer target for the analyses (model/): the fuzzer's bytes become a small run of 2 to 4
// ranks, written as a real trace directory (write_rank_trace, meta.json) and read back by the same
// reader `mstep report` uses, then reported whole and streamed with every model, and exported as
// GOAL. Whatever the records say (receives nobody sent, sends nobody receives, collectives some
// ranks skip, continuation records where there is nothing to continue, requests completed twice or
// never), each analysis must end in a result or an exception the command line turns into one line
// (std::exception) — never a crash, undefined behaviour, a hang or a huge allocation.
//
// Built with clang (-fsanitize=fuzzer,address,undefined) by tests/fuzz/long_fuzz.sh, not by the
// project's build: it compiles all of model/ and format/ again with the sanitizers.
//
// Input: byte 0 picks the number of ranks (modulo 3), the rendezvous model (its quotient by 3,
// modulo 3), a packed directory or a file per rank (its quotient by 9, modulo 2) and, for a file per
// rank, a world of 64 of which only those ranks left a trace (its quotient by 18, modulo 2: the
// world's collectives then name MPI_COMM_WORLD in their steps, trace format 3, and 60-62 ranks are
// missing); then 8 bytes a record:
//   0 rank   1 operation   2 peer (any source, none, or a rank)   3 tag (bits 0-1) and flags (3-7)
//   4 size   5 request id (bits 0-2) and mode flags (6-7)  6 computation before the call
//   7 time in the call
#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "format/pack_index.hpp"
#include "format/rank_trace.hpp"
#include "format/trace_format.hpp"
#include "model/analysis/report.hpp"
#include "model/export/goal.hpp"
#include "model/params/params.hpp"

namespace {

using namespace mstep;
namespace fs = std::filesystem;

// The rendezvous three ways (LogGPSParams): MODELS.md's; delivered, with the receiver's progress;
// and pushing, with the sender's too, with calibrated collectives and exchange (positive and
// negative residuals). Picked by the input's first byte.
const model::CalibrationParams& params(std::uint8_t pick) {
  static const model::CalibrationParams p[3] = {
      model::parse_params(
          R"({"L": 2e-7, "o": 2e-7, "Os": 1e-8, "Or": 1e-8, "g": 2e-7, "Gs": 1e-10, "Gl": 2e-10,
          "s": 8256, "S": 8256, "mpm": {"g": 1e-10, "L": 1e-6},
          "linear": {"boundary": 8256, "below": {"T0": 6e-7, "B": 1e10}, "above": {"T0": 2e-6, "B": 1e10}}})",
          "fuzz-params"),
      model::parse_params(
          R"({"L": 2e-7, "o": 2e-7, "Os": 1e-8, "Or": 1e-8, "g": 2e-7, "Gs": 1e-10, "Gl": 2e-10,
          "s": 8256, "S": 8256, "H": 2e-6, "rendezvous": "delivered", "rendezvous_push": false})",
          "fuzz-params-delivered"),
      model::parse_params(
          R"({"L": 2e-7, "o": 2e-7, "Os": 1e-8, "Or": 1e-8, "g": 2e-7, "Gs": 1e-10, "Gl": 2e-10,
          "s": 4096, "S": 8256, "H": 3e-5, "rendezvous": "delivered", "rendezvous_push": true,
          "mpm": {"g": 1e-10, "L": 1e-6},
          "collectives": {"MPI_Sendrecv": {"bytes": [8, 8256], "measured_s": [7e-6, 6e-5], "model_s": [5e-6, 4e-5]},
                          "MPI_Allreduce": {"bytes": [8], "measured_s": [1e-7], "model_s": [9e-7]},
                          "MPI_Barrier": {"bytes": [0], "measured_s": [2e-6], "model_s": [1e-6]}}})",
          "fuzz-params-push")};
  return p[(pick / 3) % 3];
}

Event record(Op op, std::uint64_t enter, std::uint64_t exit) {
  Event e;
  e.op = op;
  e.t_enter = enter;
  e.t_exit = exit;
  return e;
}

// The run the bytes describe, one RankTrace a rank.
// `world_size`: n, or more (ranks n.. of the world left no trace).
std::vector<RankTrace> run_of(const std::uint8_t* data, std::size_t size, int world_size) {
  const int n = 2 + data[0] % 3;
  const auto un = static_cast<std::size_t>(n);
  std::vector<RankTrace> ranks(un);
  std::vector<std::uint64_t> now(un, 1'000'000);
  const MemberList world = MemberList::identity(static_cast<std::size_t>(world_size));
  for (int r = 0; r < n; ++r) {
    RankTrace& t = ranks[static_cast<std::size_t>(r)];
    t.path = "fuzz";
    t.header.rank = r;
    t.header.world_size = world_size;
    t.header.clock_kind = 1;
    t.header.ticks_per_second = 1e9;
    t.comms.push_back(CommDef{0, false, world});
    t.end = TraceEnd::Complete;
    t.events.push_back(record(Op::Init, 500'000, 1'000'000));
  }
  for (std::size_t at = 1; at + 8 <= size; at += 8) {
    const std::uint8_t* b = data + at;
    const auto r = static_cast<std::size_t>(b[0] % n);
    RankTrace& t = ranks[r];
    const auto code = static_cast<std::uint8_t>(b[1] % kOpCount);
    const Op op = static_cast<Op>(code);
    if (op == Op::Init || op == Op::Init_thread || op == Op::Finalize) continue;
    Event e;
    e.op = op;
    e.peer = static_cast<std::int32_t>(b[2] % (n + 2)) - 2;  // kAnySource, kNoPeer, 0..n-1
    e.tag = (b[3] & 3) == 3 ? kNeighborTag : b[3] & 3;
    e.flags = static_cast<std::uint8_t>(b[3] >> 3);  // continuation, receive half, root, incomplete, collective done
    const std::uint64_t bytes = b[4] < 200 ? std::uint64_t{b[4]} * 8 : std::uint64_t{b[4] - 200u} * 4096;
    e.request = b[5] % 8;
    e.flags |= static_cast<std::uint8_t>((b[5] >> 6) << 5);  // a started persistent send's mode
    const Role role = event_role(e);  // a Start's flags say what it starts
    const bool receives = role == Role::Recv || ((role == Role::Complete || role == Role::SendRecv) && (e.flags & kRecvHalf)) ||
                          role == Role::CollRootOut || role == Role::CollRootIn || role == Role::CollAll;
    const bool sends = role == Role::Send || role == Role::Isend || (role == Role::SendRecv && !(e.flags & kRecvHalf)) ||
                       role == Role::CollRootOut || role == Role::CollRootIn || role == Role::CollAll;
    e.send_bytes = sends ? bytes : 0;
    e.recv_bytes = receives ? bytes : 0;
    if (e.continuation()) {
      // A continuation shares its call's times.
      e.t_enter = t.events.back().t_enter;
      e.t_exit = t.events.back().t_exit;
    } else {
      e.t_enter = now[r] + std::uint64_t{b[6]} * 100;
      e.t_exit = e.t_enter + std::uint64_t{b[7]} * 50;
      now[r] = e.t_exit;
    }
    t.events.push_back(e);
  }
  for (std::size_t r = 0; r < un; ++r) {
    RankTrace& t = ranks[r];
    t.events.push_back(record(Op::Finalize, now[r] + 500, now[r] + 1500));
    t.event_thread.assign(t.events.size(), 0);
    t.clocks.push_back(ClockSync{ClockSync::AtInit, 1'000'000, 1'000'000, 0, 1000});
    t.clocks.push_back(ClockSync{ClockSync::AtFinalize, now[r] + 1500, static_cast<std::int64_t>(now[r] + 1500), 0, 1000});
  }
  return ranks;
}

// `packed`: every rank's stream in one pack file with an index (share/trace-format.md), as
// `mstep synth --pack` writes them; else a file per rank.
void write_trace(const fs::path& dir, const std::vector<RankTrace>& ranks, bool packed, int world_size) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::vector<PackEntry> packs;
  for (const RankTrace& t : ranks) {
    if (!packed) {
      write_rank_trace((dir / rank_file_name(t.header.rank)).string(), t, 64);
      continue;
    }
    packs.push_back(append_rank_to_pack(dir.string(), 0, t, 64));
  }
  if (packed) write_pack_index((dir / kPackIndexName).string(), packs);
  std::ofstream(dir / kMetaFileName) << R"({"format_version": )" << kTraceVersion
                                     << (packed ? R"(, "packed": {"ranks_per_file": 4})" : "") << R"(, "ranks": )" << world_size
                                     << R"(, "command": ["fuzz"], "mpi_library": "none", "hosts": ["fuzz"],)"
                                     << R"( "clock": "monotonic", "ticks_per_second": 1e9, "stack_depth": 1,)"
                                     << R"( "complete": true, "write_failed_ranks": 0})" << "\n";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 9 || size > 8 * 4096) return 0;
  // /dev/shm: every input is a trace directory written and read back.
  static const fs::path dir = fs::path(fs::exists("/dev/shm") ? "/dev/shm" : "/tmp") /
                              ("mstep-fuzz-model-" + std::to_string(::getpid()));
  try {
    const bool packed = (data[0] / 9) % 2 == 1;
    const int world_size = !packed && (data[0] / 18) % 2 == 1 ? 64 : 2 + data[0] % 3;
    write_trace(dir, run_of(data, size, world_size), packed, world_size);
  } catch (const std::exception&) {
    return 0;  // the writer refused the records: nothing to analyse
  }
  try {
    const TraceDir whole = load_trace_dir(dir.string());
    (void)model::build_report(whole, &params(data[0]));
    (void)model::build_report(whole, nullptr);
    std::ostringstream goal;
    (void)model::write_goal(whole, goal);
  } catch (const std::exception&) {
  }
  try {
    const TraceDir meta = load_trace_dir(dir.string(), std::nullopt, {}, true);
    if (model::can_stream(meta)) (void)model::build_report_streamed(meta, &params(data[0]), 10, 1);
  } catch (const std::exception&) {
  }
  return 0;
}
