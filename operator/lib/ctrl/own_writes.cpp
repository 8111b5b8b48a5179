#include "ctrl/own_writes.h"

namespace ipu::ctrl {

void OwnWrites::wrote(const std::string& key, const std::string& readVersion,
                      const std::string& writtenVersion) {
  const auto now = clock_.now();
  std::lock_guard lock(mutex_);
  // Nothing to recognise the old version by, or nothing changed: no event is on its way.
  if (readVersion.empty() || writtenVersion.empty() || writtenVersion == readVersion) {
    replaced_.erase(key);
    return;
  }
  expiring_.prune(replaced_, [&](const auto& entry) { return now - entry.second.at > forgetAfter_; });
  replaced_[key] = {readVersion, now};
}

bool OwnWrites::behind(const std::string& key, const std::string& cachedVersion) {
  std::lock_guard lock(mutex_);
  const auto found = replaced_.find(key);
  if (found == replaced_.end()) return false;
  if (found->second.version == cachedVersion && clock_.now() - found->second.at <= forgetAfter_) return true;
  replaced_.erase(found);
  return false;
}

std::size_t OwnWrites::tracked() const {
  std::lock_guard lock(mutex_);
  return replaced_.size();
}

}  // namespace ipu::ctrl
