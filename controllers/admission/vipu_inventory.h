#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "admission/vipu_controllers.h"
#include "common/clock.h"
#include "common/result.h"
#include "vipu/partition_planner.h"
#include "vipu/vipu_types.h"

namespace ipu::controllers {

// What admission plans from, per V-IPU controller: its topology (as a planner) and its partitions, held in
// memory. refresh() reads the controllers (a poller calls it; ListIPUAttributes only on VipuControllers'
// topology TTL) and the operator's own creates and removes update it at once, so an admission pass reads
// memory only: one slow or unreachable controller never holds up admission on the others.
//
// A read races with our own changes: a ListPartitions answer may predate a partition we have just created.
// Each own change is therefore kept, with the sequence number it happened at, until a read that started
// after it has been applied; changes newer than a read's start are applied again on top of it (both are
// idempotent). Thread-safe.
class VipuInventory {
 public:
  // One controller as last read.
  struct View {
    std::shared_ptr<const vipu::PartitionPlanner> planner;  // null until its topology was read once
    std::vector<vipu::Partition> partitions;                // in id order
    std::optional<Error> error;  // the last read failed: admission treats the controller as unavailable
  };

  explicit VipuInventory(VipuControllers& controllers) : controllers_(controllers) {}

  // Reads every controller (outside any lock but the inventory's own, briefly).
  void refresh();
  Status refresh(const std::string& controller);
  // Reads every controller each `interval` until `stop`.
  void poll(std::stop_token stop, Clock& clock, Clock::Duration interval);

  // The controller as last known; null when it was never read.
  std::shared_ptr<const View> view(const std::string& controller) const;
  // Grows with every change of any view (a read that finds what was known is none): equal versions mean
  // nothing changed in between.
  std::uint64_t version() const;

  // The operator's own changes, visible to admission at once.
  void partitionCreated(const std::string& controller, vipu::Partition partition);
  void partitionRemoved(const std::string& controller, const std::string& partitionId);
  // Forget the controller's topology (an IPU outside it was seen): the next refresh reads it again.
  void invalidateTopology(const std::string& controller) { controllers_.invalidate(controller); }

  VipuControllers& controllers() { return controllers_; }

 private:
  struct OwnChange {
    std::uint64_t sequence;
    bool created;  // else removed
    vipu::Partition partition;
  };
  struct Entry {
    std::shared_ptr<const View> view;
    std::vector<OwnChange> changes;
  };
  static void applyChange(std::vector<vipu::Partition>& partitions, const OwnChange& change);
  void record(const std::string& controller, OwnChange change);

  VipuControllers& controllers_;
  mutable std::mutex mutex_;
  std::map<std::string, Entry> entries_;
  std::uint64_t sequence_ = 0;  // own changes and read starts, in order
  std::uint64_t version_ = 0;
};

}  // namespace ipu::controllers
