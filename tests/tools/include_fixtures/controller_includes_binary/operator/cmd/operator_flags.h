#pragma once

struct OperatorFlags {
  int workers = 1;
};
