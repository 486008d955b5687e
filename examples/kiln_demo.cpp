//===- kiln_demo.cpp - The flagship demo ----------------------------------===//
//
// Checks the five flagship workloads at their real shapes, then runs each at
// its small shape and compares with PyTorch's float64 answer stored in
// tests/data/golden/. Until GPU code generation lands, execution uses the
// float64 reference evaluator on the CPU; the demo says which it used.
// Exits non-zero if any answer differs from PyTorch's.
//
//===----------------------------------------------------------------------===//
#include "Clock.h"
#include "CudaDriver.h"
#include "Execute.h"
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

/// Small shape: evaluate on the golden inputs, compare with PyTorch.
bool runSmallShape(const Workload &w) {
  std::string name = std::string(w.id) + "_small";
  std::string data = root() + "/tests/data/golden/" + name + ".safetensors";
  llvm::Expected<std::unique_ptr<Graph>> g =
      loadGraph(root() + "/examples/" + name + ".kg");
  if (!g) {
    llvm::outs() << fmt::format("  {:<6} FAILED: {}\n", w.id,
                                errorToString(g.takeError()));
    return false;
  }
  llvm::Expected<SafetensorsFile> file = readSafetensors(data);
  llvm::Expected<std::vector<HostTensor>> inputs =
      file ? inputsFromFile(**g, *file, data)
           : llvm::Expected<std::vector<HostTensor>>(file.takeError());
  auto start = std::chrono::steady_clock::now();
  llvm::Expected<Execution> run =
      inputs ? executeReference(**g, *inputs, &*file, data)
             : llvm::Expected<Execution>(inputs.takeError());
  double ms = rt::msSince(start);
  if (!run) {
    llvm::outs() << fmt::format("  {:<6} FAILED: {}\n", w.id,
                                errorToString(run.takeError()));
    return false;
  }
  const Value &out = *run->specialized->outputs()[0];
  const HostTensor *want = file->find("expected." + out.name());
  if (!want) {
    llvm::outs() << fmt::format("  {:<6} FAILED: {} has no expected.{}\n", w.id,
                                data, out.name());
    return false;
  }
  Comparison c = compareTensors(run->outputs[0], toRef(*want), 1e-9, 1e-12);
  llvm::outs() << fmt::format(
      "  {:<6} {:<22} rel. error vs PyTorch {:.1e}  max abs {:.1e}  "
      "{:>7.1f} ms  {}\n",
      w.id, out.type().str(), c.relError, c.maxAbsError, ms,
      c.ok() ? "ok" : "MISMATCH " + c.firstMismatch);
  return c.ok();
}

} // namespace

int main() {
  llvm::outs() << "Kiln flagship demo\n\n";
  llvm::Expected<rt::DriverInfo> gpu = rt::probeDevices();
  if (gpu) {
    llvm::outs() << rt::describeDevices() << "\n"
                 << "GPU code generation is not built yet, so this demo "
                    "runs Kiln's float64\nreference evaluator on the CPU.\n";
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

  llvm::outs() << "\n2. Small shapes: evaluate and compare with PyTorch's "
                  "float64 answer\n   (tests/data/golden/, same weights and "
                  "inputs)\n";
  for (const Workload &w : kWorkloads)
    ok &= runSmallShape(w);

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
