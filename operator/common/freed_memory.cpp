#include "common/freed_memory.h"

#include <condition_variable>
#include <mutex>

#include <malloc.h>

namespace ipu {

void releaseFreedMemory() {
  malloc_trim(0);
}

void releaseFreedMemoryEvery(std::chrono::milliseconds period, std::stop_token stop) {
  std::mutex mutex;
  std::condition_variable_any wake;
  std::unique_lock lock(mutex);
  // wait_for returns true only when stop was requested (the predicate); a timeout is the next round.
  while (!wake.wait_for(lock, stop, period, [] { return false; })) {
    if (stop.stop_requested()) return;
    releaseFreedMemory();
  }
}

std::jthread releaseFreedMemoryInBackground(std::chrono::milliseconds period) {
  return std::jthread([period](std::stop_token stop) { releaseFreedMemoryEvery(period, stop); });
}

}  // namespace ipu
