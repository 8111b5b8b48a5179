#include "metrics/counter.h"

#include <stdexcept>
#include <string>

#include "metrics/text_format.h"

namespace ipu::metrics {

void Counter::inc(double amount) {
  if (!(amount >= 0)) {  // written so that NaN fails too
    throw std::invalid_argument("a counter cannot decrease: inc(" + formatValue(amount) + ")");
  }
  value_.fetch_add(amount, std::memory_order_relaxed);
}

}  // namespace ipu::metrics
