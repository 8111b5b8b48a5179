#pragma once

#include "common/result.h"
#include "ipujob/job_status.h"

Result admit(const JobStatus& status);
