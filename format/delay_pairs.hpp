// Per-pair added latency for the delay apparatus (MSTEP_DELAY_PAIRS=FILE): networks whose links
// differ, as in Mateescu and Taylor's grid (MODELS.md section 4), made from this machine's one.
// The file is JSON, times in seconds as numbers or as strings with a unit ("200us"):
//   {"clusters": [[0, 1], [2, 3]], "intra": "0us", "inter": "200us"}
//       every rank in exactly one cluster; a message between clusters gets `inter`, inside one
//       `intra` (state: one cluster number per rank);
//   {"matrix": [[0, "50us"], ["80us", 0]]}
//       world_size rows of world_size entries; row = sender, column = receiver.
// Pure (no MPI): parsed and tested on its own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mstep {

class PairLatency {
 public:
  // The file's text for a run of `world_size` ranks. On a problem `error` is set (one line, no
  // file name) and the result is empty.
  static PairLatency parse(const std::string& text, int world_size, std::string& error);
  // The same from the file at `path` ("cannot read it" when it cannot be opened).
  static PairLatency read(const std::string& path, int world_size, std::string& error);

  bool empty() const { return n_ == 0; }
  // Added latency of a message from world rank `src` to `dst`, nanoseconds.
  std::int64_t ns(int src, int dst) const {
    if (src < 0 || dst < 0 || src >= n_ || dst >= n_) return 0;
    const auto s = static_cast<std::size_t>(src), d = static_cast<std::size_t>(dst);
    if (!matrix_.empty()) return matrix_[s * static_cast<std::size_t>(n_) + d];
    return cluster_[s] == cluster_[d] ? intra_ns_ : inter_ns_;
  }
  // For meta.json: the table as given, times in seconds.
  std::string json() const { return json_; }

 private:
  int n_ = 0;
  std::vector<int> cluster_;
  std::int64_t intra_ns_ = 0, inter_ns_ = 0;
  std::vector<std::int64_t> matrix_;
  std::string json_;
};

}  // namespace mstep
