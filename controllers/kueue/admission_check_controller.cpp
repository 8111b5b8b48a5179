#include "kueue/admission_check_controller.h"

#include "common/json_access.h"
#include "common/log.h"
#include "common/time_format.h"
#include "kueue/workload.h"

namespace ipu::controllers {

Result<ctrl::Action> AdmissionCheckReconciler::reconcile(const kube::ObjectPtr& admissionCheck) {
  if (!answersCheck(*admissionCheck)) return ctrl::Action::awaitChange();
  auto patch = activePatch(*admissionCheck, formatTime(clock_.wallNow()));
  if (!patch) return ctrl::Action::awaitChange();
  const std::string name = stringMember(member(*admissionCheck, "metadata"), "name");
  (*patch)["metadata"]["resourceVersion"] =
      stringMember(member(*admissionCheck, "metadata"), "resourceVersion");
  auto patched = client_.patch(admissionCheckResource(), "", name, kube::PatchType::kMerge, *patch, "status");
  if (!patched) return patched.error();
  log::info("marked the IPU placement AdmissionCheck Active", {{"admissionCheck", name}});
  return ctrl::Action::awaitChange();
}

}  // namespace ipu::controllers
