//===- PlanPrinter.cpp - The fusion plan as text and as Graphviz ----------===//
#include "PlanPrinter.h"

#include "llvm/ADT/STLExtras.h"

#include <fmt/format.h>

namespace kiln {

static std::string human(uint64_t bytes) {
  if (bytes >= (1ull << 30))
    return fmt::format("{:.2f} GiB", bytes / double(1ull << 30));
  if (bytes >= (1ull << 20))
    return fmt::format("{:.1f} MiB", bytes / double(1ull << 20));
  return fmt::format("{:.1f} KiB", bytes / 1024.0);
}

static std::string valueList(const std::vector<const Value *> &vs) {
  std::string s;
  for (const Value *v : vs)
    s += fmt::format("{}{} {}", s.empty() ? "" : ", ", v->name(),
                     v->type().str());
  return s.empty() ? "-" : s;
}

std::string planText(const Executable &exe, MatmulPrecision precision) {
  std::string out;
  uint64_t total = 0;
  const auto &groups = exe.plan().groups;
  for (size_t i = 0; i < groups.size(); ++i) {
    const FusionGroup &g = groups[i];
    const EmittedKernel &k = exe.kernels()[i];
    total += k.bytes;
    out += fmt::format("kernel {}: {}\n", i, k.name);
    out += fmt::format("  kind    {}\n", groupKindName(g.kind).str());
    out += fmt::format("  fuses   {}\n", g.nodesText());
    out += fmt::format("  reads   {}\n", valueList(g.inputs));
    out += fmt::format("  writes  {}\n", valueList(g.outputs));
    out += fmt::format("  launch  grid {}{} x block {}, {} shared{}; {}\n",
                       k.grid, k.gridY > 1 ? fmt::format(" x {}", k.gridY) : "",
                       k.block, human(k.sharedBytes),
                       k.cooperative ? ", cooperative" : "", k.strategy);
    out += fmt::format("  schedule {}\n", exe.schedules()[i].templateStr());
    out += fmt::format("  moves   {} (each input read once, each output "
                       "written once)\n",
                       human(k.bytes));
  }
  // Groups whose results are all empty: PyTorch gives empty tensors and
  // nothing is computed.
  for (const FusionGroup &g : exe.plan().empty)
    out += fmt::format("no kernel: {}\n  writes  {} (empty)\n", g.nodesText(),
                       valueList(g.outputs));
  out += fmt::format("{} kernel{} for {} node{}; {} must move through "
                     "memory; target {}, {} SMs, matmul precision {}\n",
                     groups.size(), groups.size() == 1 ? "" : "s",
                     exe.graph().nodes().size(),
                     exe.graph().nodes().size() == 1 ? "" : "s", human(total),
                     exe.target().arch, exe.target().multiprocessors,
                     precisionName(precision).str());
  return out;
}

std::string planDot(const Executable &exe) {
  std::string s = "digraph kiln_plan {\n  rankdir=TB;\n  node [shape=box, "
                  "fontname=monospace];\n";
  const Graph &g = exe.graph();
  for (const Value *v : g.inputs())
    s += fmt::format("  \"{}\" [shape=ellipse, label=\"{}\\n{}\"];\n",
                     v->name(), v->name(), v->type().str());
  for (const Value *v : g.params())
    s += fmt::format("  \"{}\" [shape=ellipse, style=dashed, "
                     "label=\"{}\\n{}\"];\n",
                     v->name(), v->name(), v->type().str());
  // Kernels are k0, k1, ...; groups with empty results (no kernel) e0, ...
  const auto &groups = exe.plan().groups;
  const auto &empty = exe.plan().empty;
  auto producer = [&](const Value *v) -> std::string {
    for (size_t j = 0; j < groups.size(); ++j)
      if (llvm::is_contained(groups[j].outputs, v))
        return fmt::format("k{}", j);
    for (size_t j = 0; j < empty.size(); ++j)
      if (llvm::is_contained(empty[j].outputs, v))
        return fmt::format("e{}", j);
    return "";
  };
  auto box = [&](const FusionGroup &fg, const std::string &id,
                 const std::string &title, const char *style) {
    std::string ops;
    for (const Node *n : fg.nodes())
      ops +=
          fmt::format("\\n{} = {}", n->result()->name(), opName(n->op()).str());
    s += fmt::format("  {} [label=\"{}{}\"{}];\n", id, title, ops, style);
    for (const Value *v : fg.inputs) {
      std::string from = producer(v);
      s += fmt::format("  \"{}\" -> {} [label=\"{}\"];\n",
                       from.empty() ? v->name() : from, id, v->name());
    }
  };
  for (size_t i = 0; i < empty.size(); ++i)
    box(empty[i], fmt::format("e{}", i), "empty, no kernel", ", style=dashed");
  for (size_t i = 0; i < groups.size(); ++i)
    box(groups[i], fmt::format("k{}", i), exe.kernels()[i].name, "");
  for (const Value *v : g.outputs())
    if (std::string from = producer(v); !from.empty())
      s += fmt::format("  {} -> \"out:{}\";\n", from, v->name());
  return s + "}\n";
}

} // namespace kiln
