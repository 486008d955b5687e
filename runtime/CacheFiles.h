//===- CacheFiles.h - Files the kernel cache can trust ---------*- C++ -*-===//
//
// The file-system pieces under the kernel cache: private directories, the
// safety check on a cache directory, atomic writes (temporary file + rename),
// the names of those temporary files and when one is stale, exclusive locks
// (flock) and small counter files updated in place under a lock.
//
// Every function here reports a problem as a short phrase ("" when all is
// well) or an llvm::Error; none of them prints.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_CACHEFILES_H
#define KILN_RUNTIME_CACHEFILES_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace kiln::rt {

/// strerror(errno).
std::string errnoText();

/// Reads the whole open file into `out`; false on a read error.
bool readAll(int fd, std::string &out);
/// Reads the file at `path`; false (with errno set) when it cannot.
bool readFile(const std::string &path, std::string &out);

/// mkdir -p; each directory it creates gets mode 0700. "" on success, else
/// the reason ("cannot create /a/b: Permission denied", "not writable: ...").
std::string makePrivateDirectories(const std::string &path);

/// Whether `path` is a directory whose entries we may list and read.
bool isReadableDirectory(const std::string &path);

/// "" when `dir` may hold code that will run: it belongs to the effective
/// user and neither its group nor others may write to it. Otherwise the
/// reason, e.g. "it is writable by other users (mode 0777)".
std::string unsafeDirectoryReason(const std::string &dir);
/// The one message for an unsafe cache directory: what is wrong, why it
/// matters and what to do. No prefix: the compiler's warning puts "kiln: "
/// before it, `kiln cache`'s error "error: ".
std::string unsafeDirectoryMessage(const std::string &dir,
                                   const std::string &reason);

/// Writes `bytes` to `path` atomically: a temporary file in the same
/// directory (see tempFileFor), fsync, rename. A reader sees the old file,
/// the whole new one, or none; never part of one. "" on success, else the
/// reason (and the temporary file is removed). `afterHalf`, for tests, runs
/// once half the bytes are in the temporary file.
std::string writeFileAtomically(const std::string &path, llvm::StringRef bytes,
                                const std::function<void()> &afterHalf = {});

/// The name of a temporary file for `path`: "<path>.tmp.<pid>.<16 hex>".
std::string tempFileFor(const std::string &path);
/// Whether `name` (a file name, no directory) is such a temporary file;
/// sets `pid` to its writer's process id.
bool isTempFileName(llvm::StringRef name, int64_t &pid);
/// Whether the temporary file at `path`, written by `pid`, is left over
/// from a writer that died: that process is gone, or the file is more than
/// an hour old.
bool isStaleTempFile(const std::string &path, int64_t pid);

/// An exclusive lock (flock) on a file, created if need be with mode 0600,
/// held until the object dies. Locks end with their process, so a crash
/// never leaves one held.
class FileLock {
public:
  explicit FileLock(const std::string &path);
  ~FileLock();
  FileLock(const FileLock &) = delete;
  FileLock &operator=(const FileLock &) = delete;
  /// The open, locked file; -1 when it could not be opened or locked.
  int fd() const { return fd_; }
  bool locked() const { return fd_ >= 0; }

private:
  int fd_ = -1;
};

/// A small file of named counters, one "name value" line each, padded to a
/// fixed width so an update rewrites it in place. Unknown or damaged lines
/// read as absent: counters are advisory and never stop a compile.
using Counters = std::map<std::string, int64_t>;

/// The counters in `path` (empty when there is no such file).
Counters readCounters(const std::string &path);
/// Applies `update` to the counters in `path` under the file's lock and
/// writes them back. False when the file cannot be opened or written.
bool updateCounters(const std::string &path,
                    const std::function<void(Counters &)> &update);

} // namespace kiln::rt

#endif
