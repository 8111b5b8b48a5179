#pragma once

#include "cmd/operator_flags.h"

int run(const OperatorFlags& flags);
