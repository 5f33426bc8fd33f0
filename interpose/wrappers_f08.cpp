// Fortran 2008 (`use mpi_f08`) entry points that bypass MPI_*. MPICH 4.0.2's mpi_f08 bindings
// call MPI_Send, MPI_Bcast and the other functions with a buffer through their MPI_* names, which
// libmstep wraps, but the 66 without one (MPI_Init, MPI_Finalize, the Wait and Test families,
// MPI_Barrier, communicator and window creation, ...) straight through PMPI_*: a `use mpi_f08`
// program was not recorded at all (no MPI_Init seen). libmstep defines those Fortran symbols
// (mpi_<name>_f08_, exported by exports.map) and forwards each to its own MPI_* wrapper with the
// arguments as MPICH's binding passes them to PMPI: handles are Fortran integers (the C handle in
// MPICH, MPI_File converted), a TYPE(MPI_Status) is a C MPI_Status, MPI_STATUS(ES)_IGNORE is the
// address of MPICH's Fortran object, LOGICAL is gfortran's (0 false, 1 true), and an absent
// optional ierror is a null pointer. What each returns is what MPICH's own returns, to the index:
// MPICH 4.0.2's mpi_f08 MPI_Waitany, MPI_Testany, MPI_Waitsome and MPI_Testsome return C's
// 0-based indices (the standard has 1-based; seen with a test program), and so do these.
// Each notes its caller first (interpose/fortran_caller.hpp): the wrapper's own return address
// lies in libmstep, and the record's call site is the Fortran line.
#include <mpi.h>

#include <cstddef>
#include <string>
#include <vector>

#include "interpose/fortran_caller.hpp"

namespace {

static_assert(sizeof(MPI_Status) == sizeof(MPI_F08_status), "MPICH: a TYPE(MPI_Status) is a C MPI_Status");
static_assert(sizeof(MPI_Fint) == sizeof(int), "MPICH: Fortran handles are C ints");

constexpr MPI_Fint kTrue = 1;  // gfortran's .TRUE.

void set_error(MPI_Fint* ierror, int rc) {
  if (ierror) *ierror = rc;
}

MPI_Status* status_of(MPI_Status* status) {
  const void* p = status;
  return p == MPI_F08_STATUS_IGNORE || p == &MPIR_F08_MPI_STATUS_IGNORE_OBJ ? MPI_STATUS_IGNORE : status;
}

MPI_Status* statuses_of(MPI_Status* statuses) {
  const void* p = statuses;
  return p == MPI_F08_STATUSES_IGNORE || p == MPIR_F08_MPI_STATUSES_IGNORE_OBJ ? MPI_STATUSES_IGNORE : statuses;
}

MPI_Fint logical(int flag) { return flag ? kTrue : 0; }

// A Fortran string as MPICH's binding passes it to C: leading and trailing blanks trimmed.
std::string c_string(const char* s, std::size_t length) {
  std::size_t b = 0, e = length;
  while (b < e && s[b] == ' ') ++b;
  while (e > b && s[e - 1] == ' ') --e;
  return std::string(s + b, e - b);
}

std::vector<int> logicals(const MPI_Fint* values, int n) {
  std::vector<int> out(n > 0 ? static_cast<std::size_t>(n) : 0);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = values[i] != 0;
  return out;
}

}  // namespace

extern "C" {

// Environment.
void mpi_init_f08_(MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Init(nullptr, nullptr));
}
void mpi_init_thread_f08_(const MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Init_thread(nullptr, nullptr, *required, provided));
}
void mpi_finalize_f08_(MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Finalize());
}
void mpi_abort_f08_(const MPI_Fint* comm, const MPI_Fint* errorcode, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Abort(MPI_Comm_f2c(*comm), *errorcode));
}

// Completion.
void mpi_wait_f08_(MPI_Fint* request, MPI_Status* status, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Wait(request, status_of(status)));
}
void mpi_test_f08_(MPI_Fint* request, MPI_Fint* flag, MPI_Status* status, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  int f = 0;
  const int rc = MPI_Test(request, &f, status_of(status));
  *flag = logical(f);
  set_error(ierror, rc);
}
void mpi_waitall_f08_(const MPI_Fint* count, MPI_Fint* requests, MPI_Status* statuses, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Waitall(*count, requests, statuses_of(statuses)));
}
void mpi_testall_f08_(const MPI_Fint* count, MPI_Fint* requests, MPI_Fint* flag, MPI_Status* statuses,
                      MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  int f = 0;
  const int rc = MPI_Testall(*count, requests, &f, statuses_of(statuses));
  *flag = logical(f);
  set_error(ierror, rc);
}
void mpi_waitany_f08_(const MPI_Fint* count, MPI_Fint* requests, MPI_Fint* index, MPI_Status* status,
                      MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Waitany(*count, requests, index, status_of(status)));
}
void mpi_testany_f08_(const MPI_Fint* count, MPI_Fint* requests, MPI_Fint* index, MPI_Fint* flag,
                      MPI_Status* status, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  int f = 0;
  const int rc = MPI_Testany(*count, requests, index, &f, status_of(status));
  *flag = logical(f);
  set_error(ierror, rc);
}
void mpi_waitsome_f08_(const MPI_Fint* incount, MPI_Fint* requests, MPI_Fint* outcount, MPI_Fint* indices,
                       MPI_Status* statuses, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Waitsome(*incount, requests, outcount, indices, statuses_of(statuses)));
}
void mpi_testsome_f08_(const MPI_Fint* incount, MPI_Fint* requests, MPI_Fint* outcount, MPI_Fint* indices,
                       MPI_Status* statuses, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Testsome(*incount, requests, outcount, indices, statuses_of(statuses)));
}

// Requests.
void mpi_start_f08_(MPI_Fint* request, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Start(request));
}
void mpi_startall_f08_(const MPI_Fint* count, MPI_Fint* requests, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Startall(*count, requests));
}
void mpi_request_free_f08_(MPI_Fint* request, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Request_free(request));
}
void mpi_cancel_f08_(MPI_Fint* request, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Cancel(request));
}

// Probes.
void mpi_probe_f08_(const MPI_Fint* source, const MPI_Fint* tag, const MPI_Fint* comm, MPI_Status* status,
                    MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Probe(*source, *tag, MPI_Comm_f2c(*comm), status_of(status)));
}
void mpi_iprobe_f08_(const MPI_Fint* source, const MPI_Fint* tag, const MPI_Fint* comm, MPI_Fint* flag,
                     MPI_Status* status, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  int f = 0;
  const int rc = MPI_Iprobe(*source, *tag, MPI_Comm_f2c(*comm), &f, status_of(status));
  *flag = logical(f);
  set_error(ierror, rc);
}
void mpi_mprobe_f08_(const MPI_Fint* source, const MPI_Fint* tag, const MPI_Fint* comm, MPI_Fint* message,
                     MPI_Status* status, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Mprobe(*source, *tag, MPI_Comm_f2c(*comm), message, status_of(status)));
}
void mpi_improbe_f08_(const MPI_Fint* source, const MPI_Fint* tag, const MPI_Fint* comm, MPI_Fint* flag,
                      MPI_Fint* message, MPI_Status* status, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  int f = 0;
  const int rc = MPI_Improbe(*source, *tag, MPI_Comm_f2c(*comm), &f, message, status_of(status));
  *flag = logical(f);
  set_error(ierror, rc);
}

// Collectives without a buffer.
void mpi_barrier_f08_(const MPI_Fint* comm, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Barrier(MPI_Comm_f2c(*comm)));
}
void mpi_ibarrier_f08_(const MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Ibarrier(MPI_Comm_f2c(*comm), request));
}
void mpi_barrier_init_f08_(const MPI_Fint* comm, const MPI_Fint* info, MPI_Fint* request, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Barrier_init(MPI_Comm_f2c(*comm), MPI_Info_f2c(*info), request));
}

// Communicators.
void mpi_comm_dup_f08_(const MPI_Fint* comm, MPI_Fint* newcomm, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Comm_dup(MPI_Comm_f2c(*comm), newcomm));
}
void mpi_comm_dup_with_info_f08_(const MPI_Fint* comm, const MPI_Fint* info, MPI_Fint* newcomm, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Comm_dup_with_info(MPI_Comm_f2c(*comm), MPI_Info_f2c(*info), newcomm));
}
void mpi_comm_idup_f08_(const MPI_Fint* comm, MPI_Fint* newcomm, MPI_Fint* request, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Comm_idup(MPI_Comm_f2c(*comm), newcomm, request));
}
void mpi_comm_idup_with_info_f08_(const MPI_Fint* comm, const MPI_Fint* info, MPI_Fint* newcomm, MPI_Fint* request,
                                  MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Comm_idup_with_info(MPI_Comm_f2c(*comm), MPI_Info_f2c(*info), newcomm, request));
}
void mpi_comm_split_f08_(const MPI_Fint* comm, const MPI_Fint* color, const MPI_Fint* key, MPI_Fint* newcomm,
                         MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Comm_split(MPI_Comm_f2c(*comm), *color, *key, newcomm));
}
void mpi_comm_split_type_f08_(const MPI_Fint* comm, const MPI_Fint* split_type, const MPI_Fint* key,
                              const MPI_Fint* info, MPI_Fint* newcomm, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Comm_split_type(MPI_Comm_f2c(*comm), *split_type, *key, MPI_Info_f2c(*info), newcomm));
}
void mpi_comm_create_f08_(const MPI_Fint* comm, const MPI_Fint* group, MPI_Fint* newcomm, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Comm_create(MPI_Comm_f2c(*comm), MPI_Group_f2c(*group), newcomm));
}
void mpi_comm_create_group_f08_(const MPI_Fint* comm, const MPI_Fint* group, const MPI_Fint* tag, MPI_Fint* newcomm,
                                MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Comm_create_group(MPI_Comm_f2c(*comm), MPI_Group_f2c(*group), *tag, newcomm));
}
void mpi_comm_free_f08_(MPI_Fint* comm, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Comm_free(comm));
}
void mpi_cart_create_f08_(const MPI_Fint* comm_old, const MPI_Fint* ndims, const MPI_Fint* dims,
                          const MPI_Fint* periods, const MPI_Fint* reorder, MPI_Fint* comm_cart, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  const std::vector<int> periodic = logicals(periods, *ndims);
  set_error(ierror, MPI_Cart_create(MPI_Comm_f2c(*comm_old), *ndims, dims, periodic.data(), *reorder != 0, comm_cart));
}
void mpi_cart_sub_f08_(const MPI_Fint* comm, const MPI_Fint* remain_dims, MPI_Fint* newcomm, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  int ndims = 0;
  PMPI_Cartdim_get(MPI_Comm_f2c(*comm), &ndims);
  const std::vector<int> remain = logicals(remain_dims, ndims);
  set_error(ierror, MPI_Cart_sub(MPI_Comm_f2c(*comm), remain.data(), newcomm));
}
void mpi_graph_create_f08_(const MPI_Fint* comm_old, const MPI_Fint* nnodes, const MPI_Fint* index,
                           const MPI_Fint* edges, const MPI_Fint* reorder, MPI_Fint* comm_graph, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Graph_create(MPI_Comm_f2c(*comm_old), *nnodes, index, edges, *reorder != 0, comm_graph));
}
void mpi_intercomm_create_f08_(const MPI_Fint* local_comm, const MPI_Fint* local_leader, const MPI_Fint* peer_comm,
                               const MPI_Fint* remote_leader, const MPI_Fint* tag, MPI_Fint* newintercomm,
                               MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Intercomm_create(MPI_Comm_f2c(*local_comm), *local_leader, MPI_Comm_f2c(*peer_comm),
                                         *remote_leader, *tag, newintercomm));
}
void mpi_intercomm_merge_f08_(const MPI_Fint* intercomm, const MPI_Fint* high, MPI_Fint* newintracomm,
                              MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Intercomm_merge(MPI_Comm_f2c(*intercomm), *high != 0, newintracomm));
}

// One-sided communication: windows and their synchronisation.
void mpi_win_allocate_f08_(const MPI_Aint* size, const MPI_Fint* disp_unit, const MPI_Fint* info, const MPI_Fint* comm,
                           void* baseptr, MPI_Fint* win, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Win_allocate(*size, *disp_unit, MPI_Info_f2c(*info), MPI_Comm_f2c(*comm), baseptr, win));
}
void mpi_win_allocate_shared_f08_(const MPI_Aint* size, const MPI_Fint* disp_unit, const MPI_Fint* info,
                                  const MPI_Fint* comm, void* baseptr, MPI_Fint* win, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Win_allocate_shared(*size, *disp_unit, MPI_Info_f2c(*info), MPI_Comm_f2c(*comm), baseptr, win));
}
void mpi_win_create_dynamic_f08_(const MPI_Fint* info, const MPI_Fint* comm, MPI_Fint* win, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Win_create_dynamic(MPI_Info_f2c(*info), MPI_Comm_f2c(*comm), win));
}
void mpi_win_free_f08_(MPI_Fint* win, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Win_free(win));
}
void mpi_win_fence_f08_(const MPI_Fint* assert_, const MPI_Fint* win, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Win_fence(*assert_, MPI_Win_f2c(*win)));
}
void mpi_win_lock_f08_(const MPI_Fint* lock_type, const MPI_Fint* rank, const MPI_Fint* assert_, const MPI_Fint* win,
                       MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Win_lock(*lock_type, *rank, *assert_, MPI_Win_f2c(*win)));
}
void mpi_win_unlock_f08_(const MPI_Fint* rank, const MPI_Fint* win, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Win_unlock(*rank, MPI_Win_f2c(*win)));
}
void mpi_win_lock_all_f08_(const MPI_Fint* assert_, const MPI_Fint* win, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Win_lock_all(*assert_, MPI_Win_f2c(*win)));
}
void mpi_win_unlock_all_f08_(const MPI_Fint* win, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Win_unlock_all(MPI_Win_f2c(*win)));
}
void mpi_win_flush_f08_(const MPI_Fint* rank, const MPI_Fint* win, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Win_flush(*rank, MPI_Win_f2c(*win)));
}
void mpi_win_flush_local_f08_(const MPI_Fint* rank, const MPI_Fint* win, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Win_flush_local(*rank, MPI_Win_f2c(*win)));
}
void mpi_win_flush_all_f08_(const MPI_Fint* win, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Win_flush_all(MPI_Win_f2c(*win)));
}
void mpi_win_flush_local_all_f08_(const MPI_Fint* win, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Win_flush_local_all(MPI_Win_f2c(*win)));
}
void mpi_win_sync_f08_(const MPI_Fint* win, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Win_sync(MPI_Win_f2c(*win)));
}
void mpi_win_post_f08_(const MPI_Fint* group, const MPI_Fint* assert_, const MPI_Fint* win, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Win_post(MPI_Group_f2c(*group), *assert_, MPI_Win_f2c(*win)));
}
void mpi_win_start_f08_(const MPI_Fint* group, const MPI_Fint* assert_, const MPI_Fint* win, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Win_start(MPI_Group_f2c(*group), *assert_, MPI_Win_f2c(*win)));
}
void mpi_win_complete_f08_(const MPI_Fint* win, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Win_complete(MPI_Win_f2c(*win)));
}
void mpi_win_wait_f08_(const MPI_Fint* win, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_Win_wait(MPI_Win_f2c(*win)));
}
void mpi_win_test_f08_(const MPI_Fint* win, MPI_Fint* flag, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  int f = 0;
  const int rc = MPI_Win_test(MPI_Win_f2c(*win), &f);
  *flag = logical(f);
  set_error(ierror, rc);
}

// MPI-IO: files (an MPI_File is a pointer in MPICH's C, an integer in Fortran). A CHARACTER
// argument's length comes after all the others (gfortran passes it as a size_t).
void mpi_file_open_f08_(const MPI_Fint* comm, const char* filename, const MPI_Fint* amode, const MPI_Fint* info,
                        MPI_Fint* fh, MPI_Fint* ierror, std::size_t filename_length) {
  MSTEP_FORTRAN_ENTRY();
  MPI_File file = MPI_FILE_NULL;
  const std::string name = c_string(filename, filename_length);
  const int rc = MPI_File_open(MPI_Comm_f2c(*comm), name.c_str(), *amode, MPI_Info_f2c(*info), &file);
  *fh = MPI_File_c2f(file);
  set_error(ierror, rc);
}
void mpi_file_close_f08_(MPI_Fint* fh, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  MPI_File file = MPI_File_f2c(*fh);
  const int rc = MPI_File_close(&file);
  *fh = MPI_File_c2f(file);
  set_error(ierror, rc);
}
void mpi_file_delete_f08_(const char* filename, const MPI_Fint* info, MPI_Fint* ierror, std::size_t filename_length) {
  MSTEP_FORTRAN_ENTRY();
  const std::string name = c_string(filename, filename_length);
  set_error(ierror, MPI_File_delete(name.c_str(), MPI_Info_f2c(*info)));
}
void mpi_file_sync_f08_(const MPI_Fint* fh, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_File_sync(MPI_File_f2c(*fh)));
}
void mpi_file_seek_f08_(const MPI_Fint* fh, const MPI_Offset* offset, const MPI_Fint* whence, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_File_seek(MPI_File_f2c(*fh), *offset, *whence));
}
void mpi_file_set_size_f08_(const MPI_Fint* fh, const MPI_Offset* size, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_File_set_size(MPI_File_f2c(*fh), *size));
}
void mpi_file_preallocate_f08_(const MPI_Fint* fh, const MPI_Offset* size, MPI_Fint* ierror) {
  MSTEP_FORTRAN_ENTRY();
  set_error(ierror, MPI_File_preallocate(MPI_File_f2c(*fh), *size));
}
void mpi_file_set_view_f08_(const MPI_Fint* fh, const MPI_Offset* disp, const MPI_Fint* etype, const MPI_Fint* filetype,
                            const char* datarep, const MPI_Fint* info, MPI_Fint* ierror, std::size_t datarep_length) {
  MSTEP_FORTRAN_ENTRY();
  const std::string rep = c_string(datarep, datarep_length);
  set_error(ierror, MPI_File_set_view(MPI_File_f2c(*fh), *disp, MPI_Type_f2c(*etype), MPI_Type_f2c(*filetype),
                                      rep.c_str(), MPI_Info_f2c(*info)));
}

}  // extern "C"
