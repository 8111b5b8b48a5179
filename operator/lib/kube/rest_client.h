#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/clock.h"
#include "common/result.h"
#include "common/token_bucket.h"
#include "kube/cluster_config.h"
#include "kube/resource.h"
#include "kube/token_source.h"
#include "kube/transport.h"

namespace ipu::kube {

using Json = nlohmann::json;

struct ListOptions {
  std::string labelSelector;
  std::string fieldSelector;
  int64_t limit = 0;  // page size; 0 = everything at once
  std::string continueToken;
  std::string resourceVersion;  // "" = most recent (a quorum read)
  // Fields of every item left out as the reply is parsed (parseListSkipping), e.g. "metadata.managedFields".
  std::vector<std::string> skipItemFields;
};

struct WatchOptions {
  std::string labelSelector;
  std::string fieldSelector;
  std::string resourceVersion;  // start after this version
  int timeoutSeconds = 300;     // the server ends the watch after this; the caller re-watches
  bool allowBookmarks = true;
  // Fields of every event's object left out as it is parsed (parseWatchEventSkipping).
  std::vector<std::string> skipObjectFields;
};

struct DeleteOptions {
  std::string propagationPolicy;  // Foreground | Background | Orphan; "" = the resource's default
  std::optional<std::string> preconditionUid;
  std::optional<std::string> preconditionResourceVersion;
  std::optional<int64_t> gracePeriodSeconds;
};

enum class PatchType { kMerge, kJson, kStrategicMerge };

struct WatchEvent {
  std::string type;  // ADDED, MODIFIED, DELETED, BOOKMARK
  Json object;
  // Non-zero for an event whose line was longer than the transport holds: `object` is then only the
  // identity read from its first bytes (skimOversizedEvent), and this its size.
  std::size_t oversizedBytes = 0;
};

// One line of a watch response's body (RestClient::watch's decoder; `what` names the watch in messages).
// An empty line is no event; a line that is not {"type": <string>, "object": ...} is kInternal (a malformed
// event); an ERROR event is the Error that its Status object describes, as a failed request would give it
// (410 Gone as kGone).
Result<std::optional<WatchEvent>> decodeWatchLine(std::string_view line, const std::string& what,
                                                  const std::vector<std::string>& skipObjectFields = {});

struct ClientOptions {
  double qps = 50;  // client-side limit, like client-go's rest.Config QPS/Burst
  int burst = 100;
  int maxRetries = 5;                        // for 429, 5xx and dropped connections
  std::chrono::milliseconds retryBase{200};  // first backoff, doubled per attempt
  std::chrono::milliseconds retryMax{30000};
  std::string userAgent = "ipu-operator";
};

// Typed verbs over the Kubernetes REST API. Objects are JSON (nlohmann); the project's own types convert at
// the edges. Thread-safe. Every failure is an Error whose code is the retry decision (see common/error.h).
//
// Retries inside the client: a request answered 429 (or 5xx with Retry-After) waits as told and is sent
// again; reads are also retried after 5xx and dropped connections, with exponential backoff. Writes are
// retried only when the request never reached the server (a stale pooled connection after an API server
// restart) or the server said Retry-After, since otherwise they may have happened.
class RestClient {
 public:
  RestClient(std::shared_ptr<Transport> transport, const ClusterConfig& config, ClientOptions options = {},
             Clock& clock = Clock::real());

  const std::string& defaultNamespace() const { return defaultNamespace_; }

  Result<Json> get(const ResourceRef& resource, const std::string& ns, const std::string& name,
                   const std::string& subresource = "", std::stop_token stop = {});
  // One page; its metadata.continue is the next page's token.
  Result<Json> list(const ResourceRef& resource, const std::string& ns, const ListOptions& options = {},
                    std::stop_token stop = {});
  // The same page as the server sent it, unparsed: for a reader that parses it apart from reading it (the
  // Watcher reads the next page while it parses this one). options.skipItemFields is for parseListText.
  Result<std::string> listText(const ResourceRef& resource, const std::string& ns,
                               const ListOptions& options = {}, std::stop_token stop = {});
  // A page listText read, parsed as list() parses it (`what`, e.g. "list /api/v1/pods", names it in errors).
  static Result<Json> parseListText(const std::string& text, const std::string& what,
                                    const std::vector<std::string>& skipItemFields);
  // Every page, items joined. An expired continue token (410) restarts once as a single unpaginated list,
  // as client-go's pager does.
  Result<Json> listAll(const ResourceRef& resource, const std::string& ns, ListOptions options = {},
                       std::stop_token stop = {});
  Result<Json> create(const ResourceRef& resource, const std::string& ns, const Json& object,
                      std::stop_token stop = {});
  // The same POST with the reply's object left unparsed (its errors are read as create()'s): for a caller
  // that gives the object its name and needs only to know it was created. Parsing a pod's reply costs more
  // CPU than sending it.
  Status createDiscardingReply(const ResourceRef& resource, const std::string& ns, const Json& object,
                               std::stop_token stop = {});
  // PUT; the object's metadata.resourceVersion makes it conditional (409 Conflict when stale).
  Result<Json> update(const ResourceRef& resource, const std::string& ns, const Json& object,
                      const std::string& subresource = "", std::stop_token stop = {});
  Result<Json> updateStatus(const ResourceRef& resource, const std::string& ns, const Json& object,
                            std::stop_token stop = {}) {
    return update(resource, ns, object, "status", stop);
  }
  Result<Json> patch(const ResourceRef& resource, const std::string& ns, const std::string& name,
                     PatchType type, const Json& patch, const std::string& subresource = "",
                     std::stop_token stop = {});
  // Server-side apply: the object is the field manager's whole intent; creates it when missing.
  Result<Json> apply(const ResourceRef& resource, const std::string& ns, const Json& object,
                     const std::string& fieldManager, bool force = true, const std::string& subresource = "",
                     std::stop_token stop = {});
  // The deleted object (or the Status the server returns for it).
  Result<Json> remove(const ResourceRef& resource, const std::string& ns, const std::string& name,
                      const DeleteOptions& options = {}, std::stop_token stop = {});

  // Streams watch events to onEvent until the server closes the watch (ok), onEvent returns false (ok),
  // `stop` (Cancelled), or an error: 410 Gone (as an HTTP status or an ERROR event) comes back as kGone.
  Status watch(const ResourceRef& resource, const std::string& ns, const WatchOptions& options,
               const std::function<bool(WatchEvent&&)>& onEvent, std::stop_token stop = {});
  // GETs a text body (a pod's log: /api/v1/namespaces/<ns>/pods/<pod>/log?follow=true) and hands each line
  // to onLine as it arrives, until the body ends (ok), onLine returns false (ok), `stop` (Cancelled) or an
  // error: a non-2xx answer as its Error, no byte for the transport's idle timeout as DeadlineExceeded. A
  // line longer than the transport holds arrives cut to its first kOversizedLinePrefix bytes.
  Status streamLines(const std::string& pathAndQuery, const std::function<bool(std::string_view)>& onLine,
                     std::stop_token stop = {});

 private:
  Result<HttpResponse> execute(HttpRequest request, bool idempotent, std::stop_token stop);
  Result<Json> executeJson(HttpRequest request, bool idempotent, std::stop_token stop,
                           const std::vector<std::string>& skipItemFields = {});
  void authorise(HttpRequest& request);

  std::shared_ptr<Transport> transport_;
  ClientOptions options_;
  Clock& clock_;
  TokenSource tokens_;
  TokenBucket throttle_;
  std::string defaultNamespace_;
};

}  // namespace ipu::kube
