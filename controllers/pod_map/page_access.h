#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "common/token_bucket.h"
#include "kube/lru_cache.h"
#include "kube/rest_client.h"
#include "pod_map/pod_map_page.h"

namespace ipu::controllers {

// Who asks for the POD map page when it is bound wider than loopback, as the API server says: the request's
// bearer token is reviewed (TokenReview), and the user may see a namespace when a SubjectAccessReview allows
// them to list its IPUJobs (cluster-wide first, then each namespace the page would show). A user allowed in
// no namespace is refused, as is a request without a token or with one the API server does not accept.
//
// Every request is hostile until reviewed, so reviewing costs the cluster little whatever arrives: answers
// are kept for kAnswerLifetime by the token's digest (a refreshing page asks again every few seconds) in a
// bounded cache, and tokens not seen recently are reviewed at most kReviewsPerSecond (a flood of made-up
// tokens meets 429, not the API server).
class ViewerAccess {
 public:
  explicit ViewerAccess(kube::RestClient& client, Clock& clock = Clock::real());

  // Unauthenticated (401: no bearer token, or one TokenReview does not accept), PermissionDenied (403: may
  // list IPUJobs in none of `namespaces`), ResourceExhausted (429: too many new tokens at once), Unavailable
  // (the reviews could not be made).
  Result<PageViewer> viewerOf(std::string_view authorization, const std::vector<std::string>& namespaces,
                              std::stop_token stop = {});

  static constexpr Clock::Duration kAnswerLifetime = std::chrono::seconds(30);
  static constexpr double kReviewsPerSecond = 5;
  static constexpr int kReviewBurst = 20;
  static constexpr std::size_t kCachedAnswers = 1024;
  // The most namespaces checked one by one for one user (each a SubjectAccessReview, cached).
  static constexpr std::size_t kMaxNamespaceChecks = 256;

 private:
  struct User {
    nlohmann::json info;  // TokenReview's status.user: username, uid, groups, extra
    std::string name;
  };
  struct Answer {
    Clock::TimePoint until;
    std::optional<User> user;  // nullopt: the token was not accepted
  };
  struct Allowed {
    Clock::TimePoint until;
    bool allowed = false;
  };

  Result<std::optional<User>> review(const std::string& token, std::stop_token stop);
  Result<bool> mayList(const User& user, const std::string& ns, std::stop_token stop);

  kube::RestClient& client_;
  Clock& clock_;
  std::mutex mutex_;  // guards the caches and the bucket; reviews are made outside it
  TokenBucket newTokens_;
  kube::LruCache<std::string, Answer> answers_{kCachedAnswers};       // by the token's digest
  kube::LruCache<std::string, Allowed> allowed_{kCachedAnswers * 4};  // by user uid/name + "/" + namespace
};

}  // namespace ipu::controllers
