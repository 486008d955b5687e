//===- Clock.h - Elapsed wall time -----------------------------*- C++ -*-===//
#ifndef KILN_RT_CLOCK_H
#define KILN_RT_CLOCK_H

#include <chrono>

namespace kiln::rt {

using Clock = std::chrono::steady_clock;

/// Milliseconds from `start` to now.
inline double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

} // namespace kiln::rt

#endif
