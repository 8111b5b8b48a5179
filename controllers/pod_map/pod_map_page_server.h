#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>

#include "common/clock.h"
#include "common/result.h"
#include "kube/rest_client.h"
#include "metrics/bind_address.h"
#include "metrics/endpoint_router.h"
#include "metrics/http_endpoints.h"
#include "pod_map/page_access.h"
#include "pod_map/pod_map_page.h"

namespace ipu::controllers {

// The POD map page, served read-only at "/" (docs/pod-map-page.md). Every replica listens and serves it: the
// leader attaches what it reads the page from (its caches); a standby, which has none, reads what the leader
// published and the IPUJobs and IPUQuotas from the API server, at most once per kStandbySnapshotLifetime
// and only while someone looks. Bound to a
// loopback address (the default) the page is for whoever reaches it there, which takes a port-forward into
// the operator's pod; bound wider, every request must carry a bearer token the cluster accepts, and shows
// only what that user may list (ViewerAccess).
class PodMapPageServer {
 public:
  struct Options {
    metrics::BindAddress address;
    int refreshSeconds = 5;  // how often the page reloads itself
  };
  // nullopt: the leader cannot tell yet (its caches have not synced).
  using SnapshotSource = std::function<std::optional<PageSnapshot>(Clock::WallTime now)>;

  PodMapPageServer(kube::RestClient& client, Options options, Clock& clock = Clock::real());
  ~PodMapPageServer();
  PodMapPageServer(const PodMapPageServer&) = delete;
  PodMapPageServer& operator=(const PodMapPageServer&) = delete;

  // Starts listening. Unavailable when the address is taken.
  Status serve();

  void attach(SnapshotSource source);
  void detach();

  // One request, without HTTP (tested so).
  metrics::HttpReply handle(const metrics::HttpRequest& request);

  // Whether the page asks viewers for a token at `address`: anywhere but a loopback host.
  static bool needsToken(const metrics::BindAddress& address);

  // A snapshot serves every viewer for this long: a room of refreshing browsers costs one pass over the
  // leader's caches, or a standby's three lists.
  static constexpr Clock::Duration kSnapshotLifetime = std::chrono::seconds(1);
  static constexpr Clock::Duration kStandbySnapshotLifetime = std::chrono::seconds(5);

 private:
  // The last snapshot while it is fresh, else a new one; Unavailable while the leader's caches sync or the
  // API server cannot be read.
  Result<PageSnapshot> snapshot();

  kube::RestClient& client_;
  const Options options_;
  Clock& clock_;
  const bool needsToken_;
  ViewerAccess access_;
  std::mutex mutex_;  // guards the source and the last snapshot; held while a snapshot is read
  SnapshotSource source_;
  std::optional<PageSnapshot> last_;
  Clock::TimePoint lastAt_;
  std::unique_ptr<metrics::HttpEndpoints> server_;  // last: stops serving before the rest goes
};

}  // namespace ipu::controllers
