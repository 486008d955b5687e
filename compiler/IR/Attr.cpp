#include "IR/Attr.h"

#include "llvm/Support/ErrorHandling.h"

#include <cmath>
#include <fmt/format.h>

namespace kiln {

llvm::StringRef attrKindName(AttrKind k) {
  switch (k) {
  case AttrKind::Int:
    return "int";
  case AttrKind::Float:
    return "float";
  case AttrKind::Bool:
    return "bool";
  case AttrKind::String:
    return "string";
  case AttrKind::IntList:
    return "int list";
  }
  llvm_unreachable("bad attr kind");
}

std::string formatFloat(double v) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v > 0 ? "inf" : "-inf";
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".eE") == std::string::npos)
    s += ".0";
  return s;
}

std::string Attr::str() const {
  switch (kind()) {
  case AttrKind::Int:
    return std::to_string(getInt());
  case AttrKind::Float:
    return formatFloat(getFloat());
  case AttrKind::Bool:
    return getBool() ? "true" : "false";
  case AttrKind::String: {
    std::string out = "\"";
    for (char c : getString()) {
      if (c == '"' || c == '\\')
        out += '\\';
      out += c;
    }
    return out + "\"";
  }
  case AttrKind::IntList: {
    std::string out = "[";
    llvm::ArrayRef<int64_t> v = getInts();
    for (size_t i = 0; i < v.size(); ++i)
      out += (i ? ", " : "") + std::to_string(v[i]);
    return out + "]";
  }
  }
  llvm_unreachable("bad attr kind");
}

} // namespace kiln
