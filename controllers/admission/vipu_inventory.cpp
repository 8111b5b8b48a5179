#include "admission/vipu_inventory.h"

#include <algorithm>
#include <utility>

#include "common/log.h"

namespace ipu::controllers {
namespace {

// A view's partitions are kept in id order, so two views compare element by element.
bool byId(const vipu::Partition& a, const vipu::Partition& b) {
  return a.id < b.id;
}

bool sameError(const std::optional<Error>& a, const std::optional<Error>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || (a->code == b->code && a->message == b->message);
}

bool sameView(const VipuInventory::View& a, const VipuInventory::View& b) {
  return a.planner == b.planner && sameError(a.error, b.error) && a.partitions == b.partitions;
}

}  // namespace

void VipuInventory::refresh() {
  for (const auto& target : controllers_.targets()) {
    if (auto read = refresh(target.name); !read) {
      log::warning("could not read V-IPU controller",
                   {{"controller", target.name}, {"error", read.error().toString()}});
    }
  }
}

Status VipuInventory::refresh(const std::string& controller) {
  std::uint64_t started = 0;
  {
    std::lock_guard lock(mutex_);
    started = ++sequence_;
  }
  auto planner = controllers_.planner(controller, TopologyRead::kIfDue);
  Result<std::vector<vipu::Partition>> partitions =
      planner ? controllers_.find(controller)->api->listPartitions("")
              : Result<std::vector<vipu::Partition>>(planner.error());
  std::lock_guard lock(mutex_);
  Entry& entry = entries_[controller];
  auto view = std::make_shared<View>(entry.view ? *entry.view : View{});
  if (!partitions) {
    view->error = partitions.error();
  } else {
    view->planner = *planner;
    view->partitions = std::move(*partitions);
    std::sort(view->partitions.begin(), view->partitions.end(), byId);
    view->error.reset();
    // Own changes the read may predate are applied again; older ones it shows already.
    std::erase_if(entry.changes, [started](const OwnChange& change) { return change.sequence < started; });
    for (const auto& change : entry.changes) applyChange(view->partitions, change);
  }
  // A read that finds what was known leaves the version alone: what plans from the inventory (admission's
  // memo, the IPUPod maps) does its work again only when something moved, not on every poll.
  if (!entry.view || !sameView(*entry.view, *view)) {
    entry.view = std::move(view);
    ++version_;
  }
  if (!partitions) return partitions.error();
  return {};
}

void VipuInventory::poll(std::stop_token stop, Clock& clock, Clock::Duration interval) {
  while (clock.sleepFor(interval, stop)) refresh();
}

std::shared_ptr<const VipuInventory::View> VipuInventory::view(const std::string& controller) const {
  std::lock_guard lock(mutex_);
  const auto found = entries_.find(controller);
  return found == entries_.end() ? nullptr : found->second.view;
}

std::uint64_t VipuInventory::version() const {
  std::lock_guard lock(mutex_);
  return version_;
}

void VipuInventory::partitionCreated(const std::string& controller, vipu::Partition partition) {
  record(controller, {0, true, std::move(partition)});
}

void VipuInventory::partitionRemoved(const std::string& controller, const std::string& partitionId) {
  vipu::Partition removed;
  removed.id = partitionId;
  record(controller, {0, false, std::move(removed)});
}

void VipuInventory::record(const std::string& controller, OwnChange change) {
  std::lock_guard lock(mutex_);
  change.sequence = ++sequence_;
  Entry& entry = entries_[controller];
  auto view = std::make_shared<View>(entry.view ? *entry.view : View{});
  applyChange(view->partitions, change);
  entry.view = std::move(view);
  entry.changes.push_back(std::move(change));
  ++version_;
}

void VipuInventory::applyChange(std::vector<vipu::Partition>& partitions, const OwnChange& change) {
  const auto at = std::lower_bound(partitions.begin(), partitions.end(), change.partition, byId);
  const bool present = at != partitions.end() && at->id == change.partition.id;
  if (change.created && present) {
    *at = change.partition;
  } else if (change.created) {
    partitions.insert(at, change.partition);
  } else if (present) {
    partitions.erase(at);
  }
}

}  // namespace ipu::controllers
