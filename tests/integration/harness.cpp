// The Catch2 main of mstep_integration_tests, and the listener that removes a passed test case's
// directories (see test_dir() in harness.hpp).
#define CATCH_CONFIG_MAIN
#include "harness.hpp"

namespace {

using namespace mstep_it;

struct CleanupListener : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  void testCaseEnded(const Catch::TestCaseStats& stats) override {
    if (stats.totals.assertions.failed == 0) {
      std::error_code ec;
      for (const auto& d : g_dirs_of_test) fs::remove_all(d, ec);
    }
    g_dirs_of_test.clear();
  }
};

CATCH_REGISTER_LISTENER(CleanupListener)

}  // namespace
