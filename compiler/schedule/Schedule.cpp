#include "schedule/Schedule.h"

#include "llvm/Support/ErrorHandling.h"

#include <fmt/format.h>

namespace kiln {

/// Parameter `name` of `params`, or nullptr.
static const ScheduleParam *findParam(llvm::ArrayRef<ScheduleParam> params,
                                      llvm::StringRef name) {
  for (const ScheduleParam &p : params)
    if (p.name == name)
      return &p;
  return nullptr;
}

int64_t Schedule::get(llvm::StringRef name) const {
  if (const ScheduleParam *p = findParam(params, name))
    return p->value;
  llvm::report_fatal_error(llvm::Twine("schedule of ") + kernel +
                           " has no parameter " + name);
}

int64_t Schedule::get(llvm::StringRef name, int64_t absent) const {
  const ScheduleParam *p = findParam(params, name);
  return p ? p->value : absent;
}

void Schedule::set(llvm::StringRef name, int64_t value) {
  for (ScheduleParam &p : params)
    if (p.name == name) {
      p.value = value;
      return;
    }
  params.push_back({name.str(), value});
}

std::string Schedule::templateStr() const {
  std::string s = kernel;
  for (const ScheduleParam &p : params)
    s += fmt::format(" {}={}", p.name, p.value);
  return s;
}

std::string Schedule::str() const {
  std::string s = templateStr();
  s += fmt::format("; grid {}{} x block {}", launch.grid,
                   launch.gridY > 1 ? fmt::format(" x {}", launch.gridY) : "",
                   launch.block);
  if (launch.sharedBytes)
    s += fmt::format(", {} B shared", launch.sharedBytes);
  if (launch.cooperative)
    s += ", cooperative";
  return s;
}

} // namespace kiln
