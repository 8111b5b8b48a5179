#include "admission/vipu_inventory.h"

#include <algorithm>
#include <utility>

#include "common/log.h"

namespace ipu::controllers {

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
  auto planner = controllers_.planner(controller);
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
    view->error.reset();
    // Own changes the read may predate are applied again; older ones it shows already.
    std::erase_if(entry.changes, [started](const OwnChange& change) { return change.sequence < started; });
    for (const auto& change : entry.changes) applyChange(view->partitions, change);
  }
  entry.view = std::move(view);
  ++version_;
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
  const auto same = [&change](const vipu::Partition& p) { return p.id == change.partition.id; };
  std::erase_if(partitions, same);
  if (change.created) partitions.push_back(change.partition);
}

}  // namespace ipu::controllers
