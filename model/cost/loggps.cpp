#include "model/cost/loggps.hpp"

namespace mstep::model {

std::string_view to_string(Protocol p) noexcept {
  switch (p) {
    case Protocol::Short: return "short";
    case Protocol::Eager: return "eager";
    case Protocol::Rendezvous: return "rendezvous";
  }
  return "unknown";
}

}  // namespace mstep::model
