#include "ipujob/step_outcome.h"

namespace ipu::controllers {

const char* StepOutcome::failpointAfterWrite() const {
  switch (decision) {
    case Decision::kAdmitted:
      return "ipujob/after-admission-recorded";
    case Decision::kRestartDecided:
      return "ipujob/after-restart-recorded";
    case Decision::kRuntimeSecretRecorded:
      return "ipujob/after-runtime-secret-recorded";
    case Decision::kNone:
    case Decision::kRestarted:
    case Decision::kReadmitted:
      break;
  }
  return nullptr;
}

}  // namespace ipu::controllers
