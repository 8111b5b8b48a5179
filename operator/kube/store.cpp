#include "kube/store.h"

namespace ipu::kube {
namespace {

std::string metadataField(const Json& object, const char* field) {
  auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return "";
  return metadata->value(field, "");
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

}  // namespace

std::string objectKey(const Json& object) {
  std::string ns = metadataField(object, "namespace"), name = metadataField(object, "name");
  return ns.empty() ? name : ns + "/" + name;
}

std::vector<StoreChange> Store::apply(WatcherEvent&& event) {
  using Kind = WatcherEvent::Kind;
  std::vector<StoreChange> changes;
  switch (event.kind) {
    case Kind::kInit:
      pending_.clear();
      break;
    case Kind::kInitApply: {
      auto object = std::make_shared<const Json>(std::move(event.object));
      pending_[objectKey(*object)] = std::move(object);
      break;
    }
    case Kind::kInitDone: {
      std::unique_lock lock(mutex_);
      for (const auto& [key, old] : objects_) {
        if (pending_.count(key) == 0) changes.push_back({StoreChange::Type::kDeleted, old, old});
      }
      for (const auto& [key, current] : pending_) {
        auto old = objects_.find(key);
        if (old == objects_.end()) {
          changes.push_back({StoreChange::Type::kAdded, nullptr, current});
        } else if (metadataField(*old->second, "resourceVersion") != metadataField(*current, "resourceVersion")) {
          changes.push_back({StoreChange::Type::kUpdated, old->second, current});
        }
      }
      objects_.swap(pending_);
      pending_.clear();
      rebuildIndexes();
      synced_ = true;
      break;
    }
    case Kind::kApply: {
      auto object = std::make_shared<const Json>(std::move(event.object));
      std::string key = objectKey(*object);
      std::unique_lock lock(mutex_);
      auto old = objects_.find(key);
      if (old == objects_.end()) {
        changes.push_back({StoreChange::Type::kAdded, nullptr, object});
      } else {
        changes.push_back({StoreChange::Type::kUpdated, old->second, object});
        indexRemove(key, *old->second);
      }
      objects_[key] = object;
      indexAdd(key, *object);
      break;
    }
    case Kind::kDelete: {
      std::string key = objectKey(event.object);
      std::unique_lock lock(mutex_);
      auto old = objects_.find(key);
      // A delete for an object we never saw still tells handlers (with the final state the server sent).
      ObjectPtr last = old != objects_.end() ? old->second : std::make_shared<const Json>(std::move(event.object));
      if (old != objects_.end()) {
        indexRemove(key, *old->second);
        objects_.erase(old);
      }
      changes.push_back({StoreChange::Type::kDeleted, last, last});
      break;
    }
  }
  return changes;
}

void Store::indexAdd(const std::string& key, const Json& object) {
  byNamespace_[metadataField(object, "namespace")].insert(key);
  for (const auto& uid : ownerUids(object)) byOwner_[uid].insert(key);
}

void Store::indexRemove(const std::string& key, const Json& object) {
  auto removeFrom = [&key](std::map<std::string, std::set<std::string>>& index, const std::string& value) {
    auto entry = index.find(value);
    if (entry == index.end()) return;
    entry->second.erase(key);
    if (entry->second.empty()) index.erase(entry);
  };
  removeFrom(byNamespace_, metadataField(object, "namespace"));
  for (const auto& uid : ownerUids(object)) removeFrom(byOwner_, uid);
}

void Store::rebuildIndexes() {
  byNamespace_.clear();
  byOwner_.clear();
  for (const auto& [key, object] : objects_) indexAdd(key, *object);
}

std::vector<ObjectPtr> Store::collect(const std::set<std::string>& keys) const {
  std::vector<ObjectPtr> out;
  out.reserve(keys.size());
  for (const auto& key : keys) {
    if (auto found = objects_.find(key); found != objects_.end()) out.push_back(found->second);
  }
  return out;
}

ObjectPtr Store::get(const std::string& key) const {
  std::shared_lock lock(mutex_);
  auto found = objects_.find(key);
  return found == objects_.end() ? nullptr : found->second;
}

std::vector<ObjectPtr> Store::list() const {
  std::shared_lock lock(mutex_);
  std::vector<ObjectPtr> out;
  out.reserve(objects_.size());
  for (const auto& [key, object] : objects_) out.push_back(object);
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
