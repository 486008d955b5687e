//===- Nvrtc.h - The NVRTC run-time compiler -------------------*- C++ -*-===//
#ifndef KILN_RUNTIME_NVRTC_H
#define KILN_RUNTIME_NVRTC_H

#include <string>

namespace kiln::rt {

/// "13.0" — the NVRTC this binary runs with (part of the kernel cache key).
std::string nvrtcVersionString();

} // namespace kiln::rt

#endif
