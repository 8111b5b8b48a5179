#include "ctrl/work_queue.h"

#include <utility>

namespace ipu::ctrl {

WorkQueue::WorkQueue(Clock& clock) : WorkQueue(clock, makeDefaultControllerRateLimiter(clock)) {}

WorkQueue::WorkQueue(Clock& clock, RateLimiterPtr rateLimiter)
    : clock_(clock), rateLimiter_(std::move(rateLimiter)) {}

void WorkQueue::add(const Key& key) {
  std::lock_guard lock(mutex_);
  if (addLocked(key)) keysAvailable_.notify_one();
}

void WorkQueue::addAfter(const Key& key, Clock::Duration delay) {
  if (delay <= Clock::Duration::zero()) return add(key);
  std::lock_guard lock(mutex_);
  if (shuttingDown_) return;
  // A new earliest deadline: every idle worker re-plans its wait. Waking only one could leave none
  // watching it if that one then took a different key.
  if (delayed_.schedule(key, deadlineAfter(clock_.now(), delay))) keysAvailable_.notify_all();
}

void WorkQueue::addRateLimited(const Key& key) {
  addAfter(key, rateLimiter_->when(key));
}

void WorkQueue::forget(const Key& key) {
  rateLimiter_->forget(key);
}

int WorkQueue::numRequeues(const Key& key) const {
  return rateLimiter_->numRequeues(key);
}

std::optional<WorkQueue::Key> WorkQueue::get() {
  std::unique_lock lock(mutex_);
  while (!shuttingDown_) {
    // Several delayed keys can come due at once; let other idle workers take the rest.
    if (promoteReadyLocked() > 1) keysAvailable_.notify_all();
    if (!queue_.empty()) {
      Key key = std::move(queue_.front());
      queue_.pop_front();
      dirty_.erase(key);
      processing_.insert(key);
      return key;
    }
    clock_.waitUntil(lock, keysAvailable_, delayed_.nextReadyAt(), {});
  }
  return std::nullopt;
}

void WorkQueue::done(const Key& key) {
  std::lock_guard lock(mutex_);
  if (processing_.erase(key) == 0) return;
  if (dirty_.contains(key)) {
    queue_.push_back(key);
    keysAvailable_.notify_one();
  }
  if (processing_.empty()) drained_.notify_all();
}

void WorkQueue::shutDown() {
  std::lock_guard lock(mutex_);
  shutDownLocked();
}

void WorkQueue::shutDownWithDrain() {
  std::unique_lock lock(mutex_);
  shutDownLocked();
  drained_.wait(lock, [this] { return processing_.empty(); });
}

bool WorkQueue::shuttingDown() const {
  std::lock_guard lock(mutex_);
  return shuttingDown_;
}

std::size_t WorkQueue::len() const {
  std::lock_guard lock(mutex_);
  return depthLocked().queued;
}

WorkQueue::Depth WorkQueue::depth() const {
  std::lock_guard lock(mutex_);
  return depthLocked();
}

bool WorkQueue::addLocked(const Key& key) {
  if (shuttingDown_) return false;
  if (!dirty_.insert(key).second) return false;  // already queued, or already marked for a re-run
  if (processing_.contains(key)) return false;   // done() queues it
  queue_.push_back(key);
  return true;
}

std::size_t WorkQueue::promoteReadyLocked() {
  std::size_t queued = 0;
  for (const Key& key : delayed_.takeReady(clock_.now())) {
    if (addLocked(key)) ++queued;
  }
  return queued;
}

void WorkQueue::shutDownLocked() {
  shuttingDown_ = true;
  queue_.clear();
  dirty_.clear();
  delayed_.clear();
  keysAvailable_.notify_all();
}

WorkQueue::Depth WorkQueue::depthLocked() const {
  // Delayed keys are moved onto the queue lazily, by get(); count the due ones where they logically are
  // already, so the numbers do not depend on whether a worker happened to look.
  std::size_t due = 0;
  std::size_t dueAndNew = 0;
  delayed_.forEachReady(clock_.now(), [&](const Key& key) {
    ++due;
    if (!dirty_.contains(key) && !processing_.contains(key)) ++dueAndNew;
  });
  return Depth{
      .queued = queue_.size() + dueAndNew,
      .processing = processing_.size(),
      .delayed = delayed_.size() - due,
  };
}

}  // namespace ipu::ctrl
