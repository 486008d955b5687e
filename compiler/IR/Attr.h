//===- Attr.h - Typed node attributes --------------------------*- C++ -*-===//
#ifndef KILN_IR_ATTR_H
#define KILN_IR_ATTR_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <variant>

namespace kiln {

/// The kinds an attribute may have. IntList covers dims (`dim=[1, 2]`) and
/// pairs such as stride; the schema says how many entries are allowed.
enum class AttrKind : uint8_t { Int, Float, Bool, String, IntList };

llvm::StringRef attrKindName(AttrKind k);

class Attr {
public:
  using IntList = llvm::SmallVector<int64_t, 4>;

  Attr() : v_(int64_t(0)) {}
  static Attr ofInt(int64_t v) { return Attr(v); }
  static Attr ofFloat(double v) { return Attr(v); }
  static Attr ofBool(bool v) { return Attr(v); }
  static Attr ofString(std::string v) { return Attr(std::move(v)); }
  static Attr ofInts(llvm::ArrayRef<int64_t> v) {
    return Attr(IntList(v.begin(), v.end()));
  }

  AttrKind kind() const { return static_cast<AttrKind>(v_.index()); }
  int64_t getInt() const { return std::get<int64_t>(v_); }
  double getFloat() const { return std::get<double>(v_); }
  bool getBool() const { return std::get<bool>(v_); }
  const std::string &getString() const { return std::get<std::string>(v_); }
  llvm::ArrayRef<int64_t> getInts() const { return std::get<IntList>(v_); }

  /// .kg literal spelling: 3, 1e-05, 2.0, true, "tanh", [1, 2]. Floats always
  /// carry a '.', 'e', "inf" or "nan" so they parse back as floats.
  std::string str() const;

  bool operator==(const Attr &o) const { return v_ == o.v_; }
  bool operator!=(const Attr &o) const { return !(*this == o); }

private:
  // Order matches AttrKind.
  std::variant<int64_t, double, bool, std::string, IntList> v_;
  template <typename T> explicit Attr(T v) : v_(std::move(v)) {}
};

/// Shortest text that parses back to exactly `v` as a float literal.
std::string formatFloat(double v);

} // namespace kiln

#endif
