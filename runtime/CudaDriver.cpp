#include "CudaDriver.h"
#include "Clock.h"
#include "DriverApi.h"

#include <cuda.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <mutex>

namespace kiln::rt {

#define KILN_STRINGIFY_(x) #x
#define KILN_STRINGIFY(x) KILN_STRINGIFY_(x)

namespace {

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
  // KILN_STRINGIFY expands <cuda.h>'s mapping first: "cuMemAlloc_v2".
  const char *missing = nullptr;
#define KILN_DRIVER_BIND(fn)                                                   \
  api.fn = reinterpret_cast<decltype(api.fn)>(                                 \
      dlsym(api.handle, KILN_STRINGIFY(fn)));                                  \
  if (!api.fn && !missing)                                                     \
    missing = KILN_STRINGIFY(fn);
  KILN_DRIVER_FUNCTIONS(KILN_DRIVER_BIND)
#undef KILN_DRIVER_BIND
  if (missing)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "no GPU: libcuda.so.1 lacks the entry point %s; the driver is older "
        "than CUDA %d.%d or not NVIDIA's",
        missing, CUDA_VERSION / 1000, (CUDA_VERSION % 1000) / 10);
  return api;
}

} // namespace

llvm::Expected<const DriverApi &> driverApi() {
  // Loaded once; a failure is kept as text so every caller gets the reason.
  static const std::pair<DriverApi, std::string> loaded = [] {
    llvm::Expected<DriverApi> api = loadDriver();
    if (!api)
      return std::make_pair(DriverApi(), llvm::toString(api.takeError()));
    return std::make_pair(*api, std::string());
  }();
  if (!loaded.second.empty())
    return llvm::make_error<llvm::StringError>(loaded.second,
                                               llvm::inconvertibleErrorCode());
  return loaded.first;
}

std::string driverErrorText(const DriverApi &api, CUresult r) {
  const char *name = nullptr, *text = nullptr;
  if (api.cuGetErrorName(r, &name) != CUDA_SUCCESS || !name)
    return fmt::format("CUresult {}", static_cast<int>(r));
  if (api.cuGetErrorString(r, &text) != CUDA_SUCCESS || !text)
    return name;
  return fmt::format("{}: {}", name, text);
}

llvm::Error checkDriver(const DriverApi &api, CUresult r, llvm::StringRef call,
                        llvm::StringRef detail) {
  if (r == CUDA_SUCCESS)
    return llvm::Error::success();
  std::string msg =
      fmt::format("{}: {}", std::string_view(call), driverErrorText(api, r));
  if (!detail.empty())
    msg += fmt::format(" ({})", std::string_view(detail));
  if (r == CUDA_ERROR_INVALID_CONTEXT)
    msg += "; call Device::makeCurrent on this thread first";
  return llvm::make_error<llvm::StringError>(msg,
                                             llvm::inconvertibleErrorCode());
}

std::string DeviceInfo::arch() const {
  return fmt::format("sm_{}{}", ccMajor, ccMinor);
}

namespace {
/// driverStartMs(), written once by the first probe that succeeds.
std::atomic<double> firstStartMs{0};
std::once_flag firstStart;
} // namespace

double driverStartMs() {
  // A reader racing with the first probe may see 0, as before it.
  return firstStartMs.load();
}

llvm::Expected<DriverInfo> probeDevices() {
  const auto start = std::chrono::steady_clock::now();
  llvm::Expected<const DriverApi &> api = driverApi();
  if (!api)
    return api.takeError();
  DriverInfo info;
  if (CUresult r = api->cuInit(0); r != CUDA_SUCCESS)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "no GPU: cuInit failed with %s (is the NVIDIA driver working? "
        "nvidia-smi should list the GPU)",
        driverErrorText(*api, r).c_str());
  api->cuDriverGetVersion(&info.driverVersion);
  int count = 0;
  if (CUresult r = api->cuDeviceGetCount(&count); r != CUDA_SUCCESS)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "no GPU: cuDeviceGetCount failed with %s",
                                   driverErrorText(*api, r).c_str());
  if (count == 0)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "no GPU: the driver reports no devices");
  for (int i = 0; i < count; ++i) {
    CUdevice dev;
    if (api->cuDeviceGet(&dev, i) != CUDA_SUCCESS)
      continue;
    DeviceInfo d;
    d.ordinal = i;
    char name[256] = {0};
    api->cuDeviceGetName(name, sizeof(name) - 1, dev);
    d.name = name;
    api->cuDeviceGetAttribute(
        &d.ccMajor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    api->cuDeviceGetAttribute(
        &d.ccMinor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    api->cuDeviceGetAttribute(&d.multiprocessors,
                              CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
    size_t mem = 0;
    api->cuDeviceTotalMem(&mem, dev);
    d.totalMemory = mem;
    info.devices.push_back(std::move(d));
  }
  std::call_once(firstStart, [&] { firstStartMs.store(msSince(start)); });
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
