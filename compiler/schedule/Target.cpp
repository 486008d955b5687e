#include "schedule/Target.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

namespace kiln {

TargetInfo defaultTarget(const std::string &arch) {
  TargetInfo t;
  t.arch = arch;
  if (arch == "sm_90" || arch == "sm_90a")
    return t;
  t.multiprocessors = 108; // A100
  t.maxSharedPerBlock = 163 * 1024;
  t.maxSharedPerSM = 164 * 1024;
  t.l2Bytes = 40 * 1024 * 1024;
  // ptxas warns that 2048 is out of range on each of these (sm_120a alike).
  llvm::StringRef base = llvm::StringRef(arch).rtrim("af");
  static const llvm::StringRef k1536[] = {"sm_86",  "sm_87",  "sm_88", "sm_89",
                                          "sm_110", "sm_120", "sm_121"};
  if (llvm::is_contained(k1536, base))
    t.maxThreadsPerSM = 1536;
  return t;
}

} // namespace kiln
