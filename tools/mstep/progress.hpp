// A progress bar on stderr for work that takes a while (reading a large trace, writing a synthetic
// one): drawn only when stderr is a terminal and the work has run for 2 seconds, redrawn at most
// ten times a second, and erased when done, so that piped output and quick runs see nothing.
// MSTEP_PROGRESS_AFTER=SECONDS changes the 2 seconds (the tests set 0).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace mstep::cli {

class Progress {
 public:
  Progress(std::string what, std::uint64_t total);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  void update(std::uint64_t done);

 private:
  std::string what_;
  std::uint64_t total_;
  bool enabled_;
  bool drawn_ = false;
  double after_s_ = 2.0;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace mstep::cli
