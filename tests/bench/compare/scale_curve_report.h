#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

// How a contender's steady-state figures grow with the number of jobs (scale_curve.h measures them). Pure.
namespace ipu::bench {

// The exponent b of y = a·x^b fitted by least squares to log y against log x; nullopt with fewer than two
// points of positive x and y, or when every x is the same.
std::optional<double> growthExponent(const std::vector<std::pair<double, double>>& points);

// curve: {"points": [{"jobs": N, <figure>: value, ...}, ...]}. Returns {<figure>: exponent} for each figure
// of the curve's table that at least two points have.
nlohmann::json growthOf(const nlohmann::json& curve);

// The curve as a markdown table: a row per point, then the fitted exponents.
std::string curveTable(const nlohmann::json& curve);

}  // namespace ipu::bench
