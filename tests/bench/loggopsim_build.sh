# Sourced by loggopsim_check.sh and loggopsim_speed.sh: builds LogGOPSim's txt2bin and LogGOPSim
# into a folder, the way its CMakeLists does, without its Fortran/MPI/Clang parts.
#   build_loggopsim NAME SRC WORK   (NAME: the calling script, for its messages; SRC: its
#   src/LogGOPSim folder; WORK: where the binaries go). Needs g++, gengetopt, re2c, libgraphviz-dev.
build_loggopsim() {
  local name=$1 src=$2 work=$3
  [[ -f $src/LogGOPSim.cpp ]] || { echo "$name: $src/LogGOPSim.cpp not found" >&2; exit 1; }
  cp "$src"/*.cpp "$src"/*.hpp "$src"/*.ggo "$src"/*.re "$work"/
  (
    cd "$work"
    gengetopt -i loggopsim_cmdline.ggo -F loggopsim_cmdline
    gengetopt -i txt2bin_cmdline.ggo -F txt2bin_cmdline
    re2c -o txt2bin.cpp txt2bin.re
    g++ -O2 -std=c++11 -o txt2bin txt2bin.cpp txt2bin_cmdline.c
    g++ -O2 -std=c++11 -I/usr/include/graphviz -o LogGOPSim LogGOPSim.cpp loggopsim_cmdline.c -lcgraph
  ) >"$work/build.log" 2>&1 || { echo "$name: building LogGOPSim failed, see:" >&2; tail -20 "$work/build.log" >&2; exit 1; }
}
