#include "Nvrtc.h"

#include <fmt/format.h>
#include <nvrtc.h>

namespace kiln::rt {

std::string nvrtcVersionString() {
  int major = 0, minor = 0;
  if (::nvrtcVersion(&major, &minor) != NVRTC_SUCCESS)
    return "unknown";
  return fmt::format("{}.{}", major, minor);
}

} // namespace kiln::rt
