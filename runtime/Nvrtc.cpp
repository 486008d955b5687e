#include "Nvrtc.h"
#include "Clock.h"

#include <fmt/format.h>
#include <nvrtc.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>

namespace kiln::rt {

std::string nvrtcVersionString() {
  int major = 0, minor = 0;
  if (::nvrtcVersion(&major, &minor) != NVRTC_SUCCESS)
    return "unknown";
  return fmt::format("{}.{}", major, minor);
}

/// The oldest arch Kiln's templates compile for: they use sm_80's
/// __reduce_*_sync and cp.async.
constexpr unsigned kMinArch = 80;

llvm::Error checkArch(llvm::StringRef arch) {
  int count = 0;
  std::vector<int> archs;
  if (::nvrtcGetNumSupportedArchs(&count) == NVRTC_SUCCESS && count > 0) {
    archs.resize(count);
    if (::nvrtcGetSupportedArchs(archs.data()) != NVRTC_SUCCESS)
      archs.clear();
  }
  llvm::StringRef digits = arch;
  unsigned number = 0;
  if (digits.consume_front("sm_")) {
    if (digits.endswith("a") || digits.endswith("f"))
      digits = digits.drop_back();
    if (!digits.getAsInteger(10, number) &&
        (archs.empty() ||
         std::find(archs.begin(), archs.end(), int(number)) != archs.end())) {
      if (number >= kMinArch)
        return llvm::Error::success();
      return llvm::createStringError(
          std::errc::invalid_argument,
          "'%s' is older than Kiln's kernels allow: they need sm_%u or newer "
          "(Ampere's warp reductions and asynchronous copies)",
          arch.str().c_str(), kMinArch);
    }
  }
  std::string known;
  for (int a : archs)
    if (a >= static_cast<int>(kMinArch))
      known += fmt::format("{}sm_{}", known.empty() ? "" : ", ", a);
  return llvm::createStringError(
      std::errc::invalid_argument,
      "'%s' is not an arch NVRTC %s compiles for; give sm_NN, one of: %s",
      arch.str().c_str(), nvrtcVersionString().c_str(), known.c_str());
}

std::vector<std::string> CompileRequest::allOptions() const {
  // A real arch (sm_XX) makes NVRTC produce a cubin. No --use_fast_math: the
  // generated code relies on IEEE NaN and infinity behaviour. -minimal leaves
  // out declarations Kiln's kernels never use (textures, device-runtime
  // calls): the same PTX for every kernel, a little less to parse. (v2's
  // "2-3x faster" was NVRTC's own cache answering: bench/NOTES.md v8.)
  std::vector<std::string> all = {"--gpu-architecture=" + arch, "-std=c++17",
                                  "-minimal"};
  all.insert(all.end(), options.begin(), options.end());
  return all;
}

/// NVRTC 12.9 and later keep a cache of compiled programs of their own,
/// across processes. Kiln has its own cache, so NVRTC's only costs time: on
/// the H200 machine its start-up made a process's first compile ~200 ms
/// longer (a trivial kernel 239-258 ms, against 60 ms with --no-cache), and
/// its hits made cold compiles look 2-3x shorter than they are
/// (bench/NOTES.md v8). --no-cache does not change the cubin, so it is not
/// part of allOptions() or the cache key.
bool nvrtcHasOwnCache() {
  int major = 0, minor = 0;
  if (::nvrtcVersion(&major, &minor) != NVRTC_SUCCESS)
    return false;
  return major > 12 || (major == 12 && minor >= 9);
}

std::vector<std::string> CompileRequest::nvrtcOptions() const {
  static const bool ownCache = nvrtcHasOwnCache();
  std::vector<std::string> all = allOptions();
  if (ownCache)
    all.push_back("--no-cache");
  return all;
}

namespace {

/// Destroys the program however compileCuda returns.
struct ProgramGuard {
  nvrtcProgram prog = nullptr;
  ~ProgramGuard() {
    if (prog)
      nvrtcDestroyProgram(&prog);
  }
};

llvm::Error nvrtcError(const char *call, nvrtcResult r,
                       const CompileRequest &req) {
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(), "%s failed for %s (%s): %s", call,
      req.fileName.c_str(), req.arch.c_str(), nvrtcGetErrorString(r));
}

std::string programLog(nvrtcProgram prog) {
  size_t size = 0;
  if (nvrtcGetProgramLogSize(prog, &size) != NVRTC_SUCCESS || size <= 1)
    return "";
  std::string log(size, '\0');
  if (nvrtcGetProgramLog(prog, log.data()) != NVRTC_SUCCESS)
    return "";
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n'))
    log.pop_back();
  return log;
}

/// Writes the source that failed to compile where a person can open it;
/// returns the path, or a note saying why it could not be written.
std::string saveFailedSource(const CompileRequest &req) {
  const char *tmp = std::getenv("TMPDIR");
  std::string dir = tmp && *tmp ? tmp : "/tmp";
  std::string name = req.fileName.empty() ? "kernel.cu" : req.fileName;
  for (char &c : name)
    if (c == '/')
      c = '_';
  std::string path = dir + "/kiln-failed-" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << req.source;
  out.close();
  if (!out)
    return "<not saved: cannot write " + path + ">";
  return path;
}

} // namespace

llvm::Expected<CompileResult> compileCuda(const CompileRequest &req) {
  auto start = std::chrono::steady_clock::now();
  std::vector<std::string> headerTexts; // NUL-terminated copies
  std::vector<const char *> headerPtrs, namePtrs;
  headerTexts.reserve(req.headers.size());
  for (const SourceHeader &h : req.headers) {
    headerTexts.emplace_back(h.text);
    headerPtrs.push_back(headerTexts.back().c_str());
    namePtrs.push_back(h.name.c_str());
  }
  ProgramGuard guard;
  if (nvrtcResult r = nvrtcCreateProgram(&guard.prog, req.source.c_str(),
                                         req.fileName.c_str(),
                                         static_cast<int>(headerPtrs.size()),
                                         headerPtrs.data(), namePtrs.data());
      r != NVRTC_SUCCESS)
    return nvrtcError("nvrtcCreateProgram", r, req);

  std::vector<std::string> options = req.nvrtcOptions();
  std::vector<const char *> optionPtrs;
  optionPtrs.reserve(options.size());
  for (const std::string &o : options)
    optionPtrs.push_back(o.c_str());
  nvrtcResult compiled = nvrtcCompileProgram(
      guard.prog, static_cast<int>(optionPtrs.size()), optionPtrs.data());
  CompileResult result;
  result.log = programLog(guard.prog);
  if (compiled != NVRTC_SUCCESS) {
    std::string log =
        result.log.empty() ? nvrtcGetErrorString(compiled) : result.log;
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "NVRTC failed to compile %s for %s:\n%s\nthe generated source is in "
        "%s",
        req.fileName.c_str(), req.arch.c_str(), log.c_str(),
        saveFailedSource(req).c_str());
  }

  size_t size = 0;
  if (nvrtcResult r = nvrtcGetCUBINSize(guard.prog, &size); r != NVRTC_SUCCESS)
    return nvrtcError("nvrtcGetCUBINSize", r, req);
  if (size == 0)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "NVRTC produced no cubin for %s: the arch %s must be a real one "
        "(sm_XX, not compute_XX)",
        req.fileName.c_str(), req.arch.c_str());
  result.cubin.resize(size);
  if (nvrtcResult r = nvrtcGetCUBIN(guard.prog, result.cubin.data());
      r != NVRTC_SUCCESS)
    return nvrtcError("nvrtcGetCUBIN", r, req);
  if (nvrtcGetPTXSize(guard.prog, &size) == NVRTC_SUCCESS && size > 1) {
    result.ptx.resize(size);
    if (nvrtcGetPTX(guard.prog, result.ptx.data()) != NVRTC_SUCCESS)
      result.ptx.clear();
    while (!result.ptx.empty() && result.ptx.back() == '\0')
      result.ptx.pop_back();
  }
  result.compileMs = msSince(start);
  return result;
}

} // namespace kiln::rt
