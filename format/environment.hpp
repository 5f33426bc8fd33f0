// The settings of a process's environment that change what MPI does: UCX_* (transports,
// protocol thresholds), MPIR_CVAR_* and MPICH_*. Recorded by the calibration (params.json,
// meta.environment) and by the recorder (meta.json, "environment"), so that `mstep report` can
// say when a trace and its parameters come from different networks.
#pragma once

#include <map>
#include <string>

namespace mstep {

using MpiEnvironment = std::map<std::string, std::string>;

// This process's UCX_*, MPIR_CVAR_* and MPICH_* variables (not the ones the launcher sets for
// every rank, which say nothing of the network).
MpiEnvironment mpi_environment();

// One line naming every variable whose value differs ("UCX_TLS: tcp,self here, unset there"),
// empty when they agree. `here` and `there` name the two sides.
std::string environment_differences(const MpiEnvironment& a, const MpiEnvironment& b, const char* a_name,
                                    const char* b_name);

}  // namespace mstep
