#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

namespace ipu::controllers {

// Bounds how many reconcile passes act on one V-IPU controller at once. A pass of a job that holds partitions
// calls its controller (ListPartitions, CreatePartition, Reset, Remove); when that controller is slow or does
// not answer, each such pass holds a reconcile worker for as long as the call takes. With a bound below the
// number of workers, a slow controller can hold only that many, and the rest keep serving the jobs of the
// other controllers.
//
// A pass that finds its controller's slots taken does not poll: its job is remembered, and each slot given
// back wakes the job that has waited longest (`wakeWith`), so a thousand waiting jobs cost a pass each per
// slot, not a pass each per retry period. Thread-safe.
class VipuCallSlots {
 public:
  using Wake = std::function<void(const std::string& key)>;

  // `limit`: passes per controller at once; 0: no bound.
  explicit VipuCallSlots(int limit) : state_(std::make_shared<State>(limit)) {}

  // Queues a waiting job's pass again (its controller's work queue). Set before the first pass.
  void wakeWith(Wake wake) { state_->wake = std::move(wake); }

  // Held for the length of a pass; gives the slot back when it goes.
  class Slot {
   private:
    friend class VipuCallSlots;
    explicit Slot(std::shared_ptr<void> release) : release_(std::move(release)) {}
    std::shared_ptr<void> release_;  // its deleter gives the slot back
  };

  // A slot on `controller` for the pass of job `key`, or nullopt when `limit` passes already hold one: the
  // job is then woken when a slot comes back (once, however often it asked).
  std::optional<Slot> tryAcquire(const std::string& controller, const std::string& key);

  // Jobs waiting for a slot on `controller` (what the tests look at).
  std::size_t waiting(const std::string& controller) const;

 private:
  struct Waiters {
    int inUse = 0;
    std::deque<std::string> order;  // longest waiting first
    std::set<std::string> keys;     // the same keys, to remember each once
  };
  struct State {
    explicit State(int bound) : limit(bound) {}
    const int limit;
    Wake wake;
    mutable std::mutex mutex;
    std::map<std::string, Waiters> controllers;
  };
  static void release(State& state, const std::string& controller);
  std::shared_ptr<State> state_;
};

}  // namespace ipu::controllers
