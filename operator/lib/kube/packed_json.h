#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

namespace ipu::kube {

// The bytes a packed store (StoreLayout::kPacked) keeps of each object: a binary form of its JSON in which
// the field names and values Kubernetes objects repeat in every copy ("metadata", "creationTimestamp",
// "ownerReferences", "graphcore.ai/v1alpha1", "Running"...) are one byte each, and a uid in its canonical
// text form is its 16 bytes. A cached worker pod takes about a third of its CBOR size
// (bench.kube.packed_json).
//
// The form lives only in this process's memory (it is never stored or sent), so the dictionary may change
// from one build to the next. Every value round-trips exactly: unpackJson(packJson(j)) == j, whatever the
// strings hold (a string that merely looks like a code is kept as a string).
std::vector<std::uint8_t> packJson(const nlohmann::json& value);

// Decodes bytes packJson made. Bytes that are not such a form (cut short, an unknown tag or code, trailing
// bytes) throw PackedJsonError: a store only ever decodes bytes it packed itself, so that is a bug.
nlohmann::json unpackJson(std::span<const std::uint8_t> bytes);

struct PackedJsonError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace ipu::kube
