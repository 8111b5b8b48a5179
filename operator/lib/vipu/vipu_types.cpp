#include "vipu/vipu_types.h"

namespace ipu::vipu {

std::string toString(ReadyState state) {
  switch (state) {
    case ReadyState::kUndefined:
      return "PS_UNDEFINED";
    case ReadyState::kPending:
      return "PS_PENDING";
    case ReadyState::kActive:
      return "PS_ACTIVE";
    case ReadyState::kRemoved:
      return "PS_REMOVED";
    case ReadyState::kError:
      return "PS_ERROR";
  }
  return "PS_(" + std::to_string(static_cast<std::uint32_t>(state)) + ")";
}

std::string toString(OperationState state) {
  switch (state) {
    case OperationState::kUndefined:
      return "POS_UNDEFINED";
    case OperationState::kIdle:
      return "POS_IDLE";
    case OperationState::kCreating:
      return "POS_CREATING";
    case OperationState::kRemoving:
      return "POS_REMOVING";
    case OperationState::kResetting:
      return "POS_RESETTING";
    case OperationState::kFailed:
      return "POS_FAILED";
  }
  return "POS_(" + std::to_string(static_cast<std::uint32_t>(state)) + ")";
}

std::string toString(IpuLinkRouting routing) {
  switch (routing) {
    case IpuLinkRouting::kUndefined:
      return "IRT_UNDEFINED";
    case IpuLinkRouting::kDnc:
      return "IRT_DNC";
    case IpuLinkRouting::kSwnc:
      return "IRT_SWNC";
    case IpuLinkRouting::kBtnc:
      return "IRT_BTNC";
    case IpuLinkRouting::kRingSwnc:
      return "IRT_RINGSWNC";
  }
  return "IRT_(" + std::to_string(static_cast<std::uint32_t>(routing)) + ")";
}

}  // namespace ipu::vipu
