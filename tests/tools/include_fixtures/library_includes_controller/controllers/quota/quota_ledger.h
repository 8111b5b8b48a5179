#pragma once

struct QuotaLedger {
  int used = 0;
};
