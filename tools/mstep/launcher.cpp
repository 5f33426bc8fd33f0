#include "tools/mstep/launcher.hpp"

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace mstep::cli {

std::string default_launcher() {
  if (const char* env = std::getenv("MSTEP_MPIEXEC"); env && *env) return env;
  std::error_code ec;
  if (std::filesystem::exists(MSTEP_DEFAULT_MPIEXEC, ec)) return MSTEP_DEFAULT_MPIEXEC;
  return "mpiexec.mpich";
}

}  // namespace mstep::cli
