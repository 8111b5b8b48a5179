#pragma once

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "ctrl/work_queue.h"

namespace ipu::ctrl {

// N threads that take keys from a WorkQueue and hand each to `process`, marking it done afterwards, until
// the queue shuts down. The queue guarantees a key is never in two workers at once. An exception escaping
// `process` is a bug in it: it is logged and the key is re-queued with backoff, and the worker lives on.
class WorkerPool {
 public:
  using Process = std::function<void(const std::string& key)>;

  WorkerPool(WorkQueue& queue, int workers, Process process);
  // Shuts the queue down, letting keys in progress finish, and joins the workers.
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Waits for the keys in progress, then stops the workers. Idempotent.
  void stop();

 private:
  void work();

  WorkQueue& queue_;
  Process process_;
  std::vector<std::jthread> threads_;
};

}  // namespace ipu::ctrl
