#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace ipu::controllers {

// Bounds how many reconcile passes act on one V-IPU controller at once. A pass of a job that holds partitions
// calls its controller (ListPartitions, CreatePartition, Reset, Remove); when that controller is slow or does
// not answer, each such pass holds a reconcile worker for as long as the call takes. With a bound below the
// number of workers, a slow controller can hold only that many, and the rest keep serving the jobs of the
// other controllers. Thread-safe.
class VipuCallSlots {
 public:
  // `limit`: passes per controller at once; 0: no bound.
  explicit VipuCallSlots(int limit) : state_(std::make_shared<State>(limit)) {}

  // Held for the length of a pass; gives the slot back when it goes.
  class Slot {
   private:
    friend class VipuCallSlots;
    explicit Slot(std::shared_ptr<void> release) : release_(std::move(release)) {}
    std::shared_ptr<void> release_;  // its deleter gives the slot back
  };

  // A slot on `controller`, or nullopt when `limit` passes already hold one (try again soon).
  std::optional<Slot> tryAcquire(const std::string& controller);

 private:
  struct State {
    explicit State(int bound) : limit(bound) {}
    const int limit;
    std::mutex mutex;
    std::map<std::string, int> inUse;
  };
  std::shared_ptr<State> state_;
};

}  // namespace ipu::controllers
