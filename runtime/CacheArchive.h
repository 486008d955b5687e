//===- CacheArchive.h - Kernel cache entries in one file -------*- C++ -*-===//
//
// `kiln cache export` writes entries into one archive that `kiln cache
// import` puts into another cache directory, to warm a machine of the same
// arch. The archive is the entry files, byte for byte, each after a line
// that names it:
//
//   KILNARCHIVE 1\n
//   entry <key> <N>\n <N bytes: the .kentry file>      once per entry
//   end <count>\n
//
// Each entry carries its own checksum; import checks it, and everything
// checkCacheEntry checks, and refuses an entry that fails. A missing "end"
// line means the archive was cut short; nothing may follow it. Import only an
// archive you trust: the cubins in it will run on your GPU.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_CACHEARCHIVE_H
#define KILN_RUNTIME_CACHEARCHIVE_H

#include "CacheDirectory.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace kiln::rt {

struct ExportReport {
  size_t entries = 0;
  uint64_t bytes = 0;
  std::vector<std::string> skipped; // "<path>: <why>", damaged entries
};

/// Writes the entries of `dir` whose keys are `keys` to `out`.
ExportReport exportCacheArchive(const CacheDirectory &dir,
                                const std::vector<std::string> &keys,
                                llvm::raw_ostream &out);

struct ImportReport {
  size_t imported = 0;              // written into the directory
  size_t present = 0;               // already there, whole: left alone
  std::vector<std::string> refused; // "<key>: <why>"
  uint64_t bytes = 0;               // of the imported entries
};

/// Puts the entries of `archive` into `dir`. An error when `archive` is not
/// an archive, is cut short or damaged (entries before the damage are
/// imported) or goes on after its "end" line (all its entries are).
llvm::Expected<ImportReport> importCacheArchive(const CacheDirectory &dir,
                                                llvm::StringRef archive);

/// Finds where an archive read from a pipe ends, from its first bytes, so
/// that a stream which is not an archive is refused after a few of them.
/// Call `next` with the bytes read so far, each time more of them.
class ArchiveScanner {
public:
  struct Extent {
    uint64_t bytes; // read on until the stream holds this many bytes
    bool whole;     // and the archive ends there
  };
  /// An error when the bytes are not an archive or are damaged (the same
  /// as importCacheArchive's, for an archive of which nothing is imported).
  /// An archive cut short is not an error here: ask for the bytes it lacks
  /// and give what came to importCacheArchive, which says what is missing.
  llvm::Expected<Extent> next(llvm::StringRef prefix);

private:
  uint64_t pos_ = 0; // the start of the next line not yet read, past the magic
  size_t seen_ = 0;  // entries before pos_
};

} // namespace kiln::rt

#endif
