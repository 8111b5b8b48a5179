// V-IPU replies (operator/vipu/proto_convert.h): the input is parsed (ParseFromArray) as each reply the
// client converts (ListPartitionsReply, ListIPUAttributesReply, GetPartitionIpuofConfigReply,
// GetPartitionStatusReply) and as the CreatePartitionRequest vipu-sim converts; every message that parses is
// converted to the operator's value types.
// Checks: nothing crashes or throws; every field the protocol has survives the trip to a value and back
// (toProto(toValue(m)) equals m without its unknown fields), except a Timestamp, which must come back as the
// same instant, or be left out when system_clock cannot hold it.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/util/message_differencer.h>

#include "fuzz_check.h"
#include "vipu/proto_convert.h"

namespace {

using google::protobuf::Message;
using google::protobuf::util::MessageDifferencer;
namespace pb = virmgrpc;
using namespace ipu::vipu;

template <typename M>
bool parse(M& message, const std::uint8_t* data, std::size_t size) {
  return message.ParseFromArray(data, static_cast<int>(size));
}

// `original` as the value types can hold it: no unknown fields; a sub-message the value has no "absent" for
// is present.
template <typename M>
M known(const M& original) {
  M copy = original;
  copy.DiscardUnknownFields();
  return copy;
}

void checkPartitions(const pb::ListPartitionsReply& reply) {
  for (const pb::Partition& partition : reply.partitions()) {
    pb::Partition expected = known(partition);
    expected.mutable_spec();
    pb::Partition back;
    toProto(toValue(partition), &back);
    FUZZ_CHECK(MessageDifferencer::Equals(back, expected));
    for (const pb::PartitionIpu& ipu : partition.spec().ipus()) {
      pb::PartitionIpu ipuBack;
      toProto(toValue(ipu), &ipuBack);
      FUZZ_CHECK(MessageDifferencer::Equals(ipuBack, known(ipu)));
    }
  }
}

void checkAttributes(const pb::ListIPUAttributesReply& reply) {
  const std::vector<AgentIpuAttributes> agents = toValue(reply);
  FUZZ_CHECK(agents.size() == static_cast<std::size_t>(reply.entries_size()));
  pb::ListIPUAttributesReply back;
  toProto(agents, &back);
  FUZZ_CHECK(MessageDifferencer::Equals(back, known(reply)));
}

void checkIpuofConfig(const pb::GetPartitionIpuofConfigReply& reply) {
  pb::PartitionConfig back;
  toProto(toValue(reply.ipuof_config()), &back);
  FUZZ_CHECK(MessageDifferencer::Equals(back, known(reply.ipuof_config())));
}

void checkStatus(const pb::GetPartitionStatusReply& reply) {
  const pb::PartitionStatus& status = reply.status();
  const PartitionStatus value = toValue(status);
  pb::PartitionStatus back;
  toProto(value, &back);
  pb::PartitionStatus expected = known(status);
  expected.clear_last_auto_reset_time();
  pb::PartitionStatus backWithoutTime = back;
  backWithoutTime.clear_last_auto_reset_time();
  FUZZ_CHECK(MessageDifferencer::Equals(backWithoutTime, expected));

  if (!status.has_last_auto_reset_time()) {
    FUZZ_CHECK(!value.lastAutoResetTime);
    return;
  }
  // The instant in nanoseconds (system_clock's tick here), where 64 bits hold it.
  static_assert(std::is_same_v<std::chrono::system_clock::duration, std::chrono::nanoseconds>);
  const auto& time = status.last_auto_reset_time();
  std::int64_t nanos = 0;
  const bool fits = !__builtin_mul_overflow(time.seconds(), std::int64_t{1'000'000'000}, &nanos) &&
                    !__builtin_add_overflow(nanos, std::int64_t{time.nanos()}, &nanos);
  if (value.lastAutoResetTime) {
    FUZZ_CHECK(fits);
    FUZZ_CHECK(value.lastAutoResetTime->time_since_epoch().count() == nanos);
    // Back on the wire in the Timestamp's normal form, the same instant.
    FUZZ_CHECK(back.has_last_auto_reset_time());
    FUZZ_CHECK(back.last_auto_reset_time().nanos() >= 0 &&
               back.last_auto_reset_time().nanos() < 1'000'000'000);
    FUZZ_CHECK(toValue(back).lastAutoResetTime == value.lastAutoResetTime);
  } else {
    // Left out only when it is centuries away: well within the clock's range, a time is kept.
    FUZZ_CHECK(time.seconds() > 9'000'000'000 || time.seconds() < -9'000'000'000);
    FUZZ_CHECK(!back.has_last_auto_reset_time());
  }
}

void checkCreateRequest(const pb::CreatePartitionRequest& request) {
  pb::CreatePartitionRequest expected = known(request);
  expected.mutable_requirements();
  pb::CreatePartitionRequest back;
  toProto(toValue(request), &back);
  FUZZ_CHECK(MessageDifferencer::Equals(back, expected));
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Replies whose strings are not UTF-8 fail to parse, which protobuf would log for every input.
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (pb::ListPartitionsReply reply; parse(reply, data, size)) checkPartitions(reply);
  if (pb::ListIPUAttributesReply reply; parse(reply, data, size)) checkAttributes(reply);
  if (pb::GetPartitionIpuofConfigReply reply; parse(reply, data, size)) checkIpuofConfig(reply);
  if (pb::GetPartitionStatusReply reply; parse(reply, data, size)) checkStatus(reply);
  if (pb::CreatePartitionRequest request; parse(request, data, size)) checkCreateRequest(request);
  return 0;
}
