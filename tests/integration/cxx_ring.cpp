// cxx_ring: a C++ program (C API of MPI) passing a vector around the ring.
// Usage: cxx_ring [iterations]   (any number of ranks)
//
// MPI calls per rank (asserted in test_corners_languages.cpp; keep in step): per iteration one
// Send and one Recv of 32 doubles (256 B, tag = iteration) to the right / from the left neighbour
// (even ranks send first, odd ranks receive first), then one Allreduce(1 long, SUM).
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

namespace {

class Ring {
 public:
  explicit Ring(MPI_Comm comm) : comm_(comm) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  int rank() const { return rank_; }
  int right() const { return (rank_ + 1) % size_; }
  int left() const { return (rank_ + size_ - 1) % size_; }

  // One step around the ring; returns what came from the left.
  std::vector<double> pass(const std::vector<double>& out, int tag) const {
    std::vector<double> in(out.size());
    const int n = static_cast<int>(out.size());
    MPI_Status st;
    if (rank_ % 2 == 0) {
      MPI_Send(out.data(), n, MPI_DOUBLE, right(), tag, comm_);
      MPI_Recv(in.data(), n, MPI_DOUBLE, left(), tag, comm_, &st);
    } else {
      MPI_Recv(in.data(), n, MPI_DOUBLE, left(), tag, comm_, &st);
      MPI_Send(out.data(), n, MPI_DOUBLE, right(), tag, comm_);
    }
    return in;
  }

 private:
  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 5;
  {
    Ring ring(MPI_COMM_WORLD);
    long good = 0;
    for (int it = 0; it < iterations; ++it) {
      std::vector<double> out(32);
      std::iota(out.begin(), out.end(), 1000.0 * ring.rank() + it);
      const auto in = ring.pass(out, it);
      good += in.front() == 1000.0 * ring.left() + it && in.back() == 1000.0 * ring.left() + it + 31;
    }
    long all = 0;
    MPI_Allreduce(&good, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const bool ok = all == static_cast<long>(iterations) * size;
    if (ring.rank() == 0) std::printf("cxx_ring: %s\n", ok ? "ok" : "WRONG");
    MPI_Finalize();
    return ok ? 0 : 1;
  }
}
