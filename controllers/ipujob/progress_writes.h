#pragma once

#include <cstddef>
#include <mutex>
#include <string>

#include "common/clock.h"
#include "kube/lru_cache.h"

namespace ipu::controllers {

// Batches a job's progress-only status changes ("0 of 8 workers running", "3 of 8"): one is written once it
// has waited `period` since a pass first found it unwritten, and everything that happens within that time
// (the next workers running, or all of them, which is a phase change and written at once) goes in the same
// write. The pods of a job start within moments of each other: each write left out is a request at the
// client's QPS given to jobs whose pods are still to be made (the Job controller batches its pod events for
// the same reason). Decisions and phase changes are never held. What waits includes the partitions turning
// Active in status: a partition removed from V-IPU within that second after its pods were made is created
// again rather than reported lost, as after a crash between making the pods and writing the status (the pods
// have rarely started their program by then). Memory only: after a restart of the operator a change waits
// at most `period` again. Thread-safe.
class ProgressWrites {
 public:
  ProgressWrites(Clock& clock, Clock::Duration period, std::size_t jobsRemembered = 16384);

  // How much longer the unwritten progress of the job `key` waits (its wait starts at the first call):
  // zero when it is to be written now.
  Clock::Duration holdFor(const std::string& key);
  // The job's status was written: nothing of it waits.
  void written(const std::string& key);

 private:
  Clock& clock_;
  const Clock::Duration period_;
  std::mutex mutex_;
  kube::LruCache<std::string, Clock::TimePoint> waitingSince_;
};

}  // namespace ipu::controllers
