// Small MPI helpers for mstep_calib: RAII for the MPI session and communicators, timing, sample
// sets and the pinning of ranks to CPUs.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace mstep::calib {

// MPI_Init_thread / MPI_Finalize. An exception that escapes main() on any rank should end the
// whole job, not leave the others waiting: abort() calls MPI_Abort.
class MpiSession {
 public:
  MpiSession(int& argc, char**& argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  [[noreturn]] static void abort(int code);
};

// An owned communicator, freed on destruction (MPI_COMM_NULL: none).
class Comm {
 public:
  Comm() = default;
  explicit Comm(MPI_Comm c) : comm_(c) {}
  ~Comm() { reset(); }
  Comm(Comm&& o) noexcept : comm_(std::exchange(o.comm_, MPI_COMM_NULL)) {}
  Comm& operator=(Comm&& o) noexcept {
    if (this != &o) reset(), comm_ = std::exchange(o.comm_, MPI_COMM_NULL);
    return *this;
  }
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  MPI_Comm get() const { return comm_; }
  explicit operator bool() const { return comm_ != MPI_COMM_NULL; }
  int rank() const;
  int size() const;

  // MPI_Comm_split of `parent`; color < 0 means MPI_UNDEFINED (the result is empty).
  static Comm split(MPI_Comm parent, int color, int key);
  static Comm split_shared(MPI_Comm parent);

 private:
  void reset() {
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
    comm_ = MPI_COMM_NULL;
  }
  MPI_Comm comm_ = MPI_COMM_NULL;
};

inline double now() { return MPI_Wtime(); }

// Busy-wait (no sleeping: a sleeping process would be scheduled out and the measured times would
// include its wake-up).
inline void spin(double seconds) {
  const double until = MPI_Wtime() + seconds;
  while (MPI_Wtime() < until) {
  }
}

// A barrier that sleeps while it waits (MPI_Ibarrier, then MPI_Test every 100 us): ranks with
// nothing to do must not busy-poll the CPUs that the measuring ranks need.
void sleepy_barrier(MPI_Comm c);

// Blocking byte messages on a communicator.
inline void send(const void* buf, std::uint64_t bytes, int to, int tag, MPI_Comm c) {
  MPI_Send(buf, static_cast<int>(bytes), MPI_BYTE, to, tag, c);
}
inline void recv(void* buf, std::uint64_t bytes, int from, int tag, MPI_Comm c) {
  MPI_Recv(buf, static_cast<int>(bytes), MPI_BYTE, from, tag, c, MPI_STATUS_IGNORE);
}

// Repeated timings, kept per key until they are summarised.
template <typename Key>
class Samples {
 public:
  void add(const Key& k, double v) { data_[k].push_back(v); }
  const std::vector<double>& get(const Key& k) const {
    static const std::vector<double> none;
    const auto it = data_.find(k);
    return it == data_.end() ? none : it->second;
  }

 private:
  std::map<Key, std::vector<double>> data_;
};

// How many CPUs this process may run on.
int allowed_cpus();

// Pin the calling process to the slot-th CPU of its allowed set (if it has more than one and
// slot is within it). Returns a description, "" if not pinned. Two ranks that busy-poll must not
// share a CPU: the scheduler sometimes puts them on one, and every message then waits for a time
// slice.
std::string pin_to_cpu(int slot);

// The host name of this rank (MPI_Get_processor_name).
std::string processor_name();

// Every rank's string, on every rank (fixed-width MPI_Allgather; longer strings are cut).
std::vector<std::string> allgather_strings(const std::string& mine, MPI_Comm c);

// The first line of MPI_Get_library_version, and "MPI x.y".
std::string mpi_library();
std::string mpi_standard_version();

}  // namespace mstep::calib
