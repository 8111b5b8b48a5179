#pragma once

#include <string>

struct Result {
  std::string error;
};
