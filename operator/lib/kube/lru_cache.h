#pragma once

#include <cstddef>
#include <list>
#include <unordered_map>
#include <utility>

namespace ipu::kube {

// A map that keeps at most `capacity` entries, dropping the least recently used: memory for "what did we
// do recently" caches stays bounded however many keys pass through. Not thread-safe; callers lock.
template <typename Key, typename Value>
class LruCache {
 public:
  explicit LruCache(std::size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}

  // The value for `key`, now the most recently used; nullptr when absent.
  Value* find(const Key& key) {
    auto found = index_.find(key);
    if (found == index_.end()) return nullptr;
    entries_.splice(entries_.begin(), entries_, found->second);
    return &found->second->second;
  }

  // Sets `key` to `value` (most recently used), evicting the least recently used entry when full.
  Value& put(const Key& key, Value value) {
    if (Value* existing = find(key)) {
      *existing = std::move(value);
      return *existing;
    }
    if (entries_.size() >= capacity_) {
      index_.erase(entries_.back().first);
      entries_.pop_back();
    }
    entries_.emplace_front(key, std::move(value));
    index_.emplace(key, entries_.begin());
    return entries_.front().second;
  }

  // Removes `key`'s entry, if any.
  void erase(const Key& key) {
    auto found = index_.find(key);
    if (found == index_.end()) return;
    entries_.erase(found->second);
    index_.erase(found);
  }

  std::size_t size() const { return entries_.size(); }
  std::size_t capacity() const { return capacity_; }

 private:
  std::size_t capacity_;
  std::list<std::pair<Key, Value>> entries_;  // most recently used first
  std::unordered_map<Key, typename std::list<std::pair<Key, Value>>::iterator> index_;
};

}  // namespace ipu::kube
