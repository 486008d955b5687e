#include "CudaDriver.h"

#include <cuda.h>
#include <dlfcn.h>
#include <fmt/format.h>

namespace kiln::rt {

namespace {

/// The few driver entry points the probe needs, resolved with dlsym.
struct DriverApi {
  void *handle = nullptr;
  CUresult (*init)(unsigned) = nullptr;
  CUresult (*driverGetVersion)(int *) = nullptr;
  CUresult (*deviceGetCount)(int *) = nullptr;
  CUresult (*deviceGet)(CUdevice *, int) = nullptr;
  CUresult (*deviceGetName)(char *, int, CUdevice) = nullptr;
  CUresult (*deviceGetAttribute)(int *, CUdevice_attribute, CUdevice) = nullptr;
  CUresult (*deviceTotalMem)(size_t *, CUdevice) = nullptr;
  CUresult (*getErrorName)(CUresult, const char **) = nullptr;
};

template <typename F> bool bind(void *h, const char *name, F &fn) {
  fn = reinterpret_cast<F>(dlsym(h, name));
  return fn != nullptr;
}

llvm::Expected<DriverApi> loadDriver() {
  DriverApi api;
  api.handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!api.handle) {
    const char *why = dlerror();
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "no GPU: the NVIDIA driver library libcuda.so.1 could not be loaded "
        "(%s)",
        why ? why : "unknown reason");
  }
  bool ok = bind(api.handle, "cuInit", api.init) &&
            bind(api.handle, "cuDriverGetVersion", api.driverGetVersion) &&
            bind(api.handle, "cuDeviceGetCount", api.deviceGetCount) &&
            bind(api.handle, "cuDeviceGet", api.deviceGet) &&
            bind(api.handle, "cuDeviceGetName", api.deviceGetName) &&
            bind(api.handle, "cuDeviceGetAttribute", api.deviceGetAttribute) &&
            bind(api.handle, "cuDeviceTotalMem_v2", api.deviceTotalMem) &&
            bind(api.handle, "cuGetErrorName", api.getErrorName);
  if (!ok)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "no GPU: libcuda.so.1 lacks a required entry point (%s); the "
        "driver is too old or not NVIDIA's",
        dlerror());
  return api;
}

std::string errorName(const DriverApi &api, CUresult r) {
  const char *name = nullptr;
  if (api.getErrorName && api.getErrorName(r, &name) == CUDA_SUCCESS && name)
    return name;
  return fmt::format("CUresult {}", static_cast<int>(r));
}

} // namespace

std::string DeviceInfo::arch() const {
  return fmt::format("sm_{}{}", ccMajor, ccMinor);
}

llvm::Expected<DriverInfo> probeDevices() {
  static llvm::Expected<DriverApi> api = loadDriver();
  if (!api)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s",
                                   llvm::toString(api.takeError()).c_str());
  DriverInfo info;
  if (CUresult r = api->init(0); r != CUDA_SUCCESS)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "no GPU: cuInit failed with %s (is the NVIDIA driver working? "
        "nvidia-smi should list the GPU)",
        errorName(*api, r).c_str());
  api->driverGetVersion(&info.driverVersion);
  int count = 0;
  if (CUresult r = api->deviceGetCount(&count); r != CUDA_SUCCESS)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "no GPU: cuDeviceGetCount failed with %s",
                                   errorName(*api, r).c_str());
  if (count == 0)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "no GPU: the driver reports no devices");
  for (int i = 0; i < count; ++i) {
    CUdevice dev;
    if (api->deviceGet(&dev, i) != CUDA_SUCCESS)
      continue;
    DeviceInfo d;
    d.ordinal = i;
    char name[256] = {0};
    api->deviceGetName(name, sizeof(name) - 1, dev);
    d.name = name;
    api->deviceGetAttribute(&d.ccMajor,
                            CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    api->deviceGetAttribute(&d.ccMinor,
                            CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    api->deviceGetAttribute(&d.multiprocessors,
                            CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
    size_t mem = 0;
    api->deviceTotalMem(&mem, dev);
    d.totalMemory = mem;
    info.devices.push_back(std::move(d));
  }
  return info;
}

std::string describeDevices() {
  llvm::Expected<DriverInfo> info = probeDevices();
  if (!info)
    return llvm::toString(info.takeError());
  std::string out;
  for (const DeviceInfo &d : info->devices)
    out += fmt::format("{}GPU {}: {} ({}, {} SMs, {:.1f} GiB)",
                       out.empty() ? "" : "; ", d.ordinal, d.name, d.arch(),
                       d.multiprocessors,
                       static_cast<double>(d.totalMemory) / (1ull << 30));
  return fmt::format("{}; driver API {}.{}", out, info->driverVersion / 1000,
                     (info->driverVersion % 1000) / 10);
}

} // namespace kiln::rt
