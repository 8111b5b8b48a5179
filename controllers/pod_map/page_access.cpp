#include "pod_map/page_access.h"

#include "common/digest.h"
#include "common/json_access.h"
#include "common/log.h"

namespace ipu::controllers {
namespace {

const kube::ResourceRef kTokenReviews{"authentication.k8s.io", "v1", "tokenreviews", false};
const kube::ResourceRef kSubjectAccessReviews{"authorization.k8s.io", "v1", "subjectaccessreviews", false};

// The token of "Bearer <token>" (the scheme case-insensitive, as RFC 7235 has it); "" for anything else.
std::string bearerToken(std::string_view authorization) {
  constexpr std::string_view kScheme = "bearer ";
  if (authorization.size() <= kScheme.size()) return "";
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != kScheme[i]) return "";
  }
  std::string_view token = authorization.substr(kScheme.size());
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  return std::string(token);
}

}  // namespace

ViewerAccess::ViewerAccess(kube::RestClient& client, Clock& clock)
    : client_(client), clock_(clock), newTokens_(kReviewsPerSecond, kReviewBurst, clock) {}

Result<std::optional<ViewerAccess::User>> ViewerAccess::review(const std::string& token,
                                                               std::stop_token stop) {
  const std::string key = sha256Hex(token, 64);
  {
    std::lock_guard lock(mutex_);
    if (const Answer* known = answers_.find(key); known && known->until > clock_.now()) return known->user;
    if (!newTokens_.tryAcquire()) {
      return makeError(ErrorCode::kResourceExhausted,
                       "too many new tokens to review at once; try again in a few seconds");
    }
  }
  const nlohmann::json request{
      {"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenReview"}, {"spec", {{"token", token}}}};
  auto reviewed = client_.create(kTokenReviews, "", request, stop);
  if (!reviewed) {
    log::warning("could not review a POD map page viewer's token", {{"error", reviewed.error().toString()}});
    return makeError(ErrorCode::kUnavailable, "the API server could not review the token; try again");
  }
  const nlohmann::json& status = member(*reviewed, "status");
  std::optional<User> user;
  if (trueMember(status, "authenticated")) {
    const nlohmann::json& info = member(status, "user");
    user = User{info, stringMember(info, "username")};
  }
  std::lock_guard lock(mutex_);
  answers_.put(key, {clock_.now() + kAnswerLifetime, user});
  return user;
}

Result<bool> ViewerAccess::mayList(const User& user, const std::string& ns, std::stop_token stop) {
  const std::string uid = stringMember(user.info, "uid");
  const std::string key = (uid.empty() ? user.name : uid) + "/" + ns;
  {
    std::lock_guard lock(mutex_);
    if (const Allowed* known = allowed_.find(key); known && known->until > clock_.now())
      return known->allowed;
  }
  nlohmann::json attributes{{"group", "graphcore.ai"}, {"resource", "ipujobs"}, {"verb", "list"}};
  if (!ns.empty()) attributes["namespace"] = ns;
  nlohmann::json spec{{"user", user.name}, {"resourceAttributes", attributes}};
  for (const char* field : {"uid", "groups", "extra"}) {
    if (user.info.contains(field)) spec[field] = user.info[field];
  }
  const nlohmann::json request{
      {"apiVersion", "authorization.k8s.io/v1"}, {"kind", "SubjectAccessReview"}, {"spec", spec}};
  auto reviewed = client_.create(kSubjectAccessReviews, "", request, stop);
  if (!reviewed) {
    log::warning("could not review a POD map page viewer's access", {{"error", reviewed.error().toString()}});
    return makeError(ErrorCode::kUnavailable, "the API server could not review the access; try again");
  }
  const bool allowed = trueMember(member(*reviewed, "status"), "allowed");
  std::lock_guard lock(mutex_);
  allowed_.put(key, {clock_.now() + kAnswerLifetime, allowed});
  return allowed;
}

Result<PageViewer> ViewerAccess::viewerOf(std::string_view authorization,
                                          const std::vector<std::string>& namespaces, std::stop_token stop) {
  const std::string token = bearerToken(authorization);
  if (token.empty()) {
    return makeError(ErrorCode::kUnauthenticated,
                     "this page needs \"Authorization: Bearer <token>\" with a token the cluster accepts");
  }
  auto user = review(token, stop);
  if (!user) return user.error();
  if (!*user) return makeError(ErrorCode::kUnauthenticated, "the cluster does not accept this token");
  PageViewer viewer{.name = (*user)->name};
  auto everywhere = mayList(**user, "", stop);
  if (!everywhere) return everywhere.error();
  if (*everywhere) {
    viewer.allNamespaces = true;
    return viewer;
  }
  std::size_t checked = 0;
  for (const std::string& ns : namespaces) {
    if (ns.empty() || viewer.namespaces.contains(ns)) continue;
    if (++checked > kMaxNamespaceChecks) break;
    auto allowed = mayList(**user, ns, stop);
    if (!allowed) return allowed.error();
    if (*allowed) viewer.namespaces.insert(ns);
  }
  if (viewer.namespaces.empty()) {
    return makeError(ErrorCode::kPermissionDenied,
                     viewer.name +
                         " may not list IPUJobs in any namespace this page shows; name yours with "
                         "?namespace=NAME");
  }
  return viewer;
}

}  // namespace ipu::controllers
