//===- Parallel.h - Deterministic parallel loops for the evaluator -*- C++ -*-//
//
// parallelFor(n, work, body) calls body(begin, end) over contiguous chunks of
// [0, n), one chunk per hardware thread, when `work` (a rough operation count)
// makes threads worth starting; otherwise it runs body(0, n) inline. Every
// index is handled by exactly one call and each output element is computed
// the same way whatever the chunking, so results are bit-identical for any
// thread count. setEvaluatorThreads caps the threads (1 disables them); the
// CLI sets it from KILN_THREADS.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_REF_PARALLEL_H
#define KILN_REF_PARALLEL_H

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace kiln::ref {

/// Caps the threads parallelFor starts (0: one per hardware thread, the
/// default; 1: none).
void setEvaluatorThreads(unsigned cap);
/// The threads parallelFor may use.
unsigned evaluatorThreads();

template <typename Body>
void parallelFor(int64_t n, double work, const Body &body) {
  constexpr double kMinWorkPerThread = 1 << 20;
  int64_t threads =
      std::min<int64_t>({static_cast<int64_t>(evaluatorThreads()), n,
                         static_cast<int64_t>(work / kMinWorkPerThread)});
  if (threads <= 1) {
    body(int64_t(0), n);
    return;
  }
  std::vector<std::thread> pool;
  int64_t chunk = (n + threads - 1) / threads;
  for (int64_t begin = chunk; begin < n; begin += chunk)
    pool.emplace_back(body, begin, std::min(n, begin + chunk));
  body(int64_t(0), std::min(n, chunk));
  for (std::thread &t : pool)
    t.join();
}

} // namespace kiln::ref

#endif
