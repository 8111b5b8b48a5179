#pragma once

#include "api/job_summary.h"
#include "kube/store.h"

namespace ipu::testing {

// The IPUJob cache as the operator keeps it (packed, each job summarized: api::keepJobsPackedAndSummarized),
// for tests that fill one by hand.
class JobStore : public kube::Store {
 public:
  JobStore() { api::keepJobsPackedAndSummarized(*this); }
};

}  // namespace ipu::testing
