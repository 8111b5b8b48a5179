#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace ipu::testing {

// Polls `condition` in real time until it holds or `timeout` passes. For waiting on other threads or
// processes; the timeout only stops a hung test, nothing should assert how fast the condition came true.
inline bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout,
                       std::chrono::milliseconds interval = std::chrono::milliseconds(200)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (condition()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(interval);
  }
}

}  // namespace ipu::testing
