//===- KernelCache.h - Compiled kernels in memory and on disk --*- C++ -*-===//
//
// The key of a kernel is a hash (SHA-256, hex) of its key parts: the hash of
// the generated source, the hash of every header it may include, the NVRTC
// options (target arch included), the NVRTC version and Kiln's version. The
// parts are stored in each entry, so `kiln cache why` can say which one
// differs from the nearest entry.
//
// Memory layer: key -> cubin, for the life of the KernelCache.
// Disk layer: one file per entry under the cache directory (CacheConfig.h
// says where; CacheDirectory.h gives the layout), created with mode 0700.
// An entry holds a metadata record (JSON), the source and the cubin, with a
// SHA-256 checksum over all of it. Entries are written to a temporary file
// in the same directory and renamed into place, so readers see a whole
// entry or none, and several processes may compile the same graph at once.
// An entry whose checksum fails is reported once (on the warning stream),
// removed and recompiled -- never loaded. When the directory cannot be
// created or written, or is not safe (another user's, or writable by
// others: a cubin is code that runs on the GPU), the cache warns once and
// works from memory. After each store the directory is kept under its size
// limit by evicting the least recently used entries.
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

#include "CacheConfig.h"
#include "CacheDirectory.h"
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
  // Filled in by the cache (the key parts, then the compile time):
  std::string sourceHash, headersHash; // "" in entries of Kiln 0.1.0
  std::string arch;
  std::vector<std::string> options;
  std::string nvrtcVersion, kilnVersion;
  double compileMs = 0;
};

/// Everything the key is a hash of.
struct CacheKeyParts {
  std::string sourceHash;           // SHA-256 of the source
  std::string headersHash;          // SHA-256 of every header's name and text
  std::vector<std::string> options; // every NVRTC option, arch included
  std::string arch, nvrtcVersion, kilnVersion;
};
CacheKeyParts cacheKeyParts(const CompileRequest &req,
                            llvm::StringRef kilnVersion);
/// The parts an entry's metadata records.
CacheKeyParts cacheKeyParts(const KernelMetadata &meta);
/// The key (hex SHA-256) of `parts`.
std::string cacheKey(const CacheKeyParts &parts);

struct CacheOptions {
  /// "" picks the default location (CacheConfig.h).
  std::string directory;
  /// No disk layer at all (KILN_CACHE_DISABLE=1).
  bool disableDisk = false;
  /// The disk layer's limit in bytes; 0: none.
  uint64_t maxBytes = DefaultCacheMaxBytes;
  /// Ignore entries on disk: compile anew and overwrite (KILN_RECOMPILE=1).
  bool recompile = false;
  /// Problems with the settings, warned once by the KernelCache.
  std::vector<std::string> settingProblems;
  /// Where the one warning about an unusable directory or a corrupt entry
  /// goes; nullptr means llvm::errs(). A KernelCache keeps the pointer, so
  /// the stream must outlive it; Executable keeps its process-wide caches
  /// per stream, so there a stream need only outlive the compiles given it.
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
/// Reads only the metadata record of the entry file at `path`, for
/// listings: fast, but unchecked (source and cubin are left empty).
llvm::Expected<CacheEntry> readCacheEntryMetadata(const std::string &path);
/// What a checksum cannot see: the entry holds the key `fileKey` that its
/// file name says, a cubin (an ELF file), and a key that is the hash of the
/// key parts it records, the source hash among them.
llvm::Error checkCacheEntry(const CacheEntry &entry, llvm::StringRef fileKey);

/// The settings of CacheConfig.h: the environment, then the config file.
CacheOptions cacheOptionsFromEnvironment();

struct CacheLookup {
  std::shared_ptr<const std::vector<char>> cubin;
  std::string key;
  enum class Source { Memory, Disk, Compiled } source = Source::Compiled;
  double compileMs = 0; // time spent compiling now (0 on a hit)
  std::string log;      // NVRTC warnings when compiled now
  bool stored = false;  // compiled now and written to the disk layer
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
  /// entry is reported, removed and counts as a miss. Sets `compileMs` to
  /// the entry's compile time.
  std::shared_ptr<const std::vector<char>> loadFromDisk(const std::string &key,
                                                        double &compileMs);
  /// Writes the entry atomically; returns its size, or 0 after warning
  /// (once) that it could not.
  uint64_t storeOnDisk(const std::string &key, const CompileRequest &req,
                       const KernelMetadata &meta,
                       const std::vector<char> &cubin);

  CacheOptions opts_;
  std::string kilnVersion_;
  std::string dir_;
  std::unique_ptr<CacheDirectory> disk_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<const std::vector<char>>> memory_;
  bool warnedDir_ = false;
};

} // namespace kiln::rt

#endif
