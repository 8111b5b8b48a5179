#pragma once

#include <span>
#include <string>
#include <string_view>

namespace ipu::metrics {

// Pieces of the Prometheus text exposition format 0.0.4
// (github.com/prometheus/docs/blob/main/content/docs/instrumenting/exposition_formats.md).

// A sample value or bucket bound: "NaN", "+Inf", "-Inf"; whole numbers without exponent or fraction ("1",
// "1000000"), anything else in the shortest form that reads back to the same double ("0.005", "1e-05").
std::string formatValue(double value);

// HELP text: backslash and newline escaped.
std::string escapeHelp(std::string_view help);

// A label value: backslash, double quote and newline escaped.
std::string escapeLabelValue(std::string_view value);

// `a="x",b="y"`: the inside of a sample's braces, in the order given. Both spans have the same length.
std::string formatLabels(std::span<const std::string> names, std::span<const std::string> values);

// "# HELP name help\n# TYPE name type\n".
void appendFamilyHeader(std::string& out, std::string_view name, std::string_view help,
                        std::string_view type);

// "name{labels} value\n", or "name value\n" when `labels` (from formatLabels) is empty.
void appendSample(std::string& out, std::string_view name, std::string_view labels, double value);

}  // namespace ipu::metrics
