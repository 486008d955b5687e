//===- CacheConfig.h - Where the kernel cache is and how big ---*- C++ -*-===//
//
// The kernel cache's settings, each from the first of: the environment, the
// config file <cache dir>/kiln.conf, the default.
//
//   setting    environment          kiln.conf           default
//   directory  KILN_CACHE_DIR       (cannot: the file   $XDG_CACHE_HOME/kiln,
//                                    lives in it)       else ~/.cache/kiln
//   max_size   KILN_CACHE_MAX_SIZE  max_size = 2GiB     1 GiB (0: no limit)
//   disable    KILN_CACHE_DISABLE   disable = true      false
//   recompile  KILN_RECOMPILE       recompile = true    false
//
// kiln.conf holds "name = value" lines; '#' starts a comment. A value that
// does not parse is reported (in `problems`) and the next source is used.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_CACHECONFIG_H
#define KILN_RUNTIME_CACHECONFIG_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::rt {

inline constexpr uint64_t DefaultCacheMaxBytes = uint64_t(1) << 30;
inline constexpr llvm::StringLiteral CacheConfigName = "kiln.conf";

/// "512MB", "2 GiB", "1.5GB", "0" (no limit). Units: B, kB/MB/GB/TB
/// (powers of 1000), KiB/MiB/GiB/TiB (powers of 1024); K/M/G/T alone mean
/// the decimal ones. A number other than 0 needs a unit.
llvm::Expected<uint64_t> parseSize(llvm::StringRef text);
/// "734 B", "48.2 KiB", "1.0 GiB".
std::string formatSize(uint64_t bytes);

/// One setting and where its value came from.
struct CacheSetting {
  std::string name;  // "max_size"
  std::string value; // as shown: "1.0 GiB", "true"
  enum class Source {
    Default,
    Environment,
    ConfigFile
  } source = Source::Default;
  /// "KILN_CACHE_MAX_SIZE", "/home/me/.cache/kiln/kiln.conf:2", or how the
  /// default was found ("$XDG_CACHE_HOME/kiln").
  std::string where;
};
llvm::StringRef sourceName(CacheSetting::Source s);

struct CacheSettings {
  std::string directory; // "" when there is no $HOME to put it under
  uint64_t maxBytes = DefaultCacheMaxBytes; // 0: no limit
  bool disable = false;
  bool recompile = false;
  /// directory, max_size, disable, recompile, in that order.
  std::vector<CacheSetting> settings;
  std::string configPath; // <directory>/kiln.conf
  bool configExists = false;
  /// One line each: a bad value in the environment or the file, an unknown
  /// name in the file.
  std::vector<std::string> problems;
};

/// Resolves every setting from the environment and the config file.
CacheSettings resolveCacheSettings();

/// Sets `name = value` in <dir>/kiln.conf (created if need be), keeping its
/// other lines; written atomically.
llvm::Error setCacheConfigValue(const std::string &dir, llvm::StringRef name,
                                llvm::StringRef value);

} // namespace kiln::rt

#endif
