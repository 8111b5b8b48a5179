#include "jobs/job_controller.h"

Result reconcile() { return get("/apis"); }
