//===- DriverApi.h - The driver entry points Kiln calls --------*- C++ -*-===//
//
// Internal to runtime/ (it includes <cuda.h>; only runtime's .cpp files may
// include it). KILN_DRIVER_FUNCTIONS lists every driver entry point Kiln
// uses, once. Each is resolved with dlsym under the name <cuda.h> maps it to,
// so `cuMemAlloc` binds the ABI version this header was written for
// (`cuMemAlloc_v2`, `cuEventElapsedTime_v2`, ...) and never a legacy one; the
// per-thread-default-stream (_ptsz) variants are not used, so a null stream
// is the legacy default stream. Members carry the mapped names too, so
// `driver->cuMemAlloc(...)` calls the right pointer.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_DRIVERAPI_H
#define KILN_RUNTIME_DRIVERAPI_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cuda.h>

namespace kiln::rt {

#define KILN_DRIVER_FUNCTIONS(X)                                               \
  X(cuInit)                                                                    \
  X(cuDriverGetVersion)                                                        \
  X(cuDeviceGetCount)                                                          \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetName)                                                           \
  X(cuDeviceGetAttribute)                                                      \
  X(cuDeviceTotalMem)                                                          \
  X(cuGetErrorName)                                                            \
  X(cuGetErrorString)                                                          \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuCtxSetCurrent)                                                           \
  X(cuCtxSynchronize)                                                          \
  X(cuMemAlloc)                                                                \
  X(cuMemFree)                                                                 \
  X(cuMemGetInfo)                                                              \
  X(cuMemcpyHtoDAsync)                                                         \
  X(cuMemcpyDtoHAsync)                                                         \
  X(cuMemcpyDtoDAsync)                                                         \
  X(cuMemsetD32Async)                                                          \
  X(cuStreamCreate)                                                            \
  X(cuStreamDestroy)                                                           \
  X(cuStreamSynchronize)                                                       \
  X(cuEventCreate)                                                             \
  X(cuEventRecord)                                                             \
  X(cuEventSynchronize)                                                        \
  X(cuEventElapsedTime)                                                        \
  X(cuEventDestroy)                                                            \
  X(cuModuleLoadData)                                                          \
  X(cuModuleUnload)                                                            \
  X(cuModuleGetFunction)                                                       \
  X(cuFuncGetAttribute)                                                        \
  X(cuFuncSetAttribute)                                                        \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor)                               \
  X(cuLaunchKernel)                                                            \
  X(cuLaunchKernelEx)                                                          \
  X(cuGraphCreate)                                                             \
  X(cuGraphDestroy)                                                            \
  X(cuGraphAddKernelNode)                                                      \
  X(cuGraphKernelNodeSetAttribute)                                             \
  X(cuGraphInstantiate)                                                        \
  X(cuGraphExecDestroy)                                                        \
  X(cuGraphExecKernelNodeSetParams)                                            \
  X(cuGraphLaunch)

struct DriverApi {
  void *handle = nullptr;
// NOLINTNEXTLINE(bugprone-macro-parentheses): fn is a name, not a value.
#define KILN_DRIVER_MEMBER(fn) decltype(&::fn) fn = nullptr;
  KILN_DRIVER_FUNCTIONS(KILN_DRIVER_MEMBER)
#undef KILN_DRIVER_MEMBER
};

/// The driver, loaded once per process (libcuda.so.1 opened, every entry
/// point resolved). cuInit is not called here. The error says why no GPU can
/// be used: no libcuda.so.1, or a driver lacking an entry point (named).
llvm::Expected<const DriverApi &> driverApi();

/// "CUDA_ERROR_OUT_OF_MEMORY: out of memory".
std::string driverErrorText(const DriverApi &api, CUresult r);

/// Success, or "<call>: <name>: <string>[ (<detail>)]" as an llvm::Error.
llvm::Error checkDriver(const DriverApi &api, CUresult r, llvm::StringRef call,
                        llvm::StringRef detail = "");

} // namespace kiln::rt

#endif
