#pragma once

#include "common/result.h"
#include "kube/client.h"

Result reconcile();
