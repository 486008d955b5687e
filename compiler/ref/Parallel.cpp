#include "ref/Parallel.h"

#include <atomic>

namespace kiln::ref {

static std::atomic<unsigned> threadCap{0};

void setEvaluatorThreads(unsigned cap) { threadCap = cap; }

unsigned evaluatorThreads() {
  unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  unsigned cap = threadCap;
  return cap ? std::min(hw, cap) : hw;
}

} // namespace kiln::ref
