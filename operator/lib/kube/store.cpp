#include "kube/store.h"

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
std::string namespaceOfKey(const std::string& key) {
  const auto slash = key.find('/');
  return slash == std::string::npos ? "" : key.substr(0, slash);
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

Store::Entry Store::entryFor(const ObjectPtr& object) const {
  Entry entry{.resourceVersion = metadataField(*object, "resourceVersion"), .ownerUids = ownerUids(*object)};
  if (layout_ == StoreLayout::kPacked) {
    entry.packed = Json::to_cbor(*object);
  } else {
    entry.parsed = object;
  }
  return entry;
}

ObjectPtr Store::read(const Entry& entry) {
  if (entry.parsed) return entry.parsed;
  // Bytes this store packed itself from a parsed object: they decode.
  return std::make_shared<const Json>(Json::from_cbor(entry.packed));
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
      pending_.clear();
      rebuildIndexes();
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
      } else {
        changes.push_back({StoreChange::Type::kUpdated, read(old->second), object});
        indexRemove(key, old->second);
      }
      indexAdd(key, entry);
      objects_[key] = std::move(entry);
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
        indexRemove(key, old->second);
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

void Store::indexAdd(const std::string& key, const Entry& entry) {
  byNamespace_[namespaceOfKey(key)].insert(key);
  for (const auto& uid : entry.ownerUids) byOwner_[uid].insert(key);
}

void Store::indexRemove(const std::string& key, const Entry& entry) {
  auto removeFrom = [&key](std::map<std::string, std::set<std::string>>& index, const std::string& value) {
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

std::vector<ObjectPtr> Store::collect(const std::set<std::string>& keys) const {
  std::vector<ObjectPtr> out;
  out.reserve(keys.size());
  for (const auto& key : keys) {
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
