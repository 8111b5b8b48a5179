#include "kube/event_recorder.h"

#include <cstdio>
#include <exception>

#include <unistd.h>

#include "common/log.h"
#include "common/time_format.h"

namespace ipu::kube {
namespace {

// events.k8s.io rejects longer notes; core/v1 accepts them, but `kubectl describe` is no place for more.
constexpr std::size_t kMaxMessageBytes = 1024;
// An Event's name is a DNS subdomain: "<object-name>.<16 hex digits>" within 253 characters.
constexpr std::size_t kMaxNameLength = 253;
constexpr std::size_t kSuffixLength = 17;

std::string_view typeName(EventType type) {
  return type == EventType::kWarning ? "Warning" : "Normal";
}

std::string hostName() {
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') return "unknown";
  return host;
}

// Valid UTF-8 (anything else becomes U+FFFD), at most `maxBytes` long, never cut inside a character:
// the API server rejects invalid UTF-8, and the JSON encoder would throw on it.
std::string cleanText(std::string_view text, std::size_t maxBytes) {
  std::string valid =
      Json::parse(Json(std::string(text)).dump(-1, ' ', false, Json::error_handler_t::replace))
          .get<std::string>();
  if (valid.size() <= maxBytes) return valid;
  std::size_t end = maxBytes;
  while (end > 0 && (static_cast<unsigned char>(valid[end]) & 0xC0) == 0x80) --end;
  valid.resize(end);
  return valid;
}

// One object, however its events are worded: its uid, or its coordinates when it has none (yet).
std::string objectKeyOf(const ObjectReference& object) {
  if (!object.uid.empty()) return object.uid;
  return object.apiVersion + "/" + object.kind + "/" + object.ns + "/" + object.name;
}

std::string describe(const ObjectReference& object) {
  return object.kind + " " + (object.ns.empty() ? "" : object.ns + "/") + object.name;
}

Json involvedObject(const ObjectReference& object) {
  Json reference = Json::object();
  auto set = [&](const char* key, const std::string& value) {
    if (!value.empty()) reference[key] = value;
  };
  set("apiVersion", object.apiVersion);
  set("kind", object.kind);
  set("namespace", object.ns);
  set("name", object.name);
  set("uid", object.uid);
  set("resourceVersion", object.resourceVersion);
  return reference;
}

std::string stringAt(const Json& object, const char* key) {
  if (!object.is_object()) return "";
  auto field = object.find(key);
  return field != object.end() && field->is_string() ? field->get<std::string>() : "";
}

}  // namespace

ObjectReference referenceTo(const Json& object) {
  static const Json kNoMetadata = Json::object();
  if (!object.is_object()) return {};
  auto metadata = object.find("metadata");
  const Json& meta = metadata != object.end() ? *metadata : kNoMetadata;
  return ObjectReference{stringAt(object, "apiVersion"), stringAt(object, "kind"),
                         stringAt(meta, "namespace"),    stringAt(meta, "name"),
                         stringAt(meta, "uid"),          stringAt(meta, "resourceVersion")};
}

KubeEventRecorder::KubeEventRecorder(RestClient& client, EventRecorderOptions options, Clock& clock)
    : client_(client),
      options_(std::move(options)),
      clock_(clock),
      series_(options_.cacheSize),
      rateLimits_(options_.cacheSize),
      random_(std::random_device{}()) {
  if (options_.instance.empty()) options_.instance = hostName();
}

void KubeEventRecorder::record(const ObjectReference& object, EventType type, std::string_view reason,
                               std::string_view message) {
  // Best effort all the way: nothing here may fail the reconcile that reports what it did.
  try {
    if (object.name.empty()) {
      log::warning("event not recorded: the object has no name", {{"reason", std::string(reason)}});
      return;
    }
    const std::string objectKey = objectKeyOf(object);
    if (!allowedByRateLimit(objectKey)) {
      log::debug("event dropped by the per-object rate limit",
                 {{"object", describe(object)}, {"reason", std::string(reason)}});
      return;
    }
    const std::string cleanReason = cleanText(reason, kMaxMessageBytes);
    const std::string cleanMessage = cleanText(message, kMaxMessageBytes);
    std::string seriesKey = objectKey;
    for (std::string_view part :
         {typeName(type), std::string_view(cleanReason), std::string_view(cleanMessage)}) {
      seriesKey += '\n';
      seriesKey += part;
    }
    const std::shared_ptr<Series> series = seriesFor(seriesKey);
    std::lock_guard lock(series->mutex);
    const bool repeat = !series->name.empty() && clock_.now() - series->lastSeen < options_.repeatWindow;
    if (repeat && bumpCount(*series)) return;
    createEvent(*series, object, type, cleanReason, cleanMessage);
  } catch (const std::exception& e) {
    log::warning("event not recorded", {{"object", describe(object)}, {"error", e.what()}});
  }
}

bool KubeEventRecorder::allowedByRateLimit(const std::string& objectKey) {
  if (options_.perObjectBurst <= 0 || options_.perObjectRefillInterval <= std::chrono::seconds::zero())
    return true;
  std::lock_guard lock(mutex_);
  std::unique_ptr<TokenBucket>* bucket = rateLimits_.find(objectKey);
  if (bucket == nullptr) {
    const double qps = 1.0 / static_cast<double>(options_.perObjectRefillInterval.count());
    bucket = &rateLimits_.put(objectKey, std::make_unique<TokenBucket>(qps, options_.perObjectBurst, clock_));
  }
  return (*bucket)->tryAcquire();
}

std::shared_ptr<KubeEventRecorder::Series> KubeEventRecorder::seriesFor(const std::string& key) {
  std::lock_guard lock(mutex_);
  if (std::shared_ptr<Series>* found = series_.find(key)) return *found;
  return series_.put(key, std::make_shared<Series>());
}

bool KubeEventRecorder::bumpCount(Series& series) {
  const int64_t count = series.count + 1;
  const Json patch = {{"count", count}, {"lastTimestamp", formatTime(clock_.wallNow())}};
  auto patched = client_.patch(ResourceRef::events(), series.ns, series.name, PatchType::kMerge, patch);
  if (patched) {
    series.count = count;
    series.lastSeen = clock_.now();
    return true;
  }
  // Expired: the API server keeps Events for an hour by default. The caller starts a new one.
  if (patched.error().code == ErrorCode::kNotFound) return false;
  log::warning("cannot update event",
               {{"event", series.ns + "/" + series.name}, {"error", patched.error().toString()}});
  return true;
}

void KubeEventRecorder::createEvent(Series& series, const ObjectReference& object, EventType type,
                                    std::string_view reason, std::string_view message) {
  // Cluster-scoped objects' Events live in "default", as client-go puts them.
  const std::string ns = object.ns.empty() ? "default" : object.ns;
  const std::string now = formatTime(clock_.wallNow());
  const std::string name = eventName(object.name);
  const Json event = {{"apiVersion", "v1"},
                      {"kind", "Event"},
                      {"metadata", {{"name", name}, {"namespace", ns}}},
                      {"involvedObject", involvedObject(object)},
                      {"type", typeName(type)},
                      {"reason", reason},
                      {"message", message},
                      {"source", {{"component", options_.component}}},
                      {"reportingComponent", options_.component},
                      {"reportingInstance", options_.instance},
                      {"firstTimestamp", now},
                      {"lastTimestamp", now},
                      {"count", 1}};
  auto created = client_.create(ResourceRef::events(), ns, event);
  if (!created) {
    series.name.clear();
    series.count = 0;
    log::warning("cannot record event", {{"object", describe(object)},
                                         {"reason", std::string(reason)},
                                         {"error", created.error().toString()}});
    return;
  }
  const std::string createdName = stringAt(created->value("metadata", Json::object()), "name");
  series.ns = ns;
  series.name = createdName.empty() ? name : createdName;
  series.count = 1;
  series.lastSeen = clock_.now();
}

std::string KubeEventRecorder::eventName(const std::string& objectName) {
  uint64_t suffix = 0;
  {
    std::lock_guard lock(mutex_);
    suffix = random_();
  }
  std::string prefix = objectName.substr(0, kMaxNameLength - kSuffixLength);
  // A cut name may end in '.' or '-', which a DNS label may not.
  while (!prefix.empty() && (prefix.back() == '.' || prefix.back() == '-')) prefix.pop_back();
  char hex[kSuffixLength + 1];
  std::snprintf(hex, sizeof(hex), ".%016llx", static_cast<unsigned long long>(suffix));
  return prefix + hex;
}

}  // namespace ipu::kube
