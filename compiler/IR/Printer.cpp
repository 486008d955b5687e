#include "IR/Printer.h"

namespace kiln {

static std::string operandText(const Value &v) {
  return v.isLiteral() ? v.literalStr() : v.name();
}

/// Operands are positional up to the first absent optional operand; the
/// present ones after it use keywords (`group_norm(x, bias=b, ...)`).
static void printArgs(const Node &n, std::string &out) {
  const OpInfo &info = n.info();
  bool keyword = false;
  bool first = true;
  auto sep = [&]() -> const char * {
    const char *s = first ? "" : ", ";
    first = false;
    return s;
  };
  for (size_t i = 0; i < info.operands.size(); ++i) {
    const Value *v = n.operand(i);
    if (!v) {
      keyword = true;
      continue;
    }
    out += sep();
    if (keyword)
      out += fmt::format("{}=", info.operands[i].name);
    out += operandText(*v);
  }
  for (const auto &[name, attr] : n.attrs())
    out += fmt::format("{}{}={}", sep(), name, attr.str());
}

static std::string printNode(const Node &n, const PrintOptions &opts) {
  const Value &result = *n.result();
  std::string out = "  " + result.name();
  if (opts.types)
    out += ": " + result.type().str();
  out += fmt::format(" = {}(", n.info().name.str());
  printArgs(n, out);
  return out + ")\n";
}

static std::string printHeader(const Graph &g) {
  std::string out = fmt::format("graph {}(", g.name());
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Value &v = *g.inputs()[i];
    out += fmt::format("{}{}: {}", i ? ", " : "", v.name(), v.type().str());
  }
  return out + ") {\n";
}

std::string printGraph(const Graph &g, const PrintOptions &opts) {
  std::string out = printHeader(g);
  for (const Value *p : g.params()) {
    out += fmt::format("  param {}: {}", p->name(), p->type().str());
    if (p->init())
      out += " = " + p->init()->str();
    out += "\n";
  }
  for (const auto &n : g.nodes())
    out += printNode(*n, opts);
  out += "  return";
  for (size_t i = 0; i < g.outputs().size(); ++i)
    out += (i ? ", " : " ") + g.outputs()[i]->name();
  return out + "\n}\n";
}

} // namespace kiln
