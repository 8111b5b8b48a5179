#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <string>
#include <vector>

#include "kube/watcher.h"

namespace ipu::kube {

using ObjectPtr = std::shared_ptr<const Json>;

// "namespace/name", or "name" for cluster-scoped objects: the key of caches and work queues.
std::string objectKey(const Json& object);

// What a change to the cache was, for event handlers. old is null for additions, current for deletions.
struct StoreChange {
  enum class Type { kAdded, kUpdated, kDeleted };
  Type type;
  ObjectPtr old;
  ObjectPtr current;
};

// The reflector's cache: objects by key, indexed by namespace and by owner UID. One writer (apply(), fed
// by a Watcher), many readers. Readers get immutable shared objects, so a reader never sees an object
// change under it. A relist is built aside and swapped in at InitDone.
class Store {
 public:
  // Applies one watcher event; returns the changes it made (for InitDone, the difference between the
  // previous picture and the relisted one, deletions included).
  std::vector<StoreChange> apply(WatcherEvent&& event);

  ObjectPtr get(const std::string& key) const;
  ObjectPtr get(const std::string& ns, const std::string& name) const { return get(ns.empty() ? name : ns + "/" + name); }
  std::vector<ObjectPtr> list() const;
  std::vector<ObjectPtr> listNamespace(const std::string& ns) const;
  // Objects with an ownerReference to this UID.
  std::vector<ObjectPtr> listOwnedBy(const std::string& ownerUid) const;
  size_t size() const;
  // True once the first complete list has been swapped in.
  bool hasSynced() const;

 private:
  using Objects = std::map<std::string, ObjectPtr>;
  void indexAdd(const std::string& key, const Json& object);
  void indexRemove(const std::string& key, const Json& object);
  void rebuildIndexes();
  std::vector<ObjectPtr> collect(const std::set<std::string>& keys) const;

  mutable std::shared_mutex mutex_;
  Objects objects_;
  std::map<std::string, std::set<std::string>> byNamespace_;
  std::map<std::string, std::set<std::string>> byOwner_;
  bool synced_ = false;
  // Only touched by the writer.
  Objects pending_;
};

}  // namespace ipu::kube
