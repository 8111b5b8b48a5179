#include "common/freed_memory.h"

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace ipu {
namespace {

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define IPU_OWN_ALLOCATOR 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define IPU_OWN_ALLOCATOR 1
#endif

#ifndef IPU_OWN_ALLOCATOR
double residentAnonymousMb() {
  std::ifstream status("/proc/self/status");
  for (std::string key; status >> key;) {
    if (key == "RssAnon:") {
      double kb = 0;
      status >> kb;
      return kb / 1024;
    }
  }
  return -1;
}

TEST(FreedMemoryTest, PagesFreedInTheMiddleOfTheHeapGoBack) {
  // 64 MB in 1 KB blocks; then all but one block in 64 freed, the last one kept: 63 KB free runs inside
  // the heap and none at its top, which glibc would keep resident by itself.
  std::vector<std::unique_ptr<char[]>> blocks(64 * 1024);
  for (auto& block : blocks) {
    block.reset(new char[1024]);
    block[0] = 1;  // touched: resident
  }
  for (std::size_t i = 0; i + 1 < blocks.size(); ++i) {
    if (i % 64 != 0) blocks[i].reset();
  }
  const double before = residentAnonymousMb();
  releaseFreedMemory();
  const double after = residentAnonymousMb();
  EXPECT_LT(after, before - 32) << "resident anonymous memory went from " << before << " MB to " << after;
}
#endif

TEST(FreedMemoryTest, ThePeriodicReleaseStopsAsSoonAsAsked) {
  const auto started = std::chrono::steady_clock::now();
  {
    const std::jthread releaser = releaseFreedMemoryInBackground(std::chrono::hours(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }  // requests stop, joins
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
}

}  // namespace
}  // namespace ipu
