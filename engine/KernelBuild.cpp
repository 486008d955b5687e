//===- KernelBuild.cpp - Kernels through the cache, loaded on the device --===//
#include "Clock.h"
#include "Engine.h"

#include "IR/Diagnostics.h"

#include "llvm/ADT/STLExtras.h"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <tuple>

#ifndef KILN_VERSION
#define KILN_VERSION "0"
#endif

namespace kiln {

namespace {
/// Kernel cache shared by every Executable of the process, per options. The
/// warnings stream is part of the key: a cache writes to the stream it was
/// made with, so one made for a caller's stream (since destroyed) must not
/// serve another caller.
rt::KernelCache &processCache(const rt::CacheOptions &o) {
  static std::mutex mu;
  static std::map<
      std::tuple<std::string, bool, bool, uint64_t, const llvm::raw_ostream *>,
      std::unique_ptr<rt::KernelCache>>
      caches;
  std::lock_guard<std::mutex> lock(mu);
  auto &c =
      caches[{o.directory, o.disableDisk, o.recompile, o.maxBytes, o.warnings}];
  if (!c)
    c = std::make_unique<rt::KernelCache>(o, KILN_VERSION);
  return *c;
}

} // namespace

llvm::Error
Executable::buildKernels(const CompileOptions &opts,
                         std::future<llvm::Expected<rt::Device *>> &opening) {
  rt::KernelCache &cache = processCache(opts.cache);
  // Each kernel is compiled (or read from the cache) by one of at most one
  // thread per hardware thread: NVRTC needs tens of MB per compile, so a
  // graph of thousands of kernels must not start them all at once.
  const size_t n = kernels_.size();
  std::vector<rt::CompileRequest> reqs;
  std::vector<rt::KernelMetadata> metas;
  for (size_t i = 0; i < n; ++i) {
    reqs.push_back(
        compileRequest(kernels_[i], target_.arch, opts.nvrtcOptions));
    metas.push_back(cacheMetadata(i));
  }
  std::vector<std::optional<llvm::Expected<rt::CacheLookup>>> results(n);
  std::atomic<size_t> next{0};
  std::mutex mu;
  size_t ready = 0;
  auto work = [&] {
    for (size_t i; (i = next++) < n;) {
      llvm::Expected<rt::CacheLookup> r = cache.getOrCompile(reqs[i], metas[i]);
      std::lock_guard<std::mutex> lock(mu);
      results[i].emplace(std::move(r));
      if (opts.onKernelReady)
        opts.onKernelReady(++ready, n);
    }
  };
  const size_t threads =
      std::min<size_t>(n, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t)
    pool.emplace_back(work);
  work();
  for (std::thread &t : pool)
    t.join();
  llvm::Error err = llvm::Error::success();
  std::vector<std::shared_ptr<const std::vector<char>>> cubins;
  for (std::optional<llvm::Expected<rt::CacheLookup>> &slot : results) {
    llvm::Expected<rt::CacheLookup> &r = *slot;
    if (!r) {
      err = llvm::joinErrors(std::move(err), r.takeError());
      builds_.emplace_back();
      cubins.emplace_back();
      continue;
    }
    builds_.push_back({r->key, r->source, r->compileMs, r->log, r->stored});
    cubins.push_back(r->cubin);
  }
  if (opening.valid()) {
    const auto waitStart = std::chrono::steady_clock::now();
    llvm::Expected<rt::Device *> dev = opening.get();
    contextWaitMs_ = rt::msSince(waitStart);
    if (!dev)
      return llvm::joinErrors(std::move(err), dev.takeError());
    // Opened on another thread: make its context current on this one.
    if (llvm::Error e = (*dev)->makeCurrent())
      return llvm::joinErrors(std::move(err), std::move(e));
    device_ = *dev;
  }
  if (err || !device_)
    return err;
  for (size_t i = 0; i < kernels_.size(); ++i) {
    const EmittedKernel &k = kernels_[i];
    llvm::Expected<rt::Module> m = device_->loadModule(*cubins[i]);
    if (!m)
      return m.takeError();
    auto mod = std::make_shared<rt::Module>(std::move(*m));
    llvm::Expected<void *> f = mod->function(k.name);
    if (!f)
      return f.takeError();
    if (k.sharedBytes > 48 * 1024)
      if (llvm::Error e = device_->setMaxDynamicShared(*f, k.sharedBytes))
        return e;
    if (k.cooperative) {
      llvm::Expected<int> per =
          device_->maxActiveBlocksPerSM(*f, k.block, k.sharedBytes);
      if (!per)
        return per.takeError();
      int64_t fit = int64_t(*per) * device_->info().multiprocessors;
      if (fit < k.grid)
        return userError("kernel {} needs {} blocks resident at once, but "
                         "the GPU holds {} of them; this is a Kiln "
                         "scheduling bug, please report it",
                         k.name, k.grid, fit);
    }
    modules_.push_back(std::move(mod));
    functions_.push_back(*f);
  }
  return llvm::Error::success();
}

} // namespace kiln
