//===- Device.h - One GPU through the CUDA Driver API ----------*- C++ -*-===//
//
// A thin, checked layer over the driver API (loaded with dlopen, see
// CudaDriver.h). Every driver error becomes an llvm::Error naming the call
// and the driver's error name and string ("cuMemAlloc: CUDA_ERROR_OUT_OF_
// MEMORY: out of memory (asked for 7.5 GiB)").
//
// Device::open retains the device's primary context and makes it current on
// the calling thread; the context outlives every Buffer, Module and Stream
// made from it. Device::probe reads what code generation needs without a
// context, so that kernels compile while another thread opens the device.
// Handles are opaque pointers/integers so that no CUDA header leaks into users
// of the runtime.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_DEVICE_H
#define KILN_RUNTIME_DEVICE_H

#include "CudaDriver.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kiln::rt {

using DevicePtr = uint64_t;  // CUdeviceptr
using StreamHandle = void *; // CUstream; nullptr is the legacy default stream

/// Device memory owned by this object (freed in the destructor).
class Buffer {
public:
  Buffer() = default;
  Buffer(Buffer &&o) noexcept;
  Buffer &operator=(Buffer &&o) noexcept;
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;
  ~Buffer();

  DevicePtr ptr() const { return ptr_; }
  size_t size() const { return size_; }
  explicit operator bool() const { return ptr_ != 0; }

private:
  friend class Device;
  DevicePtr ptr_ = 0;
  size_t size_ = 0;
};

/// A loaded cubin and the kernels it holds.
class Module {
public:
  Module() = default;
  Module(Module &&o) noexcept;
  Module &operator=(Module &&o) noexcept;
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;
  ~Module();

  /// The kernel named `name` (an extern "C" __global__ function).
  llvm::Expected<void *> function(const std::string &name) const; // CUfunction

private:
  friend class Device;
  void *mod_ = nullptr; // CUmodule
};

struct LaunchConfig {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned sharedBytes = 0; // dynamic shared memory
  /// A cooperative launch (cuLaunchKernelEx with the cooperative attribute):
  /// every block is co-resident, so blocks may wait on each other. Fails
  /// (with a clear error) when the grid is larger than what fits on the
  /// device at once.
  bool cooperative = false;
};

struct FunctionAttributes {
  int numRegs = 0;
  int staticSharedBytes = 0;
  int localBytes = 0; // stack frame / spills
  int maxThreadsPerBlock = 0;
};

/// A recorded point on a stream (CUevent), for timing.
class Event {
public:
  Event() = default;
  Event(Event &&o) noexcept;
  Event &operator=(Event &&o) noexcept;
  Event(const Event &) = delete;
  Event &operator=(const Event &) = delete;
  ~Event();
  llvm::Error record(StreamHandle stream);
  /// Milliseconds from `start` to this event; both must have completed.
  llvm::Expected<float> elapsedSince(const Event &start) const;

private:
  friend class Device;
  void *ev_ = nullptr; // CUevent
};

/// One launch of a LaunchGraph.
struct GraphLaunch {
  void *function = nullptr; // CUfunction
  LaunchConfig cfg;
  void **args = nullptr; // kernelParams, as for Device::launch
};

/// A fixed sequence of kernel launches recorded once as a CUDA graph, each
/// after the one before, and replayed with one driver call: on an H200,
/// cuGraphLaunch of one to three kernels took 1.3-2 us of host time, against
/// 3.5-4.4 us for each cuLaunchKernel(Ex) (bench/proto/launch_cost.cu).
/// Cooperative launches become cooperative kernel nodes, with the same
/// guarantee. Not thread-safe: one replay or argument change at a time.
class LaunchGraph {
public:
  LaunchGraph() = default;
  LaunchGraph(LaunchGraph &&o) noexcept;
  LaunchGraph &operator=(LaunchGraph &&o) noexcept;
  LaunchGraph(const LaunchGraph &) = delete;
  LaunchGraph &operator=(const LaunchGraph &) = delete;
  ~LaunchGraph();

  explicit operator bool() const { return exec_ != nullptr; }
  size_t size() const { return launches_.size(); }
  /// New arguments for launch `i` in later replays (same kernel and shape).
  llvm::Error setArgs(size_t i, void **args);
  /// Replays every launch, in order, on `stream`.
  llvm::Error launch(StreamHandle stream);

private:
  friend class Device;
  void *graph_ = nullptr;     // CUgraph
  void *exec_ = nullptr;      // CUgraphExec
  std::vector<void *> nodes_; // CUgraphNode, one per launch
  std::vector<std::pair<void *, LaunchConfig>> launches_;
};

/// What code generation needs to know of a GPU.
struct DeviceTraits {
  DeviceInfo info;
  int l2Bytes = 0;
  /// Largest dynamic + static shared memory one block may opt in to.
  int maxSharedOptin = 0;
  int maxSharedPerSM = 0;
  /// Threads one SM holds at once (2048 on A100 and H100, 1536 on sm_86/89).
  int maxThreadsPerSM = 0;
};

class Device {
public:
  /// The traits of GPU `ordinal`, read without creating a context: loads
  /// the driver and runs cuInit (about 100 ms the first time on an H200),
  /// then queries attributes. The error says why no GPU can be used (see
  /// probeDevices).
  static llvm::Expected<DeviceTraits> probe(int ordinal = 0);
  /// The GPU `ordinal`, with its primary context current on this thread.
  /// Opened once per process and ordinal; later calls return the same one.
  /// The error says why no GPU can be used (see probeDevices).
  static llvm::Expected<Device *> open(int ordinal = 0);

  const DeviceInfo &info() const { return traits_.info; }
  /// How long the process's first open() of this device took: loading the
  /// driver, cuInit (unless an earlier probe did it) and the context.
  double openMs() const { return openMs_; }
  int l2Bytes() const { return traits_.l2Bytes; }
  int maxSharedPerBlockOptin() const { return traits_.maxSharedOptin; }
  int maxSharedPerMultiprocessor() const { return traits_.maxSharedPerSM; }
  int maxThreadsPerMultiprocessor() const { return traits_.maxThreadsPerSM; }

  /// Makes this device's context current on the calling thread.
  llvm::Error makeCurrent() const;

  llvm::Expected<Buffer> alloc(size_t bytes);
  /// Copies and fills of nothing (an empty tensor's) do nothing.
  llvm::Error copyToDevice(DevicePtr dst, const void *src, size_t bytes,
                           StreamHandle stream = nullptr);
  llvm::Error copyToHost(void *dst, DevicePtr src, size_t bytes,
                         StreamHandle stream = nullptr);
  llvm::Error copyDeviceToDevice(DevicePtr dst, DevicePtr src, size_t bytes,
                                 StreamHandle stream = nullptr);
  /// Fills `count` 32-bit words with `value` (e.g. a NaN pattern to poison).
  /// Asynchronous on `stream`, also the default stream.
  llvm::Error fill32(DevicePtr dst, uint32_t value, size_t count,
                     StreamHandle stream = nullptr);
  llvm::Error synchronize(StreamHandle stream = nullptr);

  llvm::Expected<StreamHandle> createStream();
  void destroyStream(StreamHandle stream);
  llvm::Expected<Event> createEvent();

  llvm::Expected<Module> loadModule(llvm::ArrayRef<char> cubin);
  llvm::Expected<FunctionAttributes> attributes(void *function) const;
  /// Raises the kernel's dynamic shared memory limit (needed above 48 KiB).
  llvm::Error setMaxDynamicShared(void *function, int bytes);
  /// How many blocks of `blockThreads` threads with `sharedBytes` dynamic
  /// shared memory fit on one multiprocessor at once.
  llvm::Expected<int> maxActiveBlocksPerSM(void *function, int blockThreads,
                                           size_t sharedBytes) const;

  /// Launches `function`. `args` is the driver's kernelParams array: one
  /// pointer per kernel parameter, pointing at the argument's value.
  llvm::Error launch(void *function, const LaunchConfig &cfg, void **args,
                     StreamHandle stream = nullptr);
  /// Records `launches` as a graph (see LaunchGraph); nothing runs yet.
  llvm::Expected<LaunchGraph> recordGraph(llvm::ArrayRef<GraphLaunch> launches);

  /// Free and total device memory in bytes.
  llvm::Expected<std::pair<size_t, size_t>> memoryInfo() const;

private:
  Device() = default;
  DeviceTraits traits_;
  double openMs_ = 0;
  void *ctx_ = nullptr; // CUcontext
  int dev_ = 0;         // CUdevice
};

} // namespace kiln::rt

#endif
