#include "ctrl/finalizer.h"

#include <algorithm>
#include <utility>

namespace ipu::ctrl {
namespace {

const Json& metadataOf(const Json& object) {
  static const Json empty = Json::object();
  const auto metadata = object.find("metadata");
  return metadata != object.end() && metadata->is_object() ? *metadata : empty;
}

Json finalizersOf(const Json& object) {
  const Json& metadata = metadataOf(object);
  const auto finalizers = metadata.find("finalizers");
  return finalizers != metadata.end() && finalizers->is_array() ? *finalizers : Json::array();
}

bool beingDeleted(const Json& object) {
  const Json& metadata = metadataOf(object);
  const auto deletion = metadata.find("deletionTimestamp");
  return deletion != metadata.end() && !deletion->is_null();
}

// The API server answers a JSON patch whose `test` fails with 422 Unprocessable Entity, as it does an
// invalid object; the only test here is that the object is the version read, so it is a conflict: read again
// and retry, never an error retrying cannot fix.
Status asConflictWhenUnprocessable(const Result<Json>& patched) {
  if (patched) return {};
  Error error = patched.error();
  if (error.httpStatus == 422) {
    error.code = ErrorCode::kConflict;
    error.message += " (the object changed since it was read)";
  }
  return error;
}

}  // namespace

Finalizer::Finalizer(kube::RestClient& client, kube::ResourceRef resource, std::string name,
                     OwnWrites* ownWrites)
    : client_(client), resource_(std::move(resource)), name_(std::move(name)), ownWrites_(ownWrites) {}

void Finalizer::recordWrite(const Json& object, const Json& written) const {
  if (ownWrites_ == nullptr) return;
  const Json& metadata = metadataOf(object);
  const std::string ns = metadata.value("namespace", "");
  const std::string name = metadata.value("name", "");
  ownWrites_->wrote(ns.empty() ? name : ns + "/" + name, metadata.value("resourceVersion", ""),
                    metadataOf(written).value("resourceVersion", ""));
}

bool Finalizer::isSetOn(const Json& object) const {
  const Json finalizers = finalizersOf(object);
  return std::find(finalizers.begin(), finalizers.end(), Json(name_)) != finalizers.end();
}

Result<Action> Finalizer::run(const Json& object, const Step& apply, const Cleanup& cleanup) const {
  const bool set = isSetOn(object);
  if (beingDeleted(object)) {
    if (!set) return Action::awaitChange();
    auto cleaned = cleanup(object);
    if (!cleaned) return cleaned.error();
    if (*cleaned) return **cleaned;  // not done yet: the finalizer stays
    if (auto removed = remove(object); !removed) return removed.error();
    return Action::awaitChange();
  }
  if (!set) {
    if (auto added = add(object); !added) return added.error();
    return Action::awaitChange();
  }
  return apply(object);
}

Status Finalizer::add(const Json& object) const {
  const Json& metadata = metadataOf(object);
  const bool hasList = metadata.contains("finalizers") && metadata["finalizers"].is_array();
  // `test` on the list as read (or on its absence through the resourceVersion): a concurrent change of the
  // finalizers fails the patch (422) instead of being overwritten, and the next pass sees the new list.
  Json patch = Json::array();
  if (hasList) {
    patch.push_back({{"op", "test"}, {"path", "/metadata/finalizers"}, {"value", metadata["finalizers"]}});
    patch.push_back({{"op", "add"}, {"path", "/metadata/finalizers/-"}, {"value", name_}});
  } else {
    patch.push_back({{"op", "test"},
                     {"path", "/metadata/resourceVersion"},
                     {"value", metadata.value("resourceVersion", "")}});
    patch.push_back({{"op", "add"}, {"path", "/metadata/finalizers"}, {"value", Json::array({name_})}});
  }
  const auto patched = client_.patch(resource_, metadata.value("namespace", ""), metadata.value("name", ""),
                                     kube::PatchType::kJson, patch);
  if (patched) recordWrite(object, *patched);
  return asConflictWhenUnprocessable(patched);
}

Status Finalizer::remove(const Json& object) const {
  const Json& metadata = metadataOf(object);
  const Json finalizers = finalizersOf(object);
  Json remaining = Json::array();
  for (const Json& finalizer : finalizers) {
    if (finalizer != name_) remaining.push_back(finalizer);
  }
  const Json patch =
      Json::array({{{"op", "test"}, {"path", "/metadata/finalizers"}, {"value", finalizers}},
                   {{"op", "replace"}, {"path", "/metadata/finalizers"}, {"value", remaining}}});
  auto patched = client_.patch(resource_, metadata.value("namespace", ""), metadata.value("name", ""),
                               kube::PatchType::kJson, patch);
  // Already gone: the last finalizer went and the object with it; cleanup is done either way.
  if (!patched && patched.error().code == ErrorCode::kNotFound) return {};
  if (patched) recordWrite(object, *patched);
  return asConflictWhenUnprocessable(patched);
}

}  // namespace ipu::ctrl
