#include "ctrl/worker_pool.h"

#include <exception>
#include <stdexcept>

#include "common/log.h"

namespace ipu::ctrl {

WorkerPool::WorkerPool(WorkQueue& queue, int workers, Process process)
    : queue_(queue), process_(std::move(process)) {
  if (workers < 1) throw std::invalid_argument("WorkerPool needs at least one worker");
  threads_.reserve(static_cast<size_t>(workers));
  for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
}

WorkerPool::~WorkerPool() {
  stop();
}

void WorkerPool::stop() {
  queue_.shutDownWithDrain();
  for (auto& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
}

void WorkerPool::work() {
  while (auto key = queue_.get()) {
    try {
      process_(*key);
    } catch (const std::exception& e) {
      log::error("worker caught an exception; retrying the key with backoff",
                 {{"key", *key}, {"error", e.what()}});
      queue_.addRateLimited(*key);
    } catch (...) {
      log::error("worker caught an unknown exception; retrying the key with backoff", {{"key", *key}});
      queue_.addRateLimited(*key);
    }
    queue_.done(*key);
  }
}

}  // namespace ipu::ctrl
