#pragma once

#include <stop_token>

#include "cmd/operator_flags.h"
#include "cmd/partition_prefix.h"
#include "cmd/telemetry.h"
#include "common/result.h"
#include "kube/rest_client.h"
#include "pod_map/pod_map_page_server.h"

namespace ipu::cmd {

enum class TermEnd {
  kStopped,         // the process was asked to stop (SIGTERM, SIGINT)
  kLeadershipLost,  // another replica may lead now; everything this term held has stopped
};

// One term of the operator: it campaigns for the Lease (at once without leader election), leads, and ends
// when the process stops or its leadership is lost. Everything a leader keeps in memory belongs to the term
// (V-IPU connections, informers and their caches, the controllers, the admission inventory, the event
// recorder), so a term that lost the Lease leaves nothing behind and the next one starts from what the API
// server and V-IPU say, as a new process would, without one: a single replica outlives an API server that
// was away for longer than the renew deadline.
//
// V-IPU is fenced the moment the Lease is lost: the term's clients refuse new calls and cancel the ones in
// flight before the controllers have even been asked to stop.
//
// Every term of a process campaigns as `identity`: a term that finds the Lease still naming it (its
// predecessor's, whose work has ended) renews it at once instead of waiting for it to expire.
//
// Fails when the term cannot start (a V-IPU client that cannot be made) or a cache never syncs.
// `prefixes`: resolved once per process (resolvePartitionPrefixes), the same in every term. `podMapPage`
// (null: none) is given the term's caches while it leads.
Result<TermEnd> runLeadershipTerm(const OperatorFlags& flags, const PartitionPrefixes& prefixes,
                                  const std::string& identity, kube::RestClient& client, Telemetry& telemetry,
                                  controllers::PodMapPageServer* podMapPage, std::stop_token stop);

}  // namespace ipu::cmd
