#include "interpose/run_info.hpp"

#include <climits>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <unistd.h>

#include <fmt/format.h>

#include "interpose/clock.hpp"

namespace mstep {
namespace {

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", static_cast<int>(c));
        else out += c;
    }
  }
  return out + "\"";
}

std::string json_list(const std::vector<std::string>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + json_string(v[i]);
  return out + "]";
}

constexpr int kSyncRounds = 8;
constexpr int kSyncTag = 7011;

}  // namespace

bool write_run_info(const std::string& path, const RunInfo& info) {
  std::string environment;
  for (const auto& [k, v] : info.environment)
    environment += fmt::format("{}{}: {}", environment.empty() ? "" : ", ", json_string(k), json_string(v));
  const std::string text = fmt::format(
      "{{\n  \"format_version\": {},\n  \"ranks\": {},\n  \"command\": {},\n"
      "  \"mpi_library\": {},\n  \"hosts\": {},\n  \"clock\": {},\n  \"ticks_per_second\": {:.1f},\n"
      "  \"stack_depth\": {},\n  \"writer\": {},\n  \"compress\": {},\n  \"environment\": {{{}}},\n{}{}  \"complete\": {},\n"
      "  \"write_failed_ranks\": {}\n}}\n",
      kTraceVersion, info.ranks, json_list(info.command), json_string(info.mpi_library),
      json_list(info.hosts), json_string(info.clock), info.ticks_per_second, info.stack_depth,
      json_string(info.writer.empty() ? "inline" : info.writer),
      json_string(info.compress.empty() ? "now" : info.compress), environment,
      info.delay.empty() ? std::string() : fmt::format("  \"delay\": {},\n", info.delay),
      info.collectives.empty() ? std::string() : fmt::format("  \"collectives\": {},\n", info.collectives),
      info.complete ? "true" : "false", info.write_failed_ranks);
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (!f) return false;
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const bool closed = std::fclose(f) == 0;
  if (written && closed && std::rename(tmp.c_str(), path.c_str()) == 0) return true;
  const int err = errno;
  std::remove(tmp.c_str());  // a full disk must not leave meta.json.tmp behind
  errno = err;
  return false;
}

std::string program_name() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "app";
  std::string path(buf, static_cast<std::size_t>(n));
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::vector<std::string> command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  std::size_t start = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i] == '\0') {
      args.push_back(all.substr(start, i - start));
      start = i + 1;
    }
  }
  return args;
}

std::string mpi_library_version() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  PMPI_Get_library_version(version, &len);
  std::string v(version, static_cast<std::size_t>(std::max(len, 0)));
  if (const auto nl = v.find('\n'); nl != std::string::npos) v.resize(nl);
  return v;
}

std::vector<std::string> gather_hosts(MPI_Comm comm, int rank, int size) {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  PMPI_Get_processor_name(name, &len);
  std::vector<char> all(rank == 0 ? static_cast<std::size_t>(size) * MPI_MAX_PROCESSOR_NAME : 1);
  PMPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, comm);
  std::vector<std::string> hosts;
  if (rank != 0) return hosts;
  for (int r = 0; r < size; ++r) {
    const char* h = all.data() + static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME;
    hosts.emplace_back(h, strnlen(h, MPI_MAX_PROCESSOR_NAME));
  }
  return hosts;
}

bool on_rank0_host(MPI_Comm comm, int rank) {
  char name[MPI_MAX_PROCESSOR_NAME] = {}, root[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  PMPI_Get_processor_name(name, &len);
  if (rank == 0) std::memcpy(root, name, sizeof root);
  PMPI_Bcast(root, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, comm);
  return std::strncmp(name, root, MPI_MAX_PROCESSOR_NAME) == 0;
}

ClockSync sync_clock_with_rank0(MPI_Comm comm, int rank, int size, ClockSync::When when) {
  ClockSync sync;
  sync.when = when;
  if (rank == 0) {
    // Serve every other rank in turn: answer each ping with rank 0's time.
    for (int peer = 1; peer < size; ++peer) {
      for (int round = 0; round < kSyncRounds; ++round) {
        std::int64_t ping = 0;
        PMPI_Recv(&ping, 1, MPI_INT64_T, peer, kSyncTag, comm, MPI_STATUS_IGNORE);
        const std::int64_t now = monotonic_ns();
        PMPI_Send(&now, 1, MPI_INT64_T, peer, kSyncTag, comm);
      }
    }
  } else {
    sync.rtt_ns = INT64_MAX;
    for (int round = 0; round < kSyncRounds; ++round) {
      const std::int64_t t1 = monotonic_ns();
      std::int64_t remote = 0;
      PMPI_Send(&t1, 1, MPI_INT64_T, 0, kSyncTag, comm);
      PMPI_Recv(&remote, 1, MPI_INT64_T, 0, kSyncTag, comm, MPI_STATUS_IGNORE);
      const std::int64_t t2 = monotonic_ns();
      if (t2 - t1 < sync.rtt_ns) {
        sync.rtt_ns = t2 - t1;
        sync.offset_ns = remote - (t1 + t2) / 2;
      }
    }
  }
  // The (ticks, ns) pair that ties this rank's event clock to CLOCK_MONOTONIC.
  sync.ns = monotonic_ns();
  sync.ticks = now_ticks();
  return sync;
}

}  // namespace mstep
