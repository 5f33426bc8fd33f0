#include "tools/calibrate/mpi_util.hpp"

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

namespace mstep::calib {

MpiSession::MpiSession(int& argc, char**& argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
}

MpiSession::~MpiSession() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

void MpiSession::abort(int code) {
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();  // not reached
}

int Comm::rank() const {
  int r = -1;
  MPI_Comm_rank(comm_, &r);
  return r;
}

int Comm::size() const {
  int s = 0;
  MPI_Comm_size(comm_, &s);
  return s;
}

Comm Comm::split(MPI_Comm parent, int color, int key) {
  MPI_Comm c = MPI_COMM_NULL;
  MPI_Comm_split(parent, color < 0 ? MPI_UNDEFINED : color, key, &c);
  return Comm(c);
}

Comm Comm::split_shared(MPI_Comm parent) {
  int rank = 0;
  MPI_Comm_rank(parent, &rank);
  MPI_Comm c = MPI_COMM_NULL;
  MPI_Comm_split_type(parent, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &c);
  return Comm(c);
}

void sleepy_barrier(MPI_Comm c) {
  MPI_Request req;
  MPI_Ibarrier(c, &req);
  for (;;) {
    int done = 0;
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (done) return;
    const timespec pause{0, 100000};
    nanosleep(&pause, nullptr);
  }
}

namespace {
std::vector<int> allowed_cpu_list() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  return cpus;
}
}  // namespace

int allowed_cpus() { return static_cast<int>(allowed_cpu_list().size()); }

std::string pin_to_cpu(int slot) {
  const std::vector<int> cpus = allowed_cpu_list();
  if (slot < 0 || cpus.size() < 2 || static_cast<std::size_t>(slot) >= cpus.size()) return {};
  cpu_set_t one;
  CPU_ZERO(&one);
  const int cpu = cpus[static_cast<std::size_t>(slot)];
  CPU_SET(cpu, &one);
  if (sched_setaffinity(0, sizeof one, &one) != 0) return {};
  return fmt::format("cpu {}", cpu);
}

std::string processor_name() {
  char name[MPI_MAX_PROCESSOR_NAME + 1] = {};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  return std::string(name, static_cast<std::size_t>(std::max(0, len)));
}

std::vector<std::string> allgather_strings(const std::string& mine, MPI_Comm c) {
  constexpr std::size_t kWidth = 256;
  int size = 0;
  MPI_Comm_size(c, &size);
  std::vector<char> out(kWidth), all(kWidth * static_cast<std::size_t>(size));
  std::memcpy(out.data(), mine.data(), std::min(mine.size(), kWidth - 1));
  MPI_Allgather(out.data(), static_cast<int>(kWidth), MPI_CHAR, all.data(), static_cast<int>(kWidth),
                MPI_CHAR, c);
  std::vector<std::string> result;
  for (int i = 0; i < size; ++i) result.emplace_back(all.data() + static_cast<std::size_t>(i) * kWidth);
  return result;
}

std::string mpi_library() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING + 1] = {};
  int len = 0;
  MPI_Get_library_version(text, &len);
  std::string s(text, static_cast<std::size_t>(std::max(0, len)));
  if (const auto nl = s.find('\n'); nl != std::string::npos) s.resize(nl);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.pop_back();
  return s;
}

std::string mpi_standard_version() {
  int major = 0, minor = 0;
  MPI_Get_version(&major, &minor);
  return fmt::format("MPI {}.{}", major, minor);
}

}  // namespace mstep::calib
