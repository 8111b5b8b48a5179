#pragma once

#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "kube/store.h"

namespace ipu::controllers {

// The IPUJobs waiting for admission, kept from the job informer's changes, and which of them a change of one
// job wakes: all of them when it gave back or took IPUs or removed a job from the queue (the plan's inputs
// and the queue's order moved), none otherwise (a running job's pod counts). Kept rather than looked up: in a
// fill of a thousand jobs every admission would walk the whole cache to find the waiting ones.
class WaitingJobs {
 public:
  // Records the change (old null: created; current null: deleted) and returns the waiting jobs to queue.
  std::vector<std::string> wakeFor(const kube::ObjectPtr& old, const kube::ObjectPtr& current);

 private:
  std::mutex mutex_;
  std::set<std::string> waiting_;  // keys, in the order a wake queues them
};

}  // namespace ipu::controllers
