#include "kube/store.h"

#include <stdexcept>

#include "kube/packed_json.h"

namespace ipu::kube {
namespace {

std::string metadataField(const Json& object, const char* field) {
  auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return "";
  auto value = metadata->find(field);
  // A field of another type (no API server sends one) reads as absent instead of throwing out of the watch.
  return value != metadata->end() && value->is_string() ? value->get<std::string>() : "";
}

std::vector<std::string> ownerUids(const Json& object) {
  std::vector<std::string> uids;
  auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return uids;
  auto owners = metadata->find("ownerReferences");
  if (owners == metadata->end() || !owners->is_array()) return uids;
  for (const auto& owner : *owners) {
    if (owner.is_object() && owner.contains("uid") && owner["uid"].is_string()) uids.push_back(owner["uid"]);
  }
  return uids;
}

// The namespace part of an objectKey ("" for a cluster-scoped object's key).
std::string_view namespaceOfKey(std::string_view key) {
  const auto slash = key.find('/');
  return slash == std::string_view::npos ? std::string_view() : key.substr(0, slash);
}

}  // namespace

std::string objectKey(const Json& object) {
  std::string ns = metadataField(object, "namespace"), name = metadataField(object, "name");
  return ns.empty() ? name : ns + "/" + name;
}

void Store::setLayout(StoreLayout layout) {
  std::unique_lock lock(mutex_);
  if (objects_.empty() && pending_.empty()) layout_ = layout;
}

void Store::setSummarizer(std::type_index type, Summarizer summarize) {
  std::unique_lock lock(mutex_);
  if (summaryType_ && *summaryType_ != type)
    throw std::logic_error("a store keeps one type of summary, and this one keeps another");
  if (!objects_.empty() || !pending_.empty()) return;
  summaryType_ = type;
  summarize_ = std::move(summarize);
}

void Store::checkSummaryType(std::type_index type) const {
  if (summaryType_ != type)
    throw std::logic_error("the store keeps no summary of this type: set it before its informer starts");
}

Store::Summary Store::erasedSummary(std::type_index type, const std::string& key) const {
  std::shared_lock lock(mutex_);
  checkSummaryType(type);
  const auto found = objects_.find(key);
  return found == objects_.end() ? nullptr : found->second.summary;
}

std::vector<Store::Summary> Store::erasedSummaries(std::type_index type, const std::string* ns) const {
  std::shared_lock lock(mutex_);
  checkSummaryType(type);
  std::vector<Summary> out;
  if (ns == nullptr) {
    out.reserve(objects_.size());
    for (const auto& [key, entry] : objects_) out.push_back(entry.summary);
    return out;
  }
  auto keys = byNamespace_.find(*ns);
  if (keys == byNamespace_.end()) return out;
  out.reserve(keys->second.size());
  for (std::string_view key : keys->second) out.push_back(objects_.find(key)->second.summary);
  return out;
}

Store::Entry Store::entryFor(const ObjectPtr& object) const {
  Entry entry{.resourceVersion = metadataField(*object, "resourceVersion"), .ownerUids = ownerUids(*object)};
  if (layout_ == StoreLayout::kPacked) {
    entry.packed = packJson(*object);
  } else {
    entry.parsed = object;
  }
  if (summarize_) entry.summary = summarize_(*object);
  return entry;
}

ObjectPtr Store::read(const Entry& entry) {
  if (entry.parsed) return entry.parsed;
  // Bytes this store packed itself from a parsed object: they decode.
  return std::make_shared<const Json>(unpackJson(entry.packed));
}

std::vector<StoreChange> Store::apply(WatcherEvent&& event) {
  using Kind = WatcherEvent::Kind;
  std::vector<StoreChange> changes;
  switch (event.kind) {
    case Kind::kInit:
      pending_.clear();
      break;
    case Kind::kInitApply: {
      // Packed at once: a relist of thousands of objects never holds them all parsed.
      auto object = std::make_shared<const Json>(std::move(event.object));
      pending_[objectKey(*object)] = entryFor(object);
      break;
    }
    case Kind::kInitDone: {
      std::unique_lock lock(mutex_);
      for (const auto& [key, old] : objects_) {
        if (pending_.count(key) == 0) {
          auto last = read(old);
          changes.push_back({StoreChange::Type::kDeleted, last, last});
        }
      }
      for (const auto& [key, current] : pending_) {
        auto old = objects_.find(key);
        if (old == objects_.end()) {
          changes.push_back({StoreChange::Type::kAdded, nullptr, read(current)});
        } else if (old->second.resourceVersion != current.resourceVersion) {
          changes.push_back({StoreChange::Type::kUpdated, read(old->second), read(current)});
        }
      }
      objects_.swap(pending_);
      rebuildIndexes();  // before the old objects go: the indexes' views are of their keys until then
      pending_.clear();
      synced_ = true;
      if (!changes.empty()) ++revision_;
      break;
    }
    case Kind::kApply: {
      auto object = std::make_shared<const Json>(std::move(event.object));
      std::string key = objectKey(*object);
      Entry entry = entryFor(object);
      std::unique_lock lock(mutex_);
      auto old = objects_.find(key);
      if (old == objects_.end()) {
        changes.push_back({StoreChange::Type::kAdded, nullptr, object});
        old = objects_.emplace(std::move(key), std::move(entry)).first;
      } else {
        changes.push_back({StoreChange::Type::kUpdated, read(old->second), object});
        indexRemove(old->first, old->second);
        old->second = std::move(entry);
      }
      indexAdd(old->first, old->second);
      ++revision_;
      break;
    }
    case Kind::kDelete: {
      std::string key = objectKey(event.object);
      std::unique_lock lock(mutex_);
      auto old = objects_.find(key);
      // A delete for an object we never saw still tells handlers (with the final state the server sent).
      ObjectPtr last =
          old != objects_.end() ? read(old->second) : std::make_shared<const Json>(std::move(event.object));
      if (old != objects_.end()) {
        indexRemove(old->first, old->second);
        objects_.erase(old);
        ++revision_;
      }
      changes.push_back({StoreChange::Type::kDeleted, last, last});
      break;
    }
    case Kind::kOversized:
      break;  // not held: the store keeps the version it had
  }
  return changes;
}

void Store::indexAdd(std::string_view key, const Entry& entry) {
  const auto add = [key](Index& index, std::string_view value) {
    auto found = index.find(value);
    if (found == index.end()) found = index.emplace(std::string(value), Keys{}).first;
    found->second.insert(key);
  };
  add(byNamespace_, namespaceOfKey(key));
  for (const auto& uid : entry.ownerUids) add(byOwner_, uid);
}

void Store::indexRemove(std::string_view key, const Entry& entry) {
  auto removeFrom = [key](Index& index, std::string_view value) {
    auto found = index.find(value);
    if (found == index.end()) return;
    found->second.erase(key);
    if (found->second.empty()) index.erase(found);
  };
  removeFrom(byNamespace_, namespaceOfKey(key));
  for (const auto& uid : entry.ownerUids) removeFrom(byOwner_, uid);
}

void Store::rebuildIndexes() {
  byNamespace_.clear();
  byOwner_.clear();
  for (const auto& [key, entry] : objects_) indexAdd(key, entry);
}

std::vector<ObjectPtr> Store::collect(const Keys& keys) const {
  std::vector<ObjectPtr> out;
  out.reserve(keys.size());
  for (std::string_view key : keys) {
    if (auto found = objects_.find(key); found != objects_.end()) out.push_back(read(found->second));
  }
  return out;
}

ObjectPtr Store::get(const std::string& key) const {
  std::shared_lock lock(mutex_);
  auto found = objects_.find(key);
  return found == objects_.end() ? nullptr : read(found->second);
}

std::vector<ObjectPtr> Store::list() const {
  std::shared_lock lock(mutex_);
  std::vector<ObjectPtr> out;
  out.reserve(objects_.size());
  for (const auto& [key, entry] : objects_) out.push_back(read(entry));
  return out;
}

std::vector<ObjectPtr> Store::listNamespace(const std::string& ns) const {
  std::shared_lock lock(mutex_);
  auto found = byNamespace_.find(ns);
  return found == byNamespace_.end() ? std::vector<ObjectPtr>{} : collect(found->second);
}

std::vector<ObjectPtr> Store::listOwnedBy(const std::string& ownerUid) const {
  std::shared_lock lock(mutex_);
  auto found = byOwner_.find(ownerUid);
  return found == byOwner_.end() ? std::vector<ObjectPtr>{} : collect(found->second);
}

size_t Store::size() const {
  std::shared_lock lock(mutex_);
  return objects_.size();
}

bool Store::hasSynced() const {
  std::shared_lock lock(mutex_);
  return synced_;
}

}  // namespace ipu::kube
