//===- Target.h - The GPU that kernels are scheduled for -------*- C++ -*-===//
#ifndef KILN_SCHEDULE_TARGET_H
#define KILN_SCHEDULE_TARGET_H

#include <string>

namespace kiln {

/// The GPU the code is generated for. From the device when there is one,
/// else from defaultTarget(arch) (kiln compile --arch with no GPU).
struct TargetInfo {
  std::string arch = "sm_90";
  int multiprocessors = 132;
  int maxSharedPerBlock = 227 * 1024; // opt-in limit
  int maxSharedPerSM = 228 * 1024;
  int maxThreadsPerSM = 2048; // resident threads per SM (1536 on sm_86/89)
  int l2Bytes = 50 * 1024 * 1024;

  /// Hopper (sm_90, sm_90a): kernels may use wgmma, compiled for sm_90a.
  bool hasWgmma() const { return arch == "sm_90" || arch == "sm_90a"; }
};

/// A typical part of each architecture: sm_90 is an H100/H200 (132 SMs),
/// sm_80 an A100 (108 SMs). Unknown arches get sm_80's limits, except that
/// sm_86, 87, 88, 89, 110, 120 and 121 hold 1536 threads per SM.
TargetInfo defaultTarget(const std::string &arch);

} // namespace kiln

#endif
