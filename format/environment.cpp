#include "format/environment.hpp"

#include <set>

#include <fmt/format.h>

extern char** environ;

namespace mstep {

MpiEnvironment mpi_environment() {
  MpiEnvironment env;
  for (char** e = environ; e && *e; ++e) {
    const std::string kv = *e;
    const auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    const std::string k = kv.substr(0, eq);
    if (k == "MPIR_CVAR_CH3_INTERFACE_HOSTNAME") continue;  // set by the launcher for every rank
    if (k.rfind("UCX_", 0) == 0 || k.rfind("MPIR_CVAR_", 0) == 0 || k.rfind("MPICH_", 0) == 0)
      env[k] = kv.substr(eq + 1);
  }
  return env;
}

std::string environment_differences(const MpiEnvironment& a, const MpiEnvironment& b, const char* a_name,
                                    const char* b_name) {
  std::set<std::string> keys;
  for (const auto& [k, v] : a) keys.insert(k);
  for (const auto& [k, v] : b) keys.insert(k);
  std::string out;
  for (const auto& k : keys) {
    const auto ia = a.find(k), ib = b.find(k);
    const std::string va = ia == a.end() ? "unset" : ia->second, vb = ib == b.end() ? "unset" : ib->second;
    if (va == vb) continue;
    out += fmt::format("{}{} {} in {}, {} in {}", out.empty() ? "" : "; ", k, va, a_name, vb, b_name);
  }
  return out;
}

}  // namespace mstep
