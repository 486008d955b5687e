//===- CacheCli.h - Shared pieces of the kiln cache commands ---*- C++ -*-===//
//
// `kiln cache` (Cache.cpp: -s -z -C -c -M -p), `list` (CacheList.cpp), `show`
// (CacheShow.cpp), `verify`, `export` and `import` (CacheVerify.cpp) and
// `why` (CacheWhy.cpp) all start from openCache: the settings, resolved as
// the compiler resolves them, and the directory, refused when unsafe.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CLI_CACHECLI_H
#define KILN_CLI_CACHECLI_H

#include "Args.h"

#include "CacheConfig.h"
#include "CacheDirectory.h"
#include "KernelCache.h"

#include <nlohmann/json.hpp>

#include <memory>

namespace kiln::cli {

struct CacheContext {
  rt::CacheSettings settings;
  /// The directory; it may not exist yet (an empty cache).
  std::unique_ptr<rt::CacheDirectory> dir;
  bool exists = false;
};

/// Resolves the settings (warning about bad ones on stderr) and checks the
/// directory: an error when there is none or it is not safe to use.
llvm::Expected<CacheContext> openCache();

/// `--format text|json`, shared by the commands that print results.
extern const OptionSpec kFormatOption;
/// Whether --format asks for JSON; an error for a format other than the two.
llvm::Expected<bool> wantsJson(const ParsedArgs &args);
/// Prints `j` to stdout, indented, with a final newline.
void printJson(const nlohmann::json &j);

/// An entry's metadata as `list` and `show` print it in JSON.
nlohmann::json entryMetadataJson(const rt::CacheEntry &e,
                                 const rt::EntryFile &f);

/// "2025-01-02 10:11:12" in local time; "never" for 0.
std::string formatTime(int64_t unixSeconds);
/// "850 ms", "12.3 s".
std::string formatMs(double ms);
/// The first 12 digits of a key, as `kiln compile` and `list` show it.
inline std::string shortKey(const std::string &key) {
  return key.substr(0, 12);
}

} // namespace kiln::cli

#endif
