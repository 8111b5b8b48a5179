#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "fd/fd.h"

// How worker 0's retention container knows that the worker's command ended (spec.outputs;
// runtime/contract/runtime_contract.h, kRetainCommand): the runtime in the worker container holds an
// exclusive flock on a file in the emptyDir both containers mount, from its start to its exit. The kernel
// drops the lock when the last process holding it is gone, however it ended (exit, a signal, SIGKILL, the
// OOM killer), so the retention container, blocked on the same lock, wakes exactly then. No timer, no
// marker a dying process might fail to write.
namespace ipu::runtime::retention {

// Takes the lock at `path` for as long as the returned descriptor lives (close-on-exec: the command's
// processes never inherit it). Made under a temporary name, locked, then renamed into place, so whoever opens
// `path` finds it locked already. Throws std::system_error when it cannot.
Fd holdWorkerLock(const std::string& path);

// Whether the lock at `path` is free: the file exists and no process holds its lock (the worker's runtime
// has exited). False while it is held or before the file exists.
bool workerEnded(const std::string& path);

// Blocks until the file at `path` exists (inotify on its directory) and then until its lock is free.
// Throws std::system_error on an error of the system calls.
void awaitWorkerEnd(const std::string& path);

struct RetainOptions {
  std::string lockPath;
  std::chrono::seconds retain{0};
  std::string outputsPath;  // for the messages only
};

// `ipu-runtime retain`: waits for the worker's end, then keeps running for options.retain and returns 0.
// SIGTERM or SIGINT (the pod deleted) end it at once with 0. Progress goes to stdout (the container's log).
int runRetain(const RetainOptions& options);

}  // namespace ipu::runtime::retention
