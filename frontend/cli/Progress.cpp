//===- Progress.cpp - Progress of long kernel builds on stderr ------------===//
#include "Clock.h"
#include "Commands.h"

#include <fmt/format.h>

#include "llvm/Support/raw_ostream.h"

#include <unistd.h>

namespace kiln::cli {

std::function<void(size_t, size_t)> kernelProgress() {
  using rt::Clock;
  struct State {
    Clock::time_point start = Clock::now(), last;
    bool shown = false;
    bool terminal = ::isatty(STDERR_FILENO) != 0;
  };
  auto st = std::make_shared<State>();
  return [st](size_t ready, size_t total) {
    const double s = rt::msSince(st->start) / 1e3;
    const bool done = ready == total;
    // Quiet for the first second; then every 0.25 s on a terminal (one
    // line rewritten in place), every 5 s elsewhere, and once at the end.
    const double every = st->terminal ? 0.25 : 5.0;
    if (s < 1.0 || (!done && st->shown && rt::msSince(st->last) / 1e3 < every))
      return;
    if (done && !st->shown)
      return;
    st->shown = true;
    st->last = Clock::now();
    llvm::errs() << fmt::format("{}kiln: {}/{} kernels ready ({:.1f} s){}",
                                st->terminal ? "\r" : "", ready, total, s,
                                st->terminal && !done ? "" : "\n");
    llvm::errs().flush();
  };
}

} // namespace kiln::cli
