#pragma once

#include <optional>
#include <string_view>

#include "common/result.h"

namespace ipu::kube {

// Whether text is a Kubernetes resource quantity ("10Gi", "512M", "1.5G", "1e9"), as the API server's
// resource.ParseQuantity reads it: an optional sign, a number with at most one decimal point, and a binary
// suffix (Ki Mi Gi Ti Pi Ei), a decimal one (n u m k M G T P E) or a decimal exponent (e3, E-2). Checked
// where the operator is configured, so a typo stops it at start-up instead of failing every pod it makes.
// InvalidArgument says what a quantity looks like.
Status validateQuantity(std::string_view text);

// The value of a valid quantity ("1Gi" is 1073741824, "500m" 0.5), nullopt for one that is not.
std::optional<long double> quantityValue(std::string_view text);
// Whether two quantities are the same amount however written ("1Gi" and "1024Mi", "0.5" and "500m"), as the
// API server's clients, which write them back in canonical form, see them.
bool sameQuantity(std::string_view a, std::string_view b);

// Whether text is a valid label value: at most 63 characters, alphanumerics with '-', '_' or '.' inside,
// beginning and ending with an alphanumeric (empty is valid).
bool isLabelValue(std::string_view text);

}  // namespace ipu::kube
