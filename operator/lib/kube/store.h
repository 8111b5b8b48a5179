#pragma once

#include <atomic>
#include <cstdint>
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

// How a store keeps its objects. Parsed: as the JSON trees readers get, so a read costs nothing, but a tree
// takes about six times its object's text (a map node and a string per member). Packed: as CBOR bytes
// (RFC 8949), about the text's size, decoded again by every read: for large caches whose readers take a
// few objects at a time (a job's worker pods), never for one read whole on every pass.
enum class StoreLayout { kParsed, kPacked };

// The reflector's cache: objects by key, indexed by namespace and by owner UID. One writer (apply(), fed
// by a Watcher), many readers. Readers get immutable shared objects, so a reader never sees an object
// change under it. A relist is built aside and swapped in at InitDone.
class Store {
 public:
  explicit Store(StoreLayout layout = StoreLayout::kParsed) : layout_(layout) {}
  // Only while the store is empty (before its informer starts): what it holds stays in the layout it has.
  void setLayout(StoreLayout layout);
  // Applies one watcher event; returns the changes it made (for InitDone, the difference between the
  // previous picture and the relisted one, deletions included).
  std::vector<StoreChange> apply(WatcherEvent&& event);

  ObjectPtr get(const std::string& key) const;
  ObjectPtr get(const std::string& ns, const std::string& name) const {
    return get(ns.empty() ? name : ns + "/" + name);
  }
  std::vector<ObjectPtr> list() const;
  std::vector<ObjectPtr> listNamespace(const std::string& ns) const;
  // Objects with an ownerReference to this UID.
  std::vector<ObjectPtr> listOwnedBy(const std::string& ownerUid) const;
  size_t size() const;
  // Counts the changes the store has taken (each applied, updated or deleted object; a relist that changed
  // something): readers that derive something from the whole store (admission's plan) redo it only when this
  // moved. Starts at 0; never goes back.
  std::uint64_t revision() const { return revision_.load(std::memory_order_acquire); }
  // True once the first complete list has been swapped in.
  bool hasSynced() const;

 private:
  // One cached object in the store's layout, with what the indexes and a relist need without reading it.
  struct Entry {
    ObjectPtr parsed;                  // StoreLayout::kParsed
    std::vector<std::uint8_t> packed;  // StoreLayout::kPacked
    std::string resourceVersion;
    std::vector<std::string> ownerUids;
  };
  using Objects = std::map<std::string, Entry>;
  Entry entryFor(const ObjectPtr& object) const;
  static ObjectPtr read(const Entry& entry);
  void indexAdd(const std::string& key, const Entry& entry);
  void indexRemove(const std::string& key, const Entry& entry);
  void rebuildIndexes();
  std::vector<ObjectPtr> collect(const std::set<std::string>& keys) const;

  StoreLayout layout_;
  mutable std::shared_mutex mutex_;
  Objects objects_;
  std::map<std::string, std::set<std::string>> byNamespace_;
  std::map<std::string, std::set<std::string>> byOwner_;
  bool synced_ = false;
  std::atomic<std::uint64_t> revision_{0};  // bumped under mutex_ (unique), after the change is visible
  // Only touched by the writer.
  Objects pending_;
};

}  // namespace ipu::kube
