// The MPI launcher that `mstep calibrate` and `mstep validate` start when none is given.
#pragma once

#include <string>

namespace mstep::cli {

// $MSTEP_MPIEXEC where set (a name looked up in PATH, or a path); else the mpiexec.mpich found when
// mstep was built, where it still exists; else "mpiexec.mpich" looked up in PATH (an mstep copied to
// a machine whose MPICH lives elsewhere).
std::string default_launcher();

}  // namespace mstep::cli
