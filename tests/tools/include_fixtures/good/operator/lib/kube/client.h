#pragma once

#include "common/result.h"

Result get(const char* path);
