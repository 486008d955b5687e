//===- kiln_demo.cpp - The flagship demo ----------------------------------===//
//
// Checks the five flagship workloads at their real shapes (parse, bind N,
// infer every type), then runs each at its small shape on the golden inputs
// and compares with PyTorch's float64 answer stored in tests/data/golden/:
// on the GPU through Kiln's generated kernels where there is one, else (or
// with --cpu) with the float64 reference evaluator on the CPU. Exits
// non-zero if any answer differs from PyTorch's.
//
//===----------------------------------------------------------------------===//
#include "Clock.h"
#include "CudaDriver.h"
#include "Execute.h"
#include "GpuExecute.h"
#include "IR/Printer.h"
#include "ref/Compare.h"

#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdlib>

using namespace kiln;

namespace {

struct Workload {
  const char *id;
  int64_t batch; // the real shape's N
};

const Workload kWorkloads[] = {
    {"l1_35", 112},  {"l2_19", 128},  {"l2_37", 32768},
    {"l2_62", 1024}, {"l2_75", 1024},
};

/// The source tree: $KILN_SOURCE_DIR if set, else where this was built.
std::string root() {
  const char *env = std::getenv("KILN_SOURCE_DIR");
  return env && *env ? env : KILN_SOURCE_DIR;
}

/// Real shape: parse, bind N, infer every type; prints the output types.
bool checkRealShape(const Workload &w) {
  std::string path = root() + "/examples/" + w.id + ".kg";
  llvm::Expected<std::unique_ptr<Graph>> g = loadGraph(path);
  llvm::Expected<std::unique_ptr<Graph>> s =
      g ? specialize(**g, {{"N", w.batch}})
        : llvm::Expected<std::unique_ptr<Graph>>(g.takeError());
  if (!s) {
    llvm::outs() << fmt::format("  {:<6} FAILED: {}\n", w.id,
                                errorToString(s.takeError()));
    return false;
  }
  const Graph &graph = **s;
  llvm::outs() << fmt::format(
      "  {:<6} {} nodes  {} {} -> {} {}\n", w.id, graph.nodes().size(),
      graph.inputs()[0]->name(), graph.inputs()[0]->type().str(),
      graph.outputs()[0]->name(), graph.outputs()[0]->type().str());
  return true;
}

/// Elementwise bounds against PyTorch's float64 answer: the reference
/// evaluator computes in float64 too; Kiln's kernels in f32 (fp32-accurate
/// products at the default precision) are within about 1e-6 of it here.
constexpr double kCpuRtol = 1e-9, kCpuAtol = 1e-12;
constexpr double kGpuRtol = 1e-4, kGpuAtol = 1e-5;

/// Small shape: run on the golden inputs (on the GPU, or with the float64
/// reference evaluator), compare with PyTorch.
bool runSmallShape(const Workload &w, bool onGpu) {
  std::string name = std::string(w.id) + "_small";
  std::string data = root() + "/tests/data/golden/" + name + ".safetensors";
  auto fail = [&](llvm::Error e) {
    llvm::outs() << fmt::format("  {:<6} FAILED: {}\n", w.id,
                                errorToString(std::move(e)));
    return false;
  };
  llvm::Expected<std::unique_ptr<Graph>> g =
      loadGraph(root() + "/examples/" + name + ".kg");
  if (!g)
    return fail(g.takeError());
  llvm::Expected<SafetensorsFile> file = readSafetensors(data);
  if (!file)
    return fail(file.takeError());
  llvm::Expected<std::vector<HostTensor>> inputs =
      inputsFromFile(**g, *file, data);
  if (!inputs)
    return fail(inputs.takeError());
  // The result, its name and type in the graph and a note for the line.
  RefTensor got;
  std::string outName, outType, note;
  auto start = std::chrono::steady_clock::now();
  double ms = 0;
  if (onGpu) {
    CompileOptions opts;
    opts.constantParams = true; // as kiln run
    llvm::Expected<GpuSession> s = prepareGpu(**g, *inputs, &*file, data, opts);
    if (!s)
      return fail(s.takeError());
    const double compileMs = rt::msSince(start);
    start = std::chrono::steady_clock::now();
    llvm::Expected<std::vector<HostTensor>> outs = s->runPoisoned();
    if (!outs)
      return fail(outs.takeError());
    ms = rt::msSince(start);
    got = toRef((*outs)[0]);
    const Value &out = *s->exe->graph().outputs()[0];
    outName = out.name(), outType = out.type().str();
    note = fmt::format("  {} kernel{}, ready in {:.0f} ms",
                       s->exe->kernels().size(),
                       s->exe->kernels().size() == 1 ? "" : "s", compileMs);
  } else {
    llvm::Expected<Execution> run =
        executeReference(**g, *inputs, &*file, data);
    ms = rt::msSince(start);
    if (!run)
      return fail(run.takeError());
    got = std::move(run->outputs[0]);
    const Value &out = *run->specialized->outputs()[0];
    outName = out.name(), outType = out.type().str();
  }
  const HostTensor *want = file->find("expected." + outName);
  if (!want) {
    llvm::outs() << fmt::format("  {:<6} FAILED: {} has no expected.{}\n", w.id,
                                data, outName);
    return false;
  }
  Comparison c = compareTensors(got, toRef(*want), onGpu ? kGpuRtol : kCpuRtol,
                                onGpu ? kGpuAtol : kCpuAtol);
  llvm::outs() << fmt::format(
      "  {:<6} {:<22} rel. error vs PyTorch {:.1e}  max abs {:.1e}  "
      "{:>7.1f} ms  {}{}\n",
      w.id, outType, c.relError, c.maxAbsError, ms,
      c.ok() ? "ok" : "MISMATCH " + c.firstMismatch, note);
  return c.ok();
}

} // namespace

int main(int argc, char **argv) {
  bool cpu = false;
  for (int i = 1; i < argc; ++i) {
    const llvm::StringRef a = argv[i];
    if (a == "--help" || a == "-h") {
      llvm::outs()
          << "usage: kiln_demo [--cpu]\n\n"
             "Checks Kiln's five flagship workloads (examples/*.kg) at their "
             "real shapes,\nthen runs each at its small shape on the golden "
             "inputs (tests/data/golden/)\nand compares with PyTorch's "
             "float64 answer: on the GPU through Kiln's kernels\nwhere there "
             "is one, else on the CPU with the float64 reference evaluator.\n"
             "Exits 1 if any answer differs.\n\n"
             "options:\n"
             "  --cpu   use the reference evaluator even where there is a GPU\n"
             "  --help  show this help\n";
      return 0;
    }
    if (a != "--cpu") {
      llvm::errs() << "kiln_demo: unknown option '" << a
                   << "' (see 'kiln_demo --help')\n";
      return 2;
    }
    cpu = true;
  }
  llvm::outs() << "Kiln flagship demo\n\n";
  llvm::Expected<rt::DriverInfo> gpu = rt::probeDevices();
  const bool onGpu = gpu && !cpu;
  if (gpu) {
    llvm::outs() << rt::describeDevices() << "\n"
                 << (onGpu ? "The small shapes run on the GPU: Kiln's fused "
                             "kernels, compiled with NVRTC\n(or loaded from "
                             "the kernel cache), at the default precision "
                             "(highest).\n"
                           : "--cpu: the small shapes run on Kiln's float64 "
                             "reference evaluator.\n");
  } else {
    llvm::outs() << llvm::toString(gpu.takeError())
                 << ".\nRunning Kiln's float64 reference evaluator on the CPU "
                    "instead.\n";
  }

  bool ok = true;
  llvm::outs() << "\n1. Real shapes: parse, bind N, infer every type "
                  "(PyTorch's broadcasting included)\n";
  for (const Workload &w : kWorkloads)
    ok &= checkRealShape(w);

  llvm::outs() << fmt::format(
      "\n2. Small shapes {}: compare with PyTorch's float64 answer\n   "
      "(tests/data/golden/, same weights and inputs)\n",
      onGpu ? "on the GPU" : "on the reference evaluator");
  for (const Workload &w : kWorkloads)
    ok &= runSmallShape(w, onGpu);

  llvm::outs() << "\n3. L2_75 as Kiln sees it (kiln check "
                  "examples/l2_75.kg):\n\n";
  llvm::Expected<std::unique_ptr<Graph>> l2_75 =
      loadGraph(root() + "/examples/l2_75.kg");
  if (l2_75) {
    llvm::outs() << printGraph(**l2_75, PrintOptions{true});
  } else {
    llvm::outs() << errorToString(l2_75.takeError()) << "\n";
    ok = false;
  }

  llvm::outs() << (ok ? "\nAll five workloads match PyTorch.\n"
                      : "\nSOME WORKLOADS FAILED.\n");
  return ok ? 0 : 1;
}
