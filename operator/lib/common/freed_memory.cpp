#include "common/freed_memory.h"

#include <malloc.h>

#include "common/clock.h"

namespace ipu {

void releaseFreedMemory() {
  malloc_trim(0);
}

void releaseFreedMemoryEvery(std::chrono::milliseconds period, std::stop_token stop) {
  while (Clock::real().sleepFor(period, stop)) releaseFreedMemory();
}

std::jthread releaseFreedMemoryInBackground(std::chrono::milliseconds period) {
  return std::jthread([period](std::stop_token stop) { releaseFreedMemoryEvery(period, stop); });
}

}  // namespace ipu
