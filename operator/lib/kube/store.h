#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <typeindex>
#include <typeinfo>
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
// takes about six times its object's text (a map node and a string per member). Packed: as bytes
// (packed_json.h: a binary form in which Kubernetes' repeated names are a byte each), about a third of the
// text's size, decoded again by every read: for large caches whose readers take a few objects at a time (a
// job's worker pods), never for one read whole on every pass.
enum class StoreLayout { kParsed, kPacked };

// The reflector's cache: objects by key, indexed by namespace and by owner UID. One writer (apply(), fed
// by a Watcher), many readers. Readers get immutable shared objects, so a reader never sees an object
// change under it. A relist is built aside and swapped in at InitDone.
//
// A store may also keep a summary of each object: what the readers that walk every object on every pass
// need of it, worked out once by the writer as the object arrives (as client-go's indexers are). Such a
// walk then reads neither JSON nor, for a packed store, its bytes. A store keeps at most one type of summary.
class Store {
 public:
  explicit Store(StoreLayout layout = StoreLayout::kParsed) : layout_(layout) {}
  // Only while the store is empty (before its informer starts): what it holds stays in the layout it has.
  void setLayout(StoreLayout layout);
  // Keeps summarize(object) beside every object from now on. Only while the store is empty; setting the
  // same type again replaces the function, another type is a programming error (std::logic_error).
  template <class T>
  void setSummary(std::function<T(const Json&)> summarize) {
    setSummarizer(typeid(T), [summarize = std::move(summarize)](const Json& object) -> Summary {
      return std::make_shared<const T>(summarize(object));
    });
  }
  // The summaries of every object (of one namespace's), in key order. Asking for a type the store does not
  // keep is a programming error (std::logic_error): set it before the informer starts.
  template <class T>
  std::vector<std::shared_ptr<const T>> summaries() const {
    return typed<T>(erasedSummaries(typeid(T), nullptr));
  }
  template <class T>
  std::vector<std::shared_ptr<const T>> summariesInNamespace(const std::string& ns) const {
    return typed<T>(erasedSummaries(typeid(T), &ns));
  }
  // One object's summary; null when the store does not hold the key.
  template <class T>
  std::shared_ptr<const T> summary(const std::string& key) const {
    return std::static_pointer_cast<const T>(erasedSummary(typeid(T), key));
  }
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
  using Summary = std::shared_ptr<const void>;
  using Summarizer = std::function<Summary(const Json&)>;
  // One cached object in the store's layout, with what the indexes and a relist need without reading it.
  struct Entry {
    ObjectPtr parsed;                  // StoreLayout::kParsed
    std::vector<std::uint8_t> packed;  // StoreLayout::kPacked
    Summary summary;                   // when the store keeps summaries
    std::string resourceVersion;
    std::vector<std::string> ownerUids;
  };
  using Objects = std::map<std::string, Entry, std::less<>>;
  // The indexes name objects by views of objects_' own keys (a map's keys stay where they are until erased,
  // and an object leaves the indexes before it leaves objects_): one copy of each key, not three.
  using Keys = std::set<std::string_view>;
  using Index = std::map<std::string, Keys, std::less<>>;

  void setSummarizer(std::type_index type, Summarizer summarize);
  std::vector<Summary> erasedSummaries(std::type_index type, const std::string* ns) const;
  Summary erasedSummary(std::type_index type, const std::string& key) const;
  void checkSummaryType(std::type_index type) const;
  template <class T>
  static std::vector<std::shared_ptr<const T>> typed(std::vector<Summary> erased) {
    std::vector<std::shared_ptr<const T>> out;
    out.reserve(erased.size());
    for (Summary& summary : erased) out.push_back(std::static_pointer_cast<const T>(std::move(summary)));
    return out;
  }
  Entry entryFor(const ObjectPtr& object) const;
  static ObjectPtr read(const Entry& entry);
  void indexAdd(std::string_view key, const Entry& entry);
  void indexRemove(std::string_view key, const Entry& entry);
  void rebuildIndexes();
  std::vector<ObjectPtr> collect(const Keys& keys) const;

  StoreLayout layout_;
  std::optional<std::type_index> summaryType_;
  Summarizer summarize_;
  mutable std::shared_mutex mutex_;
  Objects objects_;
  Index byNamespace_;
  Index byOwner_;
  bool synced_ = false;
  std::atomic<std::uint64_t> revision_{0};  // bumped under mutex_ (unique), after the change is visible
  // Only touched by the writer.
  Objects pending_;
};

}  // namespace ipu::kube
