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

/// How long a pipe or device is, as far as its first bytes tell: read on
/// until it holds `bytes` bytes; if `whole`, that is the file's size and the
/// stream should end there.
struct StreamExtent {
  uint64_t bytes = 0;
  bool whole = false;
};

/// Judges the bytes of a pipe or device read so far (empty at first): an
/// error when they show the file is not of the expected format, else how
/// much more to read. A `whole` extent is final; any other must ask for
/// more than `prefix` holds.
using StreamFraming =
    llvm::function_ref<llvm::Expected<StreamExtent>(llvm::StringRef prefix)>;

/// The most a pipe or device is read: 2 GiB.
constexpr uint64_t kStreamLimit = uint64_t(2) << 30;

/// The whole file. A regular file is memory-mapped, whatever its size. A
/// pipe or device (/dev/stdin, /dev/zero) is read in steps that `framing`
/// chooses, so a stream in the wrong format is refused after its first
/// bytes: at most `streamLimit` bytes, and a header announcing more is
/// refused before reading them. Past a `whole` extent at most 64 KiB more
/// are read: a stream that ends there is returned with them, for the
/// parser to report the trailing bytes as it does for a regular file; one
/// that goes on is refused. A stream that ends short of its extent is
/// returned as it is, for the parser to report it truncated. A directory is
/// refused.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readWholeFile(llvm::StringRef path, StreamFraming framing,
              uint64_t streamLimit = kStreamLimit);

/// The whole file; a pipe or device is read to its end, up to
/// `streamLimit` bytes.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readWholeFile(llvm::StringRef path, uint64_t streamLimit = kStreamLimit);

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
