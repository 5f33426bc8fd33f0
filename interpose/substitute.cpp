#include "interpose/substitute.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

namespace mstep {

Substitutes g_substitutes;

namespace {

constexpr int kTag = 0;  // the private communicator carries nothing else

bool parse_arity(std::string_view text, int& arity) {
  if (text.empty() || text.size() > 6) return false;
  int v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  if (v < 2) return false;
  arity = v;
  return true;
}

// The first failing return code of a sequence of calls.
struct Rc {
  int rc = MPI_SUCCESS;
  void operator()(int r) {
    if (rc == MPI_SUCCESS) rc = r;
  }
};

// MPIR_Bcast_intra_binomial's schedule on relative ranks: receive from the parent at the lowest
// set bit of rel, then send to rel + mask for the masks below it (the root: below n rounded up).
int binomial_bcast(void* buf, int count, MPI_Datatype type, int root, int me, int n, MPI_Comm pc) {
  Rc rc;
  const int rel = (me - root + n) % n;
  int mask = 1;
  while (mask < n) {
    if (rel & mask) {
      rc(PMPI_Recv(buf, count, type, (rel - mask + root) % n, kTag, pc, MPI_STATUS_IGNORE));
      break;
    }
    mask <<= 1;
  }
  for (mask >>= 1; mask > 0; mask >>= 1)
    if (rel + mask < n) rc(PMPI_Send(buf, count, type, (rel + mask + root) % n, kTag, pc));
  return rc.rc;
}

int central_barrier(int me, int n, MPI_Comm pc) {
  Rc rc;
  char token = 0;
  if (me != 0) {
    rc(PMPI_Send(&token, 0, MPI_BYTE, 0, kTag, pc));
    rc(PMPI_Recv(&token, 0, MPI_BYTE, 0, kTag, pc, MPI_STATUS_IGNORE));
    return rc.rc;
  }
  for (int i = 1; i < n; ++i) rc(PMPI_Recv(&token, 0, MPI_BYTE, MPI_ANY_SOURCE, kTag, pc, MPI_STATUS_IGNORE));
  for (int i = 1; i < n; ++i) rc(PMPI_Send(&token, 0, MPI_BYTE, i, kTag, pc));
  return rc.rc;
}

int tree_barrier(int me, int n, int arity, MPI_Comm pc) {
  Rc rc;
  char token = 0;
  const long first = static_cast<long>(arity) * me + 1;
  for (long c = first; c < first + arity && c < n; ++c)
    rc(PMPI_Recv(&token, 0, MPI_BYTE, static_cast<int>(c), kTag, pc, MPI_STATUS_IGNORE));
  if (me != 0) rc(PMPI_Send(&token, 0, MPI_BYTE, (me - 1) / arity, kTag, pc));
  rc(binomial_bcast(&token, 0, MPI_BYTE, 0, me, n, pc));
  return rc.rc;
}

int dissemination_barrier(int me, int n, MPI_Comm pc) {
  Rc rc;
  char out = 0, in = 0;
  for (int d = 1; d < n; d <<= 1)
    rc(PMPI_Sendrecv(&out, 0, MPI_BYTE, (me + d) % n, kTag, &in, 0, MPI_BYTE, (me - d + n) % n, kTag, pc,
                     MPI_STATUS_IGNORE));
  return rc.rc;
}

// The attribute's value is the duplicate's handle itself (an int in the MPICH ABI), so nothing is
// allocated for it.
void* as_value(MPI_Comm c) { return reinterpret_cast<void*>(static_cast<std::intptr_t>(c)); }
MPI_Comm as_comm(void* v) { return static_cast<MPI_Comm>(reinterpret_cast<std::intptr_t>(v)); }

int delete_private(MPI_Comm, int, void* value, void*) {
  MPI_Comm pc = as_comm(value);
  PMPI_Comm_free(&pc);
  return MPI_SUCCESS;
}

std::string barrier_name(const SubstituteSettings& s) {
  switch (s.barrier) {
    case BarrierAlgo::Mpi: return "mpi";
    case BarrierAlgo::Central: return "central";
    case BarrierAlgo::Tree: return fmt::format("tree:{}", s.tree_arity);
    case BarrierAlgo::Dissemination: return "dissemination";
  }
  return "mpi";
}

const char* bcast_name(BcastAlgo a) {
  switch (a) {
    case BcastAlgo::Mpi: return "mpi";
    case BcastAlgo::Flat: return "flat";
    case BcastAlgo::Binomial: return "binomial";
  }
  return "mpi";
}

}  // namespace

SubstituteSettings parse_substitute_settings(const char* barrier, const char* bcast) {
  SubstituteSettings s;
  const std::string_view b = barrier ? barrier : "", c = bcast ? bcast : "";
  if (b.empty() || b == "mpi") s.barrier = BarrierAlgo::Mpi;
  else if (b == "central") s.barrier = BarrierAlgo::Central;
  else if (b == "dissemination") s.barrier = BarrierAlgo::Dissemination;
  else if (b.starts_with("tree:") && parse_arity(b.substr(5), s.tree_arity)) s.barrier = BarrierAlgo::Tree;
  else s.error = fmt::format("MSTEP_BARRIER='{}' is not mpi, central, tree:N (N >= 2) or dissemination", b);
  if (c.empty() || c == "mpi") s.bcast = BcastAlgo::Mpi;
  else if (c == "flat") s.bcast = BcastAlgo::Flat;
  else if (c == "binomial") s.bcast = BcastAlgo::Binomial;
  else if (s.error.empty()) s.error = fmt::format("MSTEP_BCAST='{}' is not mpi, flat or binomial", c);
  if (!s.error.empty()) {
    std::string error = std::move(s.error);
    s = SubstituteSettings{};
    s.error = std::move(error);
  }
  return s;
}

void Substitutes::start(int world_rank) {
  settings_ = parse_substitute_settings(std::getenv("MSTEP_BARRIER"), std::getenv("MSTEP_BCAST"));
  if (!settings_.error.empty() && world_rank == 0)
    std::fprintf(stderr, "mstep: %s; MPICH's own collectives run\n", settings_.error.c_str());
  if ((barrier_on() || bcast_on()) && keyval_ == MPI_KEYVAL_INVALID)
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_private, &keyval_, nullptr);
}

std::string Substitutes::json() const {
  return fmt::format(R"({{"barrier": "{}", "bcast": "{}"}})", barrier_name(settings_), bcast_name(settings_.bcast));
}

MPI_Comm Substitutes::private_comm(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL || keyval_ == MPI_KEYVAL_INVALID) return MPI_COMM_NULL;
  int inter = 0;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) return MPI_COMM_NULL;
  void* value = nullptr;
  int found = 0;
  if (PMPI_Comm_get_attr(comm, keyval_, &value, &found) != MPI_SUCCESS) return MPI_COMM_NULL;
  if (found) return as_comm(value);
  MPI_Comm pc = MPI_COMM_NULL;
  if (PMPI_Comm_dup(comm, &pc) != MPI_SUCCESS) return MPI_COMM_NULL;
  if (PMPI_Comm_set_attr(comm, keyval_, as_value(pc)) != MPI_SUCCESS) {
    PMPI_Comm_free(&pc);
    return MPI_COMM_NULL;
  }
  return pc;  // freed with `comm`, by delete_private
}

int Substitutes::barrier(MPI_Comm comm) {
  const MPI_Comm pc = barrier_on() ? private_comm(comm) : MPI_COMM_NULL;
  if (pc == MPI_COMM_NULL) return PMPI_Barrier(comm);
  int me = 0, n = 1;
  PMPI_Comm_rank(pc, &me);
  PMPI_Comm_size(pc, &n);
  if (n == 1) return MPI_SUCCESS;
  switch (settings_.barrier) {
    case BarrierAlgo::Central: return central_barrier(me, n, pc);
    case BarrierAlgo::Tree: return tree_barrier(me, n, settings_.tree_arity, pc);
    case BarrierAlgo::Dissemination: return dissemination_barrier(me, n, pc);
    case BarrierAlgo::Mpi: break;
  }
  return PMPI_Barrier(comm);
}

int Substitutes::bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  const MPI_Comm pc = bcast_on() ? private_comm(comm) : MPI_COMM_NULL;
  if (pc == MPI_COMM_NULL) return PMPI_Bcast(buf, count, type, root, comm);
  int me = 0, n = 1;
  PMPI_Comm_rank(pc, &me);
  PMPI_Comm_size(pc, &n);
  // A bad root or count is MPICH's to report, with its own error.
  if (root < 0 || root >= n || count < 0) return PMPI_Bcast(buf, count, type, root, comm);
  if (n == 1) return MPI_SUCCESS;
  if (settings_.bcast == BcastAlgo::Binomial) return binomial_bcast(buf, count, type, root, me, n, pc);
  Rc rc;
  if (me != root) {
    rc(PMPI_Recv(buf, count, type, root, kTag, pc, MPI_STATUS_IGNORE));
  } else {
    for (int k = 1; k < n; ++k) rc(PMPI_Send(buf, count, type, (root + k) % n, kTag, pc));
  }
  return rc.rc;
}

}  // namespace mstep
