// MPI-IO (ROMIO in MPICH): opening, reading, writing and closing files. mstep does not model file
// I/O: each call is one record of role Other, with its time, the file's communicator and the bytes
// it wrote (send_bytes) or read (recv_bytes), and every model keeps it at its recorded duration
// (counted as the step's computation by BSPWB and MPM). Blocking reads and writes record the bytes
// their status reports (a read at the end of the file gets fewer than it asked for); nonblocking
// ones the bytes asked for, their Wait/Test being a request mstep did not create. Files are known
// from MPI_File_open to MPI_File_close; each wrapper returns exactly what PMPI returns.
#include "interpose/wrap_common.hpp"

using namespace mstep;

namespace {

void on_file(Event& e, MPI_File fh) {
  if (const CommInfo* c = g_recorder.file(fh)) e.comm = c->id;
}

// A call on the file that moves nothing.
int on(Op op, void* caller, MPI_File fh, auto call) {
  return recorded(op, caller, call, [&](Event& e, int) { on_file(e, fh); });
}

// A blocking read (`write` false) or write with a status: the bytes it reports, when it succeeded.
int transfer(Op op, void* caller, MPI_File fh, bool write, MPI_Status* status, auto call) {
  MPI_Status own;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &own : status;
  return recorded(op, caller, [&] { return call(st); }, [&](Event& e, int rc) {
    on_file(e, fh);
    const std::uint64_t bytes = rc == MPI_SUCCESS ? received_bytes(*st) : 0;
    (write ? e.send_bytes : e.recv_bytes) = bytes;
  });
}

// A nonblocking read or write: the bytes asked for.
int started(Op op, void* caller, MPI_File fh, bool write, std::uint64_t bytes, auto call) {
  return recorded(op, caller, call, [&](Event& e, int rc) {
    on_file(e, fh);
    (write ? e.send_bytes : e.recv_bytes) = rc == MPI_SUCCESS ? bytes : 0;
  });
}

}  // namespace

extern "C" int MPI_File_open(MPI_Comm comm, const char* filename, int amode, MPI_Info info, MPI_File* fh) {
  if (!g_recorder.active()) return PMPI_File_open(comm, filename, amode, info, fh);
  return recorded(Op::File_open, MSTEP_CALLER, [&] { return PMPI_File_open(comm, filename, amode, info, fh); },
                  [&](Event& e, int rc) {
                    const CommInfo& c = g_recorder.comm(comm);
                    e.comm = c.id;
                    if (rc == MPI_SUCCESS) g_recorder.add_file(*fh, c);
                  });
}

extern "C" int MPI_File_close(MPI_File* fh) {
  if (!g_recorder.active()) return PMPI_File_close(fh);
  const MPI_File handle = *fh;
  return recorded(Op::File_close, MSTEP_CALLER, [&] { return PMPI_File_close(fh); }, [&](Event& e, int rc) {
    on_file(e, handle);
    if (rc == MPI_SUCCESS) g_recorder.forget_file(handle);
  });
}

extern "C" int MPI_File_delete(const char* filename, MPI_Info info) {
  if (!g_recorder.active()) return PMPI_File_delete(filename, info);
  return recorded(Op::File_delete, MSTEP_CALLER, [&] { return PMPI_File_delete(filename, info); }, [](Event&, int) {});
}

extern "C" int MPI_File_set_size(MPI_File fh, MPI_Offset size) {
  if (!g_recorder.active()) return PMPI_File_set_size(fh, size);
  return on(Op::File_set_size, MSTEP_CALLER, fh, [&] { return PMPI_File_set_size(fh, size); });
}

extern "C" int MPI_File_preallocate(MPI_File fh, MPI_Offset size) {
  if (!g_recorder.active()) return PMPI_File_preallocate(fh, size);
  return on(Op::File_preallocate, MSTEP_CALLER, fh, [&] { return PMPI_File_preallocate(fh, size); });
}

extern "C" int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                                 const char* datarep, MPI_Info info) {
  if (!g_recorder.active()) return PMPI_File_set_view(fh, disp, etype, filetype, datarep, info);
  return on(Op::File_set_view, MSTEP_CALLER, fh, [&] { return PMPI_File_set_view(fh, disp, etype, filetype, datarep, info); });
}

extern "C" int MPI_File_seek(MPI_File fh, MPI_Offset offset, int whence) {
  if (!g_recorder.active()) return PMPI_File_seek(fh, offset, whence);
  return on(Op::File_seek, MSTEP_CALLER, fh, [&] { return PMPI_File_seek(fh, offset, whence); });
}

extern "C" int MPI_File_sync(MPI_File fh) {
  if (!g_recorder.active()) return PMPI_File_sync(fh);
  return on(Op::File_sync, MSTEP_CALLER, fh, [&] { return PMPI_File_sync(fh); });
}

// Blocking reads and writes: the explicit offset ones, then those at the individual and the
// shared file pointer.
#define MSTEP_FILE_AT(name, write, buf_type)                                                                   \
  extern "C" int MPI_File_##name(MPI_File fh, MPI_Offset offset, buf_type buf, int count, MPI_Datatype type, \
                                 MPI_Status* status) {                                                        \
    if (!g_recorder.active()) return PMPI_File_##name(fh, offset, buf, count, type, status);                 \
    return transfer(Op::File_##name, MSTEP_CALLER, fh, write, status,                                         \
                    [&](MPI_Status* st) { return PMPI_File_##name(fh, offset, buf, count, type, st); });     \
  }
#define MSTEP_FILE_POINTER(name, write, buf_type)                                                                    \
  extern "C" int MPI_File_##name(MPI_File fh, buf_type buf, int count, MPI_Datatype type, MPI_Status* status) { \
    if (!g_recorder.active()) return PMPI_File_##name(fh, buf, count, type, status);                                \
    return transfer(Op::File_##name, MSTEP_CALLER, fh, write, status,                                                \
                    [&](MPI_Status* st) { return PMPI_File_##name(fh, buf, count, type, st); });                    \
  }
MSTEP_FILE_AT(read_at, false, void*)
MSTEP_FILE_AT(read_at_all, false, void*)
MSTEP_FILE_AT(write_at, true, const void*)
MSTEP_FILE_AT(write_at_all, true, const void*)
MSTEP_FILE_POINTER(read, false, void*)
MSTEP_FILE_POINTER(read_all, false, void*)
MSTEP_FILE_POINTER(read_shared, false, void*)
MSTEP_FILE_POINTER(read_ordered, false, void*)
MSTEP_FILE_POINTER(write, true, const void*)
MSTEP_FILE_POINTER(write_all, true, const void*)
MSTEP_FILE_POINTER(write_shared, true, const void*)
MSTEP_FILE_POINTER(write_ordered, true, const void*)

// Nonblocking reads and writes.
#define MSTEP_FILE_IAT(name, write, buf_type)                                                                  \
  extern "C" int MPI_File_##name(MPI_File fh, MPI_Offset offset, buf_type buf, int count, MPI_Datatype type, \
                                 MPIO_Request* request) {                                                     \
    if (!g_recorder.active()) return PMPI_File_##name(fh, offset, buf, count, type, request);                \
    return started(Op::File_##name, MSTEP_CALLER, fh, write, bytes_of(count, type),                           \
                   [&] { return PMPI_File_##name(fh, offset, buf, count, type, request); });                  \
  }
#define MSTEP_FILE_IPOINTER(name, write, buf_type)                                                                     \
  extern "C" int MPI_File_##name(MPI_File fh, buf_type buf, int count, MPI_Datatype type, MPIO_Request* request) { \
    if (!g_recorder.active()) return PMPI_File_##name(fh, buf, count, type, request);                                 \
    return started(Op::File_##name, MSTEP_CALLER, fh, write, bytes_of(count, type),                                   \
                   [&] { return PMPI_File_##name(fh, buf, count, type, request); });                                  \
  }
MSTEP_FILE_IAT(iread_at, false, void*)
MSTEP_FILE_IAT(iread_at_all, false, void*)
MSTEP_FILE_IAT(iwrite_at, true, const void*)
MSTEP_FILE_IAT(iwrite_at_all, true, const void*)
MSTEP_FILE_IPOINTER(iread, false, void*)
MSTEP_FILE_IPOINTER(iread_all, false, void*)
MSTEP_FILE_IPOINTER(iwrite, true, const void*)
MSTEP_FILE_IPOINTER(iwrite_all, true, const void*)
