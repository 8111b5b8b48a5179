#include "cmd/flags.h"
#include "jobs/job_controller.h"
#include "kube/client.h"

int main() { return reconcile().error.empty() ? 0 : 1; }
