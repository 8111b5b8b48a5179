#include "kube/rest_client.h"

#include <algorithm>

#include "kube/list_parse.h"
#include "kube/object_skim.h"
#include "kube/status_error.h"

namespace ipu::kube {
namespace {

Error cancelled(const std::string& what) {
  return makeError(ErrorCode::kCancelled, what + ": cancelled");
}

// skipItemFields: of a list reply, the fields of every item left out as it is parsed (parseListSkipping).
Result<Json> parseBody(const std::string& body, const std::string& what,
                       const std::vector<std::string>& skipItemFields) {
  if (body.empty()) return Json::object();
  auto parsed =
      skipItemFields.empty() ? Json::parse(body, nullptr, false) : parseListSkipping(body, skipItemFields);
  if (parsed.is_discarded()) {
    return makeError(ErrorCode::kInternal, what + ": the server's reply is not JSON: " + body.substr(0, 120));
  }
  return parsed;
}

std::string objectName(const Json& object) {
  if (!object.is_object()) return "";
  auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return "";
  return metadata->value("name", "");
}

std::string contentTypeOf(PatchType type) {
  switch (type) {
    case PatchType::kMerge:
      return "application/merge-patch+json";
    case PatchType::kJson:
      return "application/json-patch+json";
    case PatchType::kStrategicMerge:
      return "application/strategic-merge-patch+json";
  }
  return "application/merge-patch+json";
}

// Object text for a request body. Invalid UTF-8 in a string (from a pod's log line, say) is replaced
// rather than thrown: one bad byte must not make an object impossible to write.
std::string serialise(const Json& object) {
  return object.dump(-1, ' ', false, Json::error_handler_t::replace);
}

HttpRequest makeRequest(std::string method, std::string pathAndQuery, std::string body = "",
                        std::string contentType = "application/json") {
  HttpRequest request{
      std::move(method), std::move(pathAndQuery), {{"Accept", "application/json"}}, std::move(body)};
  if (!request.body.empty()) request.headers["Content-Type"] = std::move(contentType);
  return request;
}

// An ERROR watch event carries a Status object: turn it into the Error a failed request would have given.
// A code that is not an HTTP status (not a whole number from 100 to 599) counts as 500.
Error errorFromWatchStatus(const Json& status, const std::string& what) {
  HttpResponse response;
  response.status = 500;
  if (auto code = status.is_object() ? status.find("code") : status.end();
      code != status.end() && code->is_number_integer() && *code >= 100 && *code <= 599) {
    response.status = code->get<int>();
  }
  response.body = serialise(status);
  return errorFromResponse(response, what);
}

}  // namespace

Result<std::optional<WatchEvent>> decodeWatchLine(std::string_view line, const std::string& what,
                                                  const std::vector<std::string>& skipObjectFields) {
  if (line.empty()) return std::optional<WatchEvent>();
  auto event = skipObjectFields.empty() ? Json::parse(line, nullptr, false)
                                        : parseWatchEventSkipping(line, skipObjectFields);
  if (!event.is_object() || !event.contains("type") || !event["type"].is_string() ||
      !event.contains("object")) {
    return makeError(ErrorCode::kInternal, what + ": malformed event: " + std::string(line.substr(0, 120)));
  }
  std::string type = event["type"];
  if (type == "ERROR") return errorFromWatchStatus(event["object"], what);
  return std::optional<WatchEvent>(WatchEvent{std::move(type), std::move(event["object"])});
}

RestClient::RestClient(std::shared_ptr<Transport> transport, const ClusterConfig& config,
                       ClientOptions options, Clock& clock)
    : transport_(std::move(transport)),
      options_(std::move(options)),
      clock_(clock),
      tokens_(config.bearerToken, config.tokenFile),
      throttle_(options_.qps, options_.burst, clock),
      defaultNamespace_(config.ns) {}

void RestClient::authorise(HttpRequest& request) {
  request.headers["User-Agent"] = options_.userAgent;
  if (std::string token = tokens_.token(); !token.empty())
    request.headers["Authorization"] = "Bearer " + token;
}

Result<HttpResponse> RestClient::execute(HttpRequest request, bool idempotent, std::stop_token stop) {
  const std::string what = request.method + " " + request.pathAndQuery;
  auto backoff = options_.retryBase;
  bool reauthorised = false;
  for (int attempt = 0;; ++attempt) {
    if (!throttle_.wait(stop)) return cancelled(what);
    authorise(request);
    auto response = transport_->send(request, stop);
    std::chrono::milliseconds wait = backoff;
    if (!response) {
      const Error& failure = response.error();
      bool safe = idempotent || failure.reason == kRequestNotSent;
      // An answer too large to hold is the same answer again.
      if (failure.code == ErrorCode::kCancelled || failure.reason == kBodyTooLarge || !safe ||
          attempt >= options_.maxRetries)
        return failure;
    } else if (response->status >= 200 && response->status <= 299) {
      return response;
    } else {
      Error failure = errorFromResponse(*response, what);
      // A rotated service-account token: read the file again and retry once.
      if (response->status == 401 && !reauthorised && tokens_.invalidate()) {
        reauthorised = true;
        continue;
      }
      bool retryable =
          response->status == 429 || (response->status >= 500 && (failure.retryAfter || idempotent));
      if (!retryable || attempt >= options_.maxRetries) return failure;
      if (failure.retryAfter)
        wait = std::max<std::chrono::milliseconds>(*failure.retryAfter, std::chrono::milliseconds(1));
    }
    if (!clock_.sleepFor(wait, stop)) return cancelled(what);
    backoff = std::min(backoff * 2, options_.retryMax);
  }
}

Result<Json> RestClient::executeJson(HttpRequest request, bool idempotent, std::stop_token stop,
                                     const std::vector<std::string>& skipItemFields) {
  std::string what = request.method + " " + request.pathAndQuery;
  auto response = execute(std::move(request), idempotent, stop);
  if (!response) return response.error();
  return parseBody(response->body, what, skipItemFields);
}

Result<Json> RestClient::get(const ResourceRef& resource, const std::string& ns, const std::string& name,
                             const std::string& subresource, std::stop_token stop) {
  return executeJson(makeRequest("GET", resource.path(ns, name, subresource)), true, stop);
}

namespace {

HttpRequest listRequest(const ResourceRef& resource, const std::string& ns, const ListOptions& options) {
  std::string query = queryString({{"labelSelector", options.labelSelector},
                                   {"fieldSelector", options.fieldSelector},
                                   {"limit", options.limit > 0 ? std::to_string(options.limit) : ""},
                                   {"continue", options.continueToken},
                                   {"resourceVersion", options.resourceVersion}});
  return makeRequest("GET", resource.path(ns) + query);
}

}  // namespace

Result<Json> RestClient::list(const ResourceRef& resource, const std::string& ns, const ListOptions& options,
                              std::stop_token stop) {
  return executeJson(listRequest(resource, ns, options), true, stop, options.skipItemFields);
}

Result<std::string> RestClient::listText(const ResourceRef& resource, const std::string& ns,
                                         const ListOptions& options, std::stop_token stop) {
  auto response = execute(listRequest(resource, ns, options), true, stop);
  if (!response) return response.error();
  return std::move(response->body);
}

Result<Json> RestClient::parseListText(const std::string& text, const std::string& what,
                                       const std::vector<std::string>& skipItemFields) {
  return parseBody(text, what, skipItemFields);
}

Result<Json> RestClient::listAll(const ResourceRef& resource, const std::string& ns, ListOptions options,
                                 std::stop_token stop) {
  Json all;
  Json items = Json::array();
  while (true) {
    auto page = list(resource, ns, options, stop);
    if (!page) {
      // The continue token outlived etcd's compaction: start again, all at once, as client-go's pager does.
      if (page.error().code == ErrorCode::kGone && !options.continueToken.empty()) {
        options.continueToken.clear();
        options.limit = 0;
        options.resourceVersion.clear();
        items = Json::array();
        all = Json();
        continue;
      }
      return page.error();
    }
    if (all.is_null()) all = *page;  // kind, apiVersion and the first page's metadata (resourceVersion)
    if (auto pageItems = page->find("items"); pageItems != page->end() && pageItems->is_array()) {
      for (auto& item : *pageItems) items.push_back(std::move(item));
    }
    std::string next = (*page)["metadata"].value("continue", "");
    if (next.empty()) {
      all["metadata"]["resourceVersion"] = (*page)["metadata"].value("resourceVersion", "");
      break;
    }
    options.continueToken = next;
  }
  all["items"] = std::move(items);
  all["metadata"].erase("continue");
  all["metadata"].erase("remainingItemCount");
  return all;
}

Result<Json> RestClient::create(const ResourceRef& resource, const std::string& ns, const Json& object,
                                std::stop_token stop) {
  return executeJson(makeRequest("POST", resource.path(ns), serialise(object)), false, stop);
}

Status RestClient::createDiscardingReply(const ResourceRef& resource, const std::string& ns,
                                         const Json& object, std::stop_token stop) {
  auto response = execute(makeRequest("POST", resource.path(ns), serialise(object)), false, stop);
  if (!response) return response.error();
  return {};
}

Result<Json> RestClient::update(const ResourceRef& resource, const std::string& ns, const Json& object,
                                const std::string& subresource, std::stop_token stop) {
  std::string name = objectName(object);
  if (name.empty()) return makeError(ErrorCode::kInvalidArgument, "update: the object has no metadata.name");
  return executeJson(makeRequest("PUT", resource.path(ns, name, subresource), serialise(object)), false,
                     stop);
}

Result<Json> RestClient::patch(const ResourceRef& resource, const std::string& ns, const std::string& name,
                               PatchType type, const Json& patch, const std::string& subresource,
                               std::stop_token stop) {
  if (type == PatchType::kStrategicMerge && !resource.group.empty() &&
      resource.group.find(".k8s.io") == std::string::npos && resource.group != "apps" &&
      resource.group != "batch") {
    // Custom resources reject strategic merge patch with a 415; say so before the round trip.
    return makeError(ErrorCode::kInvalidArgument,
                     "strategic merge patch is not supported for " + resource.resource + "." +
                         resource.group + ": use a merge patch, a JSON patch or server-side apply");
  }
  return executeJson(
      makeRequest("PATCH", resource.path(ns, name, subresource), serialise(patch), contentTypeOf(type)),
      false, stop);
}

Result<Json> RestClient::apply(const ResourceRef& resource, const std::string& ns, const Json& object,
                               const std::string& fieldManager, bool force, const std::string& subresource,
                               std::stop_token stop) {
  std::string name = objectName(object);
  if (name.empty()) return makeError(ErrorCode::kInvalidArgument, "apply: the object has no metadata.name");
  if (fieldManager.empty())
    return makeError(ErrorCode::kInvalidArgument, "apply: a field manager is required");
  std::string query = queryString({{"fieldManager", fieldManager}, {"force", force ? "true" : ""}});
  // Applying is idempotent by definition: the same intent twice gives the same object.
  return executeJson(makeRequest("PATCH", resource.path(ns, name, subresource) + query, serialise(object),
                                 "application/apply-patch+yaml"),
                     true, stop);
}

Result<Json> RestClient::remove(const ResourceRef& resource, const std::string& ns, const std::string& name,
                                const DeleteOptions& options, std::stop_token stop) {
  Json body = {{"kind", "DeleteOptions"}, {"apiVersion", "v1"}};
  if (!options.propagationPolicy.empty()) body["propagationPolicy"] = options.propagationPolicy;
  if (options.gracePeriodSeconds) body["gracePeriodSeconds"] = *options.gracePeriodSeconds;
  if (options.preconditionUid) body["preconditions"]["uid"] = *options.preconditionUid;
  if (options.preconditionResourceVersion)
    body["preconditions"]["resourceVersion"] = *options.preconditionResourceVersion;
  // Deleting twice ends with the same state; a repeated DELETE at worst answers 404, which callers handle.
  return executeJson(makeRequest("DELETE", resource.path(ns, name), serialise(body)), true, stop);
}

Status RestClient::watch(const ResourceRef& resource, const std::string& ns, const WatchOptions& options,
                         const std::function<bool(WatchEvent&&)>& onEvent, std::stop_token stop) {
  std::string query = queryString({{"watch", "1"},
                                   {"labelSelector", options.labelSelector},
                                   {"fieldSelector", options.fieldSelector},
                                   {"resourceVersion", options.resourceVersion},
                                   {"allowWatchBookmarks", options.allowBookmarks ? "true" : ""},
                                   {"timeoutSeconds", std::to_string(options.timeoutSeconds)}});
  HttpRequest request = makeRequest("GET", resource.path(ns) + query);
  const std::string what = "watch " + resource.path(ns);
  if (!throttle_.wait(stop)) return cancelled(what);
  authorise(request);

  std::optional<Error> streamError;
  auto response = transport_->stream(
      request,
      [&](const StreamLine& line) {
        if (line.cut()) return onEvent(skimOversizedEvent(line.text, line.bytes));
        auto event = decodeWatchLine(line.text, what, options.skipObjectFields);
        if (!event) {
          streamError = event.error();
          return false;
        }
        if (!*event) return true;
        return onEvent(std::move(**event));
      },
      stop);
  if (!response) return response.error();
  if (response->status < 200 || response->status > 299) {
    if (response->status == 401) tokens_.invalidate();
    return errorFromResponse(*response, what);
  }
  if (streamError) return *streamError;
  return {};
}

Status RestClient::streamLines(const std::string& pathAndQuery,
                               const std::function<bool(std::string_view)>& onLine, std::stop_token stop) {
  HttpRequest request = makeRequest("GET", pathAndQuery);
  request.headers["Accept"] = "text/plain, */*";
  const std::string what = "GET " + pathAndQuery.substr(0, pathAndQuery.find('?'));
  if (!throttle_.wait(stop)) return cancelled(what);
  authorise(request);
  auto response = transport_->stream(
      request, [&](const StreamLine& line) { return onLine(line.text); }, stop);
  if (!response) return response.error();
  if (response->status < 200 || response->status > 299) {
    if (response->status == 401) tokens_.invalidate();
    return errorFromResponse(*response, what);
  }
  return {};
}

}  // namespace ipu::kube
