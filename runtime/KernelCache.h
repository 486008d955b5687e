//===- KernelCache.h - Compiled kernels in memory and on disk --*- C++ -*-===//
//
// The key of a kernel is a hash (SHA-256, hex) of everything that decides
// its cubin: the generated source, every header it may include, the NVRTC
// options and target arch, the NVRTC version and Kiln's version.
//
// Memory layer: key -> cubin, for the life of the KernelCache.
// Disk layer: one file per entry under the cache directory
// ($KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else ~/.cache/kiln), created
// with mode 0700. An entry holds a metadata record (JSON), the source and the
// cubin, with a SHA-256 checksum over all of it. Entries are written to a
// temporary file in the same directory and renamed into place, so readers see
// a whole entry or none, and several processes may compile the same graph at
// once. An entry whose checksum fails is reported once (on the warning
// stream), removed and recompiled -- never loaded. When the directory cannot
// be created or written, the cache warns once and works from memory.
//
// Entry file: <dir>/<key[0..1]>/<key>.kentry, bytes in this order:
//   KILNCACHE 1\n
//   lengths <M> <S> <C>\n            decimal byte counts of the next three
//   <M bytes: metadata, JSON>        KernelMetadata's fields, key, sizes,
//                                    created/lastUsed (Unix seconds)
//   <S bytes: the source>
//   <C bytes: the cubin>
//   <64 hex digits>\n                SHA-256 of every byte before them
// The file's mtime is the time of its last use (touched on every disk hit).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_KERNELCACHE_H
#define KILN_RUNTIME_KERNELCACHE_H

#include "Nvrtc.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::rt {

/// What a user may want to know about an entry; stored beside the cubin.
struct KernelMetadata {
  std::string kernelName; // the __global__ function
  std::string graph;      // graph name
  std::string group;      // fusion group name within the graph
  std::string shapes;     // "x=f32[112,64,512,512]"
  std::string launch;     // "grid 264, block 512, smem 97 KiB, cooperative"
  // Filled in by the cache:
  std::string arch;
  std::vector<std::string> options;
  std::string nvrtcVersion, kilnVersion;
  double compileMs = 0;
};

struct CacheOptions {
  /// "" picks the default location described above.
  std::string directory;
  /// No disk layer at all (KILN_CACHE_DISABLE=1).
  bool disableDisk = false;
  /// Where the one warning about an unusable directory or a corrupt entry
  /// goes; nullptr means llvm::errs().
  llvm::raw_ostream *warnings = nullptr;
};

/// One entry file, read back whole (see readCacheEntry).
struct CacheEntry {
  KernelMetadata meta;
  std::string key, source;
  std::vector<char> cubin;
  int64_t created = 0;  // Unix seconds, when the entry was written
  int64_t lastUsed = 0; // Unix seconds, the file's mtime
};

/// Reads and checks the entry file at `path` (magic, lengths, checksum,
/// metadata). The error names the file and what is wrong with it.
llvm::Expected<CacheEntry> readCacheEntry(const std::string &path);

/// Reads KILN_CACHE_DIR and KILN_CACHE_DISABLE.
CacheOptions cacheOptionsFromEnvironment();

struct CacheLookup {
  std::shared_ptr<const std::vector<char>> cubin;
  std::string key;
  enum class Source { Memory, Disk, Compiled } source = Source::Compiled;
  double compileMs = 0; // time spent compiling now (0 on a hit)
  std::string log;      // NVRTC warnings when compiled now
};

class KernelCache {
public:
  explicit KernelCache(CacheOptions options, std::string kilnVersion);

  /// The key of `req` (hex SHA-256).
  std::string keyOf(const CompileRequest &req) const;

  /// Returns the cubin of `req`: from memory, else from disk (checksum
  /// checked), else compiled with NVRTC and stored in both. Thread-safe.
  llvm::Expected<CacheLookup> getOrCompile(const CompileRequest &req,
                                           const KernelMetadata &meta);

  /// The directory in use, or "" when the disk layer is off.
  const std::string &directory() const { return dir_; }
  /// Path of the entry file for `key` (whether or not it exists).
  std::string entryPath(const std::string &key) const;

private:
  /// One line on the warning stream (callers hold mu_ once others may run).
  void warn(const std::string &line);
  /// The cubin of a good entry file for `key`, or null on a miss; a corrupt
  /// entry is reported, removed and counts as a miss.
  std::shared_ptr<const std::vector<char>> loadFromDisk(const std::string &key);
  /// Writes the entry atomically; a failure warns once.
  void storeOnDisk(const std::string &key, const CompileRequest &req,
                   const KernelMetadata &meta, const std::vector<char> &cubin);

  CacheOptions opts_;
  std::string kilnVersion_;
  std::string dir_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<const std::vector<char>>> memory_;
  bool warnedDir_ = false;
};

} // namespace kiln::rt

#endif
