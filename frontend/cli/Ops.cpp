//===- Ops.cpp - kiln ops: the op set with operands and attributes --------===//
#include "Commands.h"

#include "IR/OpInfo.h"

#include "llvm/Support/raw_ostream.h"

namespace kiln::cli {

static std::string describeOp(const OpInfo &op) {
  std::string sig;
  for (const OperandSpec &o : op.operands)
    sig += fmt::format("{}{}{}", sig.empty() ? "" : ", ", o.name,
                       o.optional ? "?" : "");
  for (const AttrSpec &a : op.attrs) {
    std::string value = a.required       ? attrKindName(a.kind).str()
                        : a.defaultValue ? a.defaultValue->str()
                                         : "absent";
    sig += fmt::format(", {}={}", a.name, value);
  }
  std::string aliases;
  for (const char *alias : op.aliases)
    aliases += fmt::format("{}{}", aliases.empty() ? "  (also " : ", ", alias);
  if (!aliases.empty())
    aliases += ")";
  return fmt::format("{}({}){}", op.name.str(), sig, aliases);
}

static int runOps(const ParsedArgs &) {
  for (const OpInfo &op : allOps())
    llvm::outs() << describeOp(op) << "\n";
  return ExitOk;
}

const CommandSpec &opsCommand() {
  static const CommandSpec spec = {
      "ops",
      "list every op with its operands and attributes",
      "kiln ops",
      "Lists the op set: operands (? marks optional ones) and attributes\n"
      "with their defaults. Each op means what PyTorch's op of that name "
      "means.",
      {},
      0,
      0,
      runOps};
  return spec;
}

} // namespace kiln::cli
