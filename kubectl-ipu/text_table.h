#pragma once

#include <string>
#include <vector>

namespace ipu::kubectl_ipu {

// Rows under upper-case headers, columns two spaces apart, as kubectl prints them. When the table is wider
// than `width`, the last column is cut (ending in "...") so that every row fits; "" is shown as "-".
std::string renderTable(const std::vector<std::string>& headers,
                        const std::vector<std::vector<std::string>>& rows, int width);

}  // namespace ipu::kubectl_ipu
