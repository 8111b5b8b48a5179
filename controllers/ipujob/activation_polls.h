#pragma once

#include <mutex>
#include <string>
#include <unordered_map>

#include "common/clock.h"
#include "common/expiring_entries.h"

namespace ipu::controllers {

// How long a job whose partitions V-IPU is still activating waits before its pass looks again (the V-IPU
// API has no call that waits: CreatePartition returns at once, GetPartitionStatus is polled). Half the time
// since this process first found the job's partitions activating, at least `shortest`, at most `longest`:
// V-IPU takes tenths of a second to seconds, and a partition active after t is seen by about 1.5·t in a
// handful of GetPartitionStatus calls, where a fixed half-second poll held every job's pods back by up to
// half a second. Memory only: after a restart the first look is `shortest` later again. Thread-safe; an
// entry ends when its job's partitions are found in any other state (settled), and entries of jobs that
// never came back (deleted while activating) are dropped once older than `longest` many times over.
class ActivationPolls {
 public:
  explicit ActivationPolls(Clock::Duration longest, Clock::Duration shortest = std::chrono::milliseconds(50))
      : longest_(longest), shortest_(shortest) {}

  // The wait before the next look at `job`'s activating partitions, found so at `now`.
  Clock::Duration next(const std::string& job, Clock::TimePoint now);
  // `job`'s partitions are not activating (any more).
  void settled(const std::string& job);

  std::size_t tracked() const;

 private:
  const Clock::Duration longest_, shortest_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Clock::TimePoint> firstSeen_;
  ExpiringEntries expiring_;
};

}  // namespace ipu::controllers
