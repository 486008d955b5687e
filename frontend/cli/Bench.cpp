//===- Bench.cpp - kiln bench: time a graph's kernels on the GPU ----------===//
//
// Times with CUDA events after a warm-up: the median of --iters runs, per
// kernel and in total, against the bytes each kernel must move and the
// device's measured copy bandwidth (a device-to-device copy, bytes read +
// written, timed the same way in the same process).
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "Execute.h"
#include "FileUtil.h"
#include "GpuExecute.h"
#include "IR/ClipText.h"
#include "Params.h"

#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <limits>

namespace kiln::cli {

namespace {
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

/// Read + write bandwidth of a device-to-device copy, in bytes/s.
llvm::Expected<double> copyBandwidth(rt::Device &dev, int iters) {
  const size_t bytes = size_t(1) << 30;
  auto a = dev.alloc(bytes), b = dev.alloc(bytes);
  if (!a)
    return a.takeError();
  if (!b)
    return b.takeError();
  auto e0 = dev.createEvent(), e1 = dev.createEvent();
  if (!e0)
    return e0.takeError();
  if (!e1)
    return e1.takeError();
  if (llvm::Error e = dev.fill32(a->ptr(), 0x3f800000u, bytes / 4))
    return e;
  std::vector<double> ms;
  for (int i = 0; i < iters + 3; ++i) {
    if (llvm::Error e = e0->record(nullptr))
      return e;
    if (llvm::Error e = dev.copyDeviceToDevice(b->ptr(), a->ptr(), bytes))
      return e;
    if (llvm::Error e = e1->record(nullptr))
      return e;
    if (llvm::Error e = dev.synchronize())
      return e;
    llvm::Expected<float> t = e1->elapsedSince(*e0);
    if (!t)
      return t.takeError();
    if (i >= 3)
      ms.push_back(*t);
  }
  return 2.0 * bytes / (median(ms) * 1e-3);
}

llvm::Error writeJson(const std::string &path, const nlohmann::json &j) {
  return writeFileAtomically(
      path, [&](llvm::raw_ostream &os) { os << j.dump(2) << "\n"; });
}

/// Uniform [0, 1) inputs, like torch.rand, from a counter-based generator;
/// refused, naming the largest, when they would not fit the host's
/// available memory.
llvm::Expected<std::vector<HostTensor>>
randomInputs(const Graph &g,
             const std::vector<llvm::SmallVector<int64_t, 6>> &shapes,
             uint64_t seed) {
  uint64_t total = 0, largest = 0;
  size_t which = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    uint64_t bytes = checkedByteSize(g.inputs()[i]->dtype(), shapes[i])
                         .value_or(std::numeric_limits<uint64_t>::max());
    total = llvm::SaturatingAdd(total, bytes);
    if (bytes >= largest)
      largest = bytes, which = i;
  }
  if (const uint64_t host = hostAvailableBytes(); total > host)
    return userError("the random inputs of graph '{}' need {} of host "
                     "memory, more than the {} available; the largest is "
                     "input '{}' {}[{}], {}; bind smaller sizes",
                     g.name(), bytesText(total), bytesText(host),
                     g.inputs()[which]->name(),
                     dtypeName(g.inputs()[which]->dtype()).str(),
                     fmt::join(shapes[which], ", "), bytesText(largest));
  std::vector<HostTensor> out;
  for (size_t i = 0; i < shapes.size(); ++i) {
    Initializer init;
    init.kind = Initializer::Kind::Uniform;
    init.a = 0;
    init.b = 1;
    init.seed = seed + i;
    out.push_back(makeInitialized(init, g.inputs()[i]->dtype(), shapes[i]));
  }
  return out;
}

int runBench(const ParsedArgs &args) {
  llvm::Expected<std::unique_ptr<Graph>> g = loadGraph(args.positional[0]);
  if (!g)
    return reportError(g.takeError());
  const Graph &graph = **g;
  int warmup = 5, iters = 20;
  if (args.has("--warmup") &&
      (llvm::StringRef(args.get("--warmup")).getAsInteger(10, warmup) ||
       warmup < 0))
    return reportError(usageError("--warmup takes a count (0 or more)"));
  if (args.has("--iters") &&
      (llvm::StringRef(args.get("--iters")).getAsInteger(10, iters) ||
       iters < 1))
    return reportError(usageError("--iters takes a positive count"));
  llvm::Expected<CompileOptions> options = compileOptions(args);
  if (!options)
    return reportError(options.takeError());

  FileRoles json;
  if (args.has("--json"))
    json.writes("--json", args.get("--json"));
  llvm::Expected<GraphFiles> files = graphFiles(args, graph, json);
  if (!files)
    return reportError(files.takeError());

  std::vector<HostTensor> inputs;
  if (args.has("--input")) {
    auto in = readInputs(graph, files->inputs);
    if (!in)
      return reportError(in.takeError());
    inputs = std::move(*in);
  } else {
    auto shapes = boundInputShapes(graph, args);
    if (!shapes)
      return reportError(shapes.takeError());
    llvm::errs() << "inputs: uniform [0, 1) random (give --input to use "
                    "files)\n";
    auto random = randomInputs(graph, *shapes, 1);
    if (!random)
      return reportError(random.takeError());
    inputs = std::move(*random);
  }
  std::optional<SafetensorsFile> paramFile;
  std::string paramPath = args.get("--params");
  if (!paramPath.empty()) {
    auto f = readSafetensors(paramPath);
    if (!f)
      return reportError(f.takeError());
    paramFile = std::move(*f);
  }
  CompileOptions opts = std::move(*options);
  opts.onKernelReady = kernelProgress();
  auto s = prepareGpu(graph, inputs, paramFile ? &*paramFile : nullptr,
                      paramPath, opts);
  if (!s)
    return reportError(s.takeError());
  for (const std::string &w : s->warnings) // "FILE: warning: ..." each
    llvm::errs() << clipLongWords(w) << "\n";
  const Executable &exe = *s->exe;
  rt::Device &dev = *exe.device();
  const size_t nk = exe.kernels().size();
  const std::string precision = precisionName(opts.matmulPrecision).str();
  auto writeOutputs = [&]() -> llvm::Error {
    if (files->outputs.empty())
      return llvm::Error::success();
    auto outs = s->downloadOutputs();
    if (!outs)
      return outs.takeError();
    for (size_t i = 0; i < outs->size(); ++i) {
      const Value &v = *exe.graph().outputs()[i];
      auto it = files->outputs.find(v.name());
      if (it == files->outputs.end())
        continue;
      if (llvm::Error e = writeOutput(v.name(), (*outs)[i], it->second))
        return e;
    }
    return llvm::Error::success();
  };
  if (nk == 0) {
    // Every result is empty (e.g. a batch of 0): nothing runs on the GPU.
    llvm::outs() << fmt::format("{}: nothing to time, every result is empty "
                                "and needs no kernel\n",
                                graph.name());
    if (llvm::Error e = writeOutputs())
      return reportError(std::move(e));
    if (args.has("--json")) {
      nlohmann::json j = {{"graph", graph.name()},
                          {"device", dev.info().name},
                          {"matmul_precision", precision},
                          {"compile_ms", s->compileSeconds * 1e3},
                          {"kernels", nlohmann::json::array()},
                          {"total_ms", 0.0},
                          {"bytes", 0}};
      if (llvm::Error e = writeJson(args.get("--json"), j))
        return reportError(std::move(e));
    }
    return ExitOk;
  }

  if (llvm::Error e = s->poisonOutputs())
    return reportError(std::move(e));
  for (int i = 0; i < warmup; ++i)
    if (llvm::Error e = s->run())
      return reportError(std::move(e));
  if (llvm::Error e = dev.synchronize())
    return reportError(std::move(e));

  std::vector<std::vector<double>> perKernel(nk);
  std::vector<double> total, hostUs;
  RunTrace trace;
  for (int i = 0; i < iters; ++i) {
    auto h0 = std::chrono::steady_clock::now();
    if (llvm::Error e = s->run(nullptr, &trace))
      return reportError(std::move(e));
    hostUs.push_back(std::chrono::duration<double, std::micro>(
                         std::chrono::steady_clock::now() - h0)
                         .count());
    if (llvm::Error e = dev.synchronize())
      return reportError(std::move(e));
    for (size_t k = 0; k < nk; ++k) {
      auto t = trace.events[k + 1].elapsedSince(trace.events[k]);
      if (!t)
        return reportError(t.takeError());
      perKernel[k].push_back(*t);
    }
    auto t = trace.events.back().elapsedSince(trace.events.front());
    if (!t)
      return reportError(t.takeError());
    total.push_back(*t);
  }
  // Host time per launch, from runs without the per-kernel events: from
  // idle (each run submitted after the previous one finished), and queued
  // (runs submitted back to back while the GPU is busy with earlier ones:
  // the host's own cost, without an idle GPU and driver to wake). Both as
  // run() launches (one CUDA graph) and kernel by kernel, for comparison.
  auto hostUsPerLaunch = [&](bool fromIdle) -> llvm::Expected<double> {
    std::vector<double> us;
    for (int i = 0; i < iters; ++i) {
      auto h0 = std::chrono::steady_clock::now();
      if (llvm::Error e = s->run())
        return e;
      us.push_back(std::chrono::duration<double, std::micro>(
                       std::chrono::steady_clock::now() - h0)
                       .count());
      if (fromIdle || i + 1 == iters)
        if (llvm::Error e = dev.synchronize())
          return e;
    }
    return median(us) / std::max<size_t>(nk, 1);
  };
  double host[2][2]; // [graph, direct][idle, queued]
  for (int mode = 0; mode < 2; ++mode) {
    s->exe->setGraphLaunches(mode == 0);
    for (int q = 0; q < 2; ++q) {
      auto us = hostUsPerLaunch(q == 0);
      if (!us)
        return reportError(us.takeError());
      host[mode][q] = *us;
    }
  }
  s->exe->setGraphLaunches(true);
  std::string launchMode = exe.launchMode();
  auto bw = copyBandwidth(dev, 10);
  if (!bw)
    return reportError(bw.takeError());

  nlohmann::json j;
  j["graph"] = graph.name();
  j["device"] = dev.info().name;
  j["matmul_precision"] = precision;
  j["copy_gbps"] = *bw / 1e9;
  j["compile_ms"] = s->compileSeconds * 1e3;
  j["driver_start_ms"] = rt::driverStartMs();
  j["device_open_ms"] = dev.openMs();
  j["kernels_ready_ms"] = exe.kernelsReadyMs();
  j["context_wait_ms"] = exe.contextWaitMs();
  j["kernels_cached"] = exe.cachedKernels();
  j["intermediate_bytes"] = exe.intermediateBytes();
  j["launch"] = launchMode;
  j["host_us_per_launch"] = host[0][0];
  j["host_us_per_launch_queued"] = host[0][1];
  j["host_us_per_launch_direct"] = host[1][0];
  j["host_us_per_launch_direct_queued"] = host[1][1];
  llvm::outs() << fmt::format("{} on {}, matmul precision {}: copy "
                              "bandwidth {:.0f} GB/s (read + write), median "
                              "of {} runs\n",
                              graph.name(), dev.info().name, precision,
                              *bw / 1e9, iters);
  llvm::outs() << fmt::format("  {:<44} {:>10} {:>11} {:>9} {:>7}\n", "kernel",
                              "ms", "bytes", "GB/s", "of copy");
  uint64_t bytes = 0;
  for (size_t k = 0; k < nk; ++k) {
    const EmittedKernel &ek = exe.kernels()[k];
    double ms = median(perKernel[k]), gbps = ek.bytes / (ms * 1e-3) / 1e9;
    bytes += ek.bytes;
    llvm::outs() << fmt::format(
        "  {:<44} {:>10.4f} {:>11} {:>9.0f} {:>6.0f}%\n", ek.name, ms, ek.bytes,
        gbps, 100 * gbps * 1e9 / *bw);
    j["kernels"].push_back({{"name", ek.name},
                            {"ms", ms},
                            {"bytes", ek.bytes},
                            {"gbps", gbps},
                            {"strategy", ek.strategy}});
  }
  double tms = median(total);
  j["total_ms"] = tms;
  j["bytes"] = bytes;
  llvm::outs() << fmt::format(
      "  total {:.4f} ms; {} kernels move {:.3f} GB: floor {:.4f} ms at the "
      "copy bandwidth ({:.0f}%)\n",
      tms, nk, bytes / 1e9, bytes / *bw * 1e3, 100 * (bytes / *bw * 1e3) / tms);
  llvm::outs() << fmt::format(
      "  compile + load {:.1f} ms: the driver's start {:.1f} ms, then "
      "kernels ready in {:.1f} ms ({} from the cache, {} compiled), {:.1f} "
      "ms of it waiting for the device's context (made meanwhile in {:.1f} "
      "ms); intermediates and workspaces {:.1f} MiB\n"
      "  launch: {}\n"
      "  host time per kernel launched: {:.2f} us from idle, {:.2f} us "
      "queued (kernel by kernel: {:.2f} / {:.2f} us)\n",
      s->compileSeconds * 1e3, rt::driverStartMs(), exe.kernelsReadyMs(),
      exe.cachedKernels(), exe.compiledKernels(), exe.contextWaitMs(),
      dev.openMs(), exe.intermediateBytes() / double(1 << 20), launchMode,
      host[0][0], host[0][1], host[1][0], host[1][1]);

  if (llvm::Error e = writeOutputs())
    return reportError(std::move(e));
  if (args.has("--json"))
    if (llvm::Error e = writeJson(args.get("--json"), j))
      return reportError(std::move(e));
  return ExitOk;
}
} // namespace

const CommandSpec &benchCommand() {
  static const CommandSpec spec = {
      "bench",
      "time a graph's kernels on the GPU (CUDA events, median)",
      "kiln bench FILE [--input NAME=FILE]... [--bind NAME=SIZE]... "
      "[--params FILE] [--iters N] [--warmup N] [--matmul-precision MODE] "
      "[--json FILE]",
      "Compiles FILE for the GPU and times it: --warmup runs, then the "
      "median of\n--iters runs, per kernel and in total, with CUDA events. "
      "Reports each kernel's\nbytes (inputs read once, outputs written "
      "once), GB/s and the fraction of the\ndevice's copy bandwidth, "
      "measured in the same process.\nThe timed runs launch kernel by "
      "kernel, with an event between kernels. Host\ntime per kernel "
      "launched is given from idle (each run submitted after the "
      "last\none finished) and queued (runs submitted back to back), for "
      "runs launched as\none CUDA graph (as Kiln runs a graph) and kernel "
      "by kernel. The driver's\nstart (cuInit) is given apart from the time "
      "after it until the kernels are\nready to launch (each compiled now "
      "or loaded from the cache, while another\nthread creates the device's "
      "context). Inputs are uniform [0, 1) random unless\ngiven (named dims "
      "then need --bind).",
      {
          {"--input", "NAME=FILE", "an input as .npy or .safetensors", true},
          {"--bind", "NAME=SIZE", "bind a named dim for random inputs", true},
          {"--params", "FILE", "parameters as .safetensors, by name"},
          {"--output", "NAME=FILE", "write an output after timing", true},
          {"--iters", "N", "timed runs (default 20)"},
          {"--warmup", "N", "untimed runs first (default 5)"},
          {"--json", "FILE", "write the figures as JSON"},
          kMatmulPrecisionOption,
      },
      1,
      1,
      runBench};
  return spec;
}

} // namespace kiln::cli
