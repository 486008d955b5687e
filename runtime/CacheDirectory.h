//===- CacheDirectory.h - The kernel cache's files on disk -----*- C++ -*-===//
//
// The layout of a cache directory, and everything done to it as a whole:
// listing, statistics, eviction, clearing.
//
//   <dir>/kiln.conf                 settings (CacheConfig.h)
//   <dir>/stats                     counters since the last zeroing
//   <dir>/lock                      held by the one process cleaning up
//   <dir>/<kk>/<key>.kentry         an entry (format: KernelCache.h); <kk> is
//                                   the first two hex digits of the key
//   <dir>/<kk>/<key>.hits           disk hits of that entry
//   <dir>/<kk>/<key>.kentry.tmp.<pid>.<hex>   an entry being written
//
// An entry's mtime is its last use. Entries are never rewritten on a hit:
// hits go to the small counter files (<key>.hits, stats), each updated in
// place under its own flock. Eviction unlinks files; a process that already
// opened one reads it whole all the same (POSIX), and one that opens it
// later finds nothing and compiles: a miss, never a damaged entry.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_CACHEDIRECTORY_H
#define KILN_RUNTIME_CACHEDIRECTORY_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::rt {

/// An entry file as a directory listing sees it (its contents unread).
struct EntryFile {
  std::string key, path;
  uint64_t bytes = 0;     // the entry file and its hit counter
  int64_t lastUsedNs = 0; // the entry file's mtime, ns since the epoch
  int64_t hits = 0;       // filled in when scan() is asked to
};

/// A file in the cache directory that is not an entry.
struct StrayFile {
  enum class Kind {
    StaleTemp,  // left by a writer that died: safe to remove
    LiveTemp,   // being written now
    OrphanHits, // a hit counter whose entry is gone
    Other,      // not Kiln's
  };
  std::string path;
  Kind kind = Kind::Other;
  uint64_t bytes = 0;
};

/// Disk hits and misses since the last zeroing.
struct CacheStats {
  int64_t hits = 0, misses = 0;
  double savedMs = 0;   // compile time of the entries hit
  int64_t zeroedAt = 0; // Unix seconds; 0 when never zeroed
};

/// What cleanup() or clear() did, and the directory after it.
struct CleanupReport {
  size_t removedEntries = 0;
  uint64_t removedBytes = 0;
  size_t removedStray = 0; // stale temporary files, orphan counters
  size_t entries = 0;
  uint64_t bytes = 0;
  /// Entries that were to go but could not be removed (a read-only
  /// directory, say), and why the first of them could not.
  size_t failedEntries = 0;
  std::string failure;
};

/// Cleanup brings a directory over its limit down to this share of it, so
/// that the next few stores do not each trigger another cleanup.
inline constexpr double CleanupTarget = 0.9;

class CacheDirectory {
public:
  /// `path` must exist; nothing here creates it.
  explicit CacheDirectory(std::string path) : dir_(std::move(path)) {}

  const std::string &path() const { return dir_; }
  std::string entryPath(llvm::StringRef key) const;
  std::string hitsPath(llvm::StringRef key) const;
  std::string statsPath() const { return dir_ + "/stats"; }

  /// Every entry file, sorted by key. Files that are not entries go to
  /// `stray` when given; `withHits` also reads each entry's hit counter.
  std::vector<EntryFile> scan(std::vector<StrayFile> *stray = nullptr,
                              bool withHits = false) const;
  /// The key of the one entry whose key starts with `prefix` (hex digits).
  llvm::Expected<std::string> findKey(llvm::StringRef prefix) const;

  /// Counts a disk hit on `key` that saved `compileMs` of compiling.
  void recordHit(llvm::StringRef key, double compileMs) const;
  /// Counts a miss, and an entry of `storedBytes` written for it (0: none).
  /// Returns whether the directory may now exceed `maxBytes` (0: no limit),
  /// from a running total that a full scan corrects every 64 stores.
  bool recordMiss(uint64_t storedBytes, uint64_t maxBytes) const;
  CacheStats stats() const;
  /// False when the statistics file cannot be written.
  bool zeroStats() const;

  /// Removes stale temporary files and orphan counters and, when the
  /// entries exceed `maxBytes` (0: no limit), the least recently used ones
  /// until they fit in CleanupTarget of it. One process cleans at a time.
  CleanupReport cleanup(uint64_t maxBytes) const;
  /// Removes every entry, and the stale temporary files.
  CleanupReport clear() const;
  /// Removes the entry file for `key` and its hit counter.
  bool removeEntry(llvm::StringRef key) const;

private:
  /// Deletes `victims` and the stale stray files; updates the total.
  CleanupReport remove(std::vector<EntryFile> all, size_t victims,
                       const std::vector<StrayFile> &stray) const;

  std::string dir_;
};

/// Whether `s` is a whole key: 64 lowercase hex digits.
bool isCacheKey(llvm::StringRef s);

} // namespace kiln::rt

#endif
