//===- FileUtil.h - Reading and atomically writing whole files -*- C++ -*-===//
//
// Shared by the tensor file formats. Errors name the file and give the
// operating system's reason.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_FRONTEND_FILEUTIL_H
#define KILN_FRONTEND_FILEUTIL_H

#include "IR/Diagnostics.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>

namespace kiln {

/// The whole file (memory-mapped where possible). A regular file may be of
/// any size; a pipe or device (/dev/stdin, /dev/zero) is read up to
/// `streamLimit` bytes and refused beyond that, as is a directory.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readWholeFile(llvm::StringRef path, uint64_t streamLimit = uint64_t(2) << 30);

/// Writes `path` through `write` into a temporary file in the same folder
/// and renames it into place, so readers see the old file or the new one,
/// never a partial one, even when the process is interrupted (the temporary
/// file is removed on a fatal signal). A symbolic link is written through:
/// the file it points to is replaced, the link stays. A file that existed
/// keeps its permissions. A device or pipe is written in place. Errors say
/// why, a full disk included.
llvm::Error
writeFileAtomically(llvm::StringRef path,
                    llvm::function_ref<void(llvm::raw_ostream &)> write);

/// `path` with every symbolic link along it resolved, its last component
/// included, even when the file it names does not exist yet (a dangling
/// link names the file it would create). Absolute, without "." or "..".
std::string resolvedPath(llvm::StringRef path);

/// What tells two paths apart as files: for an existing file, its device
/// and inode (so "./x.npy", "x.npy", a symbolic link to it and a hard link
/// all have one identity); for a file not yet there, the path it would be
/// created at (resolvedPath). Empty for a character device (/dev/null, a
/// terminal): writing one replaces nothing, so it clashes with nothing.
std::string fileIdentity(llvm::StringRef path);

/// A user error located at `path`: "path: error: message".
template <typename... Args>
llvm::Error fileError(llvm::StringRef path, fmt::format_string<Args...> f,
                      Args &&...args) {
  return diag(SourceLoc{path.str()}, f, std::forward<Args>(args)...);
}

} // namespace kiln

#endif
