//===- CudaDriver.h - The CUDA Driver API, loaded at run time --*- C++ -*-===//
//
// Kiln never links libcuda: it opens libcuda.so.1 with dlopen when a GPU is
// first needed, so every binary (and every CPU test) starts on a machine
// without a GPU and can say plainly why none is usable.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_CUDADRIVER_H
#define KILN_RUNTIME_CUDADRIVER_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::rt {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int ccMajor = 0, ccMinor = 0; // compute capability, e.g. 9.0 on Hopper
  int multiprocessors = 0;
  uint64_t totalMemory = 0; // bytes
  /// "sm_90"
  std::string arch() const;
};

struct DriverInfo {
  int driverVersion = 0; // e.g. 13000 for CUDA 13.0
  std::vector<DeviceInfo> devices;
};

/// Loads the driver and lists the GPUs. The error says why no GPU can be
/// used: libcuda.so.1 missing (no NVIDIA driver), cuInit failing (with the
/// driver's error name), or zero devices.
llvm::Expected<DriverInfo> probeDevices();

/// How long the process's first successful probeDevices() took: loading the
/// driver and cuInit (about 100-190 ms on an H200 machine), which any CUDA
/// program pays once. 0 until then.
double driverStartMs();

/// One line for people: "NVIDIA H200 (sm_90, 132 SMs, 139.8 GiB), driver
/// 13.0" or "no GPU: <reason>".
std::string describeDevices();

} // namespace kiln::rt

#endif
