/* plugin_host: a C MPI program that loads Fortran MPI code with dlopen(RTLD_LOCAL) after MPI_Init
 * and calls it (fortran_plugin.f90), as Python loads an extension module.
 * Usage: plugin_host LIBRARY   (2 ranks)
 *
 * MPI calls per rank (asserted in test_corners_languages.cpp; keep in step): MPI_Init, the
 * plugin's (see fortran_plugin.f90), MPI_Finalize. Exits with status 1 if the library or its
 * function cannot be loaded. */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  void* library = argc > 1 ? dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) : NULL;
  if (!library) {
    fprintf(stderr, "plugin_host: %s\n", argc > 1 ? dlerror() : "usage: plugin_host LIBRARY");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  void (*plugin)(int) = (void (*)(int))dlsym(library, "fortran_plugin");
  if (!plugin) {
    fprintf(stderr, "plugin_host: %s\n", dlerror());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  plugin(rank);
  MPI_Finalize();
  return 0;
}
