#include "FileRoles.h"

#include "Args.h"
#include "FileUtil.h"

namespace kiln::cli {

void FileRoles::reads(std::string role, std::string path) {
  entries_.push_back({std::move(role), std::move(path), false});
}

void FileRoles::writes(std::string option, std::string path) {
  entries_.push_back({std::move(option), std::move(path), true});
}

llvm::Error FileRoles::check() const {
  std::vector<std::string> ids;
  for (const Entry &e : entries_)
    ids.push_back(fileIdentity(e.path));
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Entry &w = entries_[i];
    if (!w.written || ids[i].empty())
      continue;
    for (size_t j = 0; j < entries_.size(); ++j) {
      const Entry &o = entries_[j];
      if (j == i || ids[j] != ids[i] || (o.written && j > i))
        continue;
      if (o.written)
        return usageError("{} and {} are both written to {}; give each "
                          "output its own file",
                          o.role, w.role, w.path);
      return usageError("{} would write {}, which is {} ({}): that would "
                        "replace it; write the output to another file",
                        w.role, w.path, o.role, o.path);
    }
  }
  return llvm::Error::success();
}

} // namespace kiln::cli
