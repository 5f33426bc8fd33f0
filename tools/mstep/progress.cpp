#include "tools/mstep/progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

namespace mstep::cli {

Progress::Progress(std::string what, std::uint64_t total)
    : what_(std::move(what)), total_(total), enabled_(::isatty(STDERR_FILENO) == 1 && total > 0),
      start_(std::chrono::steady_clock::now()), last_(start_) {
  if (const char* v = std::getenv("MSTEP_PROGRESS_AFTER")) {
    char* end = nullptr;
    const double s = std::strtod(v, &end);
    if (end != v && s >= 0) after_s_ = s;
  }
}

Progress::~Progress() {
  if (drawn_) std::fprintf(stderr, "\r%*s\r", 79, "");
}

void Progress::update(std::uint64_t done) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (std::chrono::duration<double>(now - start_).count() < after_s_) return;
  if (drawn_ && now - last_ < std::chrono::milliseconds(100) && done < total_) return;
  last_ = now;
  constexpr int kWidth = 30;
  const double f = std::min(1.0, static_cast<double>(done) / static_cast<double>(total_));
  const int full = static_cast<int>(f * kWidth);
  const std::string line = fmt::format("\r{} [{}{}] {:3.0f}% ({} of {})", what_, std::string(full, '#'),
                                       std::string(kWidth - full, ' '), f * 100, done, total_);
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace mstep::cli
