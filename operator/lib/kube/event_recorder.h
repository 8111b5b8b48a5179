#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/token_bucket.h"
#include "kube/lru_cache.h"
#include "kube/rest_client.h"

namespace ipu::kube {

enum class EventType { kNormal, kWarning };

// What an Event is about (core/v1 ObjectReference).
struct ObjectReference {
  std::string apiVersion;
  std::string kind;
  std::string ns;  // empty for cluster-scoped objects
  std::string name;
  std::string uid;
  std::string resourceVersion;
};

// The reference to an object as read from the API server (apiVersion, kind, metadata).
ObjectReference referenceTo(const Json& object);

// Tells users what happened to their objects, as `kubectl describe` and `kubectl get events` show it.
// The interface reconcilers depend on; tests substitute a mock.
class EventRecorder {
 public:
  virtual ~EventRecorder() = default;
  // `reason` is a stable CamelCase word tools can match ("PartitionCreated", "QuotaExceeded"); `message`
  // is for people. Best effort: never fails, never throws; problems are logged.
  virtual void record(const ObjectReference& object, EventType type, std::string_view reason,
                      std::string_view message) = 0;
};

struct EventRecorderOptions {
  // source.component and reportingComponent.
  std::string component = "ipu-operator";
  // reportingInstance (and source.host). Empty: the host name.
  std::string instance;
  // A repeat (same object, type, reason and message) within this time of the previous one bumps the count
  // of the existing Event instead of creating another.
  std::chrono::seconds repeatWindow{600};
  // How many recent Events are remembered for that, and how many objects for the rate limit below.
  std::size_t cacheSize = 4096;
  // Per-object spam filter (client-go's defaults): `burst` events at once, then one per refillInterval.
  // Repeats count too. burst 0: no limit.
  int perObjectBurst = 25;
  std::chrono::seconds perObjectRefillInterval{300};
};

// Writes core/v1 Events through the API server. Thread-safe: different objects' events go out in parallel;
// one series of repeats is written in order, so its count only goes up.
class KubeEventRecorder final : public EventRecorder {
 public:
  explicit KubeEventRecorder(RestClient& client, EventRecorderOptions options = {},
                             Clock& clock = Clock::real());

  void record(const ObjectReference& object, EventType type, std::string_view reason,
              std::string_view message) override;

 private:
  // The Event written for a series of repeats, and when the last repeat happened.
  struct Series {
    std::mutex mutex;  // held while the series is written: its repeats go out one at a time
    std::string ns;
    std::string name;  // empty until an Event was created
    int64_t count = 0;
    Clock::TimePoint lastSeen;
  };

  bool allowedByRateLimit(const std::string& objectKey);
  std::shared_ptr<Series> seriesFor(const std::string& key);
  // False if the Event has expired on the server (404): the caller creates a new one.
  bool bumpCount(Series& series);
  void createEvent(Series& series, const ObjectReference& object, EventType type, std::string_view reason,
                   std::string_view message);
  std::string eventName(const std::string& objectName);

  RestClient& client_;
  EventRecorderOptions options_;
  Clock& clock_;
  std::mutex mutex_;  // guards the caches and the random source
  LruCache<std::string, std::shared_ptr<Series>> series_;
  LruCache<std::string, std::unique_ptr<TokenBucket>> rateLimits_;
  std::mt19937_64 random_;
};

}  // namespace ipu::kube
