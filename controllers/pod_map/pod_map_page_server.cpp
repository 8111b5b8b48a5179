#include "pod_map/pod_map_page_server.h"

#include <set>
#include <string>
#include <utility>

#include "common/log.h"
#include "ipujob/child_names.h"
#include "pod_map/page_snapshot.h"

namespace ipu::controllers {
namespace {

using metrics::HttpReply;

// What every reply of the page carries: nothing loads from elsewhere, nothing runs, nothing frames it,
// nothing is kept.
void secure(HttpReply& reply) {
  reply.headers.emplace_back("Content-Security-Policy",
                             "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; "
                             "form-action 'none'; frame-ancestors 'none'");
  reply.headers.emplace_back("X-Content-Type-Options", "nosniff");
  reply.headers.emplace_back("X-Frame-Options", "DENY");
  reply.headers.emplace_back("Referrer-Policy", "no-referrer");
  reply.headers.emplace_back("Cache-Control", "no-store");
}

HttpReply text(int status, const std::string& body) {
  HttpReply reply{.status = status, .contentType = "text/plain; charset=utf-8", .body = body + "\n"};
  secure(reply);
  return reply;
}

int httpStatusOf(ErrorCode code) {
  switch (code) {
    case ErrorCode::kUnauthenticated:
      return 401;
    case ErrorCode::kPermissionDenied:
      return 403;
    case ErrorCode::kResourceExhausted:
      return 429;
    case ErrorCode::kInvalidArgument:
      return 400;
    default:
      return 503;
  }
}

// ?namespace=NAME: a namespace the viewer asks to be checked (theirs, when it has no job on the map yet).
// Only a DNS label is taken; "" when absent.
Result<std::string> askedNamespace(std::string_view query) {
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    if (pair.substr(0, pair.find('=')) == "namespace" && pair.find('=') != std::string_view::npos) {
      const std::string_view value = pair.substr(pair.find('=') + 1);
      if (!isDnsLabel(value))
        return makeError(ErrorCode::kInvalidArgument, "?namespace= takes a namespace's name");
      return std::string(value);
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return std::string();
}

std::vector<std::string> namespacesOn(const PageSnapshot& snapshot, const std::string& asked) {
  std::set<std::string> namespaces;
  if (!asked.empty()) namespaces.insert(asked);
  for (const auto& [uid, job] : snapshot.jobs) namespaces.insert(job.ns);
  for (const QuotaRow& row : snapshot.quotas.quotas) namespaces.insert(row.ns);
  // The asked one first: it is checked even when the page shows more namespaces than are checked.
  std::vector<std::string> ordered;
  if (!asked.empty()) ordered.push_back(asked);
  for (const std::string& ns : namespaces)
    if (ns != asked) ordered.push_back(ns);
  return ordered;
}

}  // namespace

bool PodMapPageServer::needsToken(const metrics::BindAddress& address) {
  return !(address.host == "localhost" || address.host.starts_with("127.") || address.host == "::1");
}

PodMapPageServer::PodMapPageServer(kube::RestClient& client, Options options, Clock& clock)
    : client_(client),
      options_(std::move(options)),
      clock_(clock),
      needsToken_(needsToken(options_.address)),
      access_(client, clock) {}

PodMapPageServer::~PodMapPageServer() {
  server_.reset();
}

Status PodMapPageServer::serve() {
  auto started = metrics::HttpEndpoints::start(
      options_.address, [this](const metrics::HttpRequest& request) { return handle(request); },
      std::string("the POD map page (") + (needsToken_ ? "bearer tokens reviewed" : "loopback only") + ")");
  if (!started) return started.error();
  server_ = std::move(*started);
  return {};
}

void PodMapPageServer::attach(SnapshotSource source) {
  std::lock_guard lock(mutex_);
  source_ = std::move(source);
  last_.reset();
}

void PodMapPageServer::detach() {
  std::lock_guard lock(mutex_);
  source_ = nullptr;
  last_.reset();
}

Result<PageSnapshot> PodMapPageServer::snapshot() {
  std::lock_guard lock(mutex_);
  const Clock::Duration lifetime = source_ ? kSnapshotLifetime : kStandbySnapshotLifetime;
  if (!last_ || clock_.now() - lastAt_ >= lifetime) {
    if (source_) {
      last_ = source_(clock_.wallNow());
    } else {
      auto read = pageSnapshotFromApi(client_, clock_.wallNow());
      if (!read) {
        log::warning("the POD map page could not read the cluster", {{"error", read.error().toString()}});
        return makeError(ErrorCode::kUnavailable, "the operator could not read the cluster; try again");
      }
      last_ = std::move(*read);
    }
    lastAt_ = clock_.now();
  }
  if (!last_)
    return makeError(ErrorCode::kUnavailable, "the operator is still reading the cluster; try again");
  return *last_;
}

metrics::HttpReply PodMapPageServer::handle(const metrics::HttpRequest& request) {
  if (request.path != "/") return text(404, "404 page not found: the POD map is at /");
  if (request.method != "GET" && request.method != "HEAD") {
    HttpReply reply = text(405, "method not allowed: the POD map page is read-only");
    reply.headers.emplace_back("Allow", "GET, HEAD");
    return reply;
  }
  const auto asked = askedNamespace(request.query);
  if (!asked) return text(400, asked.error().message);
  if (needsToken_ && request.authorization.empty()) {
    HttpReply reply = text(401,
                           "this page needs \"Authorization: Bearer <token>\" with a token the cluster "
                           "accepts (docs/pod-map-page.md)");
    reply.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"ipu-operator\"");
    return reply;
  }
  const Result<PageSnapshot> seen = snapshot();
  if (!seen) {
    HttpReply reply = text(503, seen.error().message);
    reply.headers.emplace_back("Retry-After", "5");
    return reply;
  }
  PageViewer viewer{.allNamespaces = true};
  if (needsToken_) {
    auto reviewed = access_.viewerOf(request.authorization, namespacesOn(*seen, *asked));
    if (!reviewed) {
      HttpReply reply = text(httpStatusOf(reviewed.error().code), reviewed.error().message);
      if (reply.status == 401)
        reply.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"ipu-operator\"");
      if (reply.status == 429 || reply.status == 503) reply.headers.emplace_back("Retry-After", "1");
      return reply;
    }
    viewer = std::move(*reviewed);
  }
  HttpReply reply{.status = 200,
                  .contentType = "text/html; charset=utf-8",
                  .body = renderPodMapPage(pageModelOf(*seen, viewer), options_.refreshSeconds)};
  secure(reply);
  return reply;
}

}  // namespace ipu::controllers
