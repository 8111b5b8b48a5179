#pragma once

#include "common/result.h"
