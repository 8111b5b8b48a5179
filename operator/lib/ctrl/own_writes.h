#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_map>

#include "common/clock.h"
#include "common/expiring_entries.h"

namespace ipu::ctrl {

// Read-your-writes for a reconciler over an informer's cache. A pass that writes its object replaces the
// version it read; until the watch brings the new one, the cache still holds the old, and a pass queued
// meanwhile (by another object's change) would decide again on what was already decided: a second finalizer
// patch whose `test` fails, an admission refused by its resourceVersion precondition, an Event sent twice.
// So each successful write records the version it replaced, and a pass whose cached object still has that
// version waits for the write's own event instead. Memory only, one entry per object written and not yet
// seen again; entries older than `forgetAfter` (an object deleted right after a write, never passed again)
// are dropped whenever the map has doubled since it was last pruned. Thread-safe.
class OwnWrites {
 public:
  explicit OwnWrites(Clock& clock, Clock::Duration forgetAfter = std::chrono::minutes(1))
      : clock_(clock), forgetAfter_(forgetAfter) {}

  // A write of `key`'s object, made from the version `readVersion`, succeeded and left `writtenVersion` (the
  // version in the API server's answer). A write that changed nothing leaves the version it read: its event
  // never comes, so it is not recorded (and ends an entry of the key).
  void wrote(const std::string& key, const std::string& readVersion, const std::string& writtenVersion);
  // Whether the cache's `cachedVersion` of `key` is the one this process's last write replaced (its event
  // has not arrived). A newer version ends the entry.
  bool behind(const std::string& key, const std::string& cachedVersion);

  std::size_t tracked() const;

 private:
  struct Replaced {
    std::string version;
    Clock::TimePoint at;
  };

  Clock& clock_;
  const Clock::Duration forgetAfter_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Replaced> replaced_;
  ExpiringEntries expiring_;
};

}  // namespace ipu::ctrl
