#include "CacheConfig.h"
#include "CacheFiles.h"

#include "llvm/ADT/StringExtras.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <map>

namespace kiln::rt {

namespace {

llvm::Error configError(const std::string &what) {
  return llvm::make_error<llvm::StringError>(what,
                                             llvm::inconvertibleErrorCode());
}

llvm::Expected<bool> parseBool(llvm::StringRef text) {
  std::string s = text.trim().lower();
  if (s == "1" || s == "true" || s == "yes" || s == "on")
    return true;
  if (s == "0" || s == "false" || s == "no" || s == "off" || s.empty())
    return false;
  return configError(fmt::format(
      "'{}' is not a yes/no value (use 1, true, yes or 0, false, no)",
      text.str()));
}

/// A config file's "name = value" lines: name -> (value, line number).
struct ConfigLine {
  std::string value;
  unsigned line;
};

std::map<std::string, ConfigLine>
parseConfigFile(const std::string &path, llvm::StringRef text,
                std::vector<std::string> &problems) {
  std::map<std::string, ConfigLine> out;
  llvm::SmallVector<llvm::StringRef, 16> lines;
  text.split(lines, '\n');
  for (unsigned i = 0; i < lines.size(); ++i) {
    llvm::StringRef line = lines[i].split('#').first.trim();
    if (line.empty())
      continue;
    auto [name, value] = line.split('=');
    name = name.trim();
    if (!line.contains('=') || name.empty()) {
      problems.push_back(fmt::format("{}:{}: expected 'name = value', got "
                                     "'{}'; ignored",
                                     path, i + 1, line.str()));
      continue;
    }
    if (name != "max_size" && name != "disable" && name != "recompile") {
      std::string hint =
          name == "directory" || name == "cache_dir"
              ? " (the directory is set with KILN_CACHE_DIR: the config "
                "file lives inside it)"
              : " (the settings are max_size, disable and recompile)";
      problems.push_back(fmt::format("{}:{}: unknown setting '{}'{}; ignored",
                                     path, i + 1, name.str(), hint));
      continue;
    }
    out[name.str()] = {value.trim().str(), i + 1};
  }
  return out;
}

} // namespace

llvm::Expected<uint64_t> parseSize(llvm::StringRef text) {
  llvm::StringRef s = text.trim();
  size_t numEnd = 0;
  while (numEnd < s.size() && (llvm::isDigit(s[numEnd]) || s[numEnd] == '.'))
    ++numEnd;
  llvm::StringRef number = s.take_front(numEnd);
  std::string unit = s.drop_front(numEnd).trim().lower();
  const char *examples = "e.g. 2GiB, 500MB or 0 for no limit";
  if (number.empty() || number.count('.') > 1)
    return configError(
        fmt::format("'{}' is not a size ({})", text.str(), examples));
  double value = std::strtod(number.str().c_str(), nullptr);
  static const std::map<std::string, double> units = {
      {"b", 1},        {"k", 1e3},     {"kb", 1e3},     {"m", 1e6},
      {"mb", 1e6},     {"g", 1e9},     {"gb", 1e9},     {"t", 1e12},
      {"tb", 1e12},    {"ki", 0x1p10}, {"kib", 0x1p10}, {"mi", 0x1p20},
      {"mib", 0x1p20}, {"gi", 0x1p30}, {"gib", 0x1p30}, {"ti", 0x1p40},
      {"tib", 0x1p40}};
  if (unit.empty()) {
    if (value == 0)
      return 0;
    return configError(
        fmt::format("'{}' has no unit ({})", text.str(), examples));
  }
  auto it = units.find(unit);
  if (it == units.end())
    return configError(fmt::format("'{}' has an unknown unit '{}' (the "
                                   "units are B, kB, MB, GB, TB, KiB, MiB, "
                                   "GiB, TiB)",
                                   text.str(), unit));
  double bytes = std::round(value * it->second);
  // 0 means no limit: a size that rounds to it is not that.
  if (bytes == 0 && value != 0)
    return configError(
        fmt::format("'{}' is less than a byte ({})", text.str(), examples));
  if (!(bytes < 0x1p62))
    return configError(fmt::format("'{}' is too large", text.str()));
  return static_cast<uint64_t>(bytes);
}

std::string formatSize(uint64_t bytes) {
  if (bytes < 1024)
    return fmt::format("{} B", bytes);
  const char *units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = double(bytes) / 1024;
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return fmt::format("{:.1f} {}", v, units[u]);
}

llvm::StringRef sourceName(CacheSetting::Source s) {
  switch (s) {
  case CacheSetting::Source::Default:
    return "default";
  case CacheSetting::Source::Environment:
    return "environment";
  case CacheSetting::Source::ConfigFile:
    return "config file";
  }
  llvm_unreachable("bad setting source");
}

CacheSettings resolveCacheSettings() {
  using Source = CacheSetting::Source;
  CacheSettings out;
  CacheSetting dir{"directory", "", Source::Default, ""};
  if (const char *d = std::getenv("KILN_CACHE_DIR"); d && *d) {
    dir = {"directory", d, Source::Environment, "KILN_CACHE_DIR"};
  } else if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x) {
    dir.value = std::string(x) + "/kiln";
    dir.where = "$XDG_CACHE_HOME/kiln";
  } else if (const char *h = std::getenv("HOME"); h && *h) {
    dir.value = std::string(h) + "/.cache/kiln";
    dir.where = "~/.cache/kiln";
  } else {
    dir.where = "no $HOME to put it under";
  }
  while (dir.value.size() > 1 && dir.value.back() == '/')
    dir.value.pop_back();
  out.directory = dir.value;
  out.settings.push_back(dir);

  std::map<std::string, ConfigLine> file;
  if (!out.directory.empty()) {
    out.configPath = out.directory + "/" + CacheConfigName.str();
    std::string text;
    out.configExists = readFile(out.configPath, text);
    if (out.configExists)
      file = parseConfigFile(out.configPath, text, out.problems);
  }

  // The first source with a value that parses wins.
  auto resolve = [&](const char *name, const char *env, auto parse, auto show,
                     auto &result, const std::string &defaultText) {
    CacheSetting s{name, defaultText, Source::Default, ""};
    bool done = false;
    if (const char *v = std::getenv(env); v && *v) {
      if (auto p = parse(v)) {
        result = *p;
        s = {name, show(*p), Source::Environment, env};
        done = true;
      } else {
        out.problems.push_back(fmt::format("{}={}: {}; ignored", env, v,
                                           llvm::toString(p.takeError())));
      }
    }
    if (auto it = file.find(name); !done && it != file.end()) {
      std::string where = fmt::format("{}:{}", out.configPath, it->second.line);
      if (auto p = parse(it->second.value)) {
        result = *p;
        s = {name, show(*p), Source::ConfigFile, where};
      } else {
        out.problems.push_back(fmt::format("{}: {}; ignored", where,
                                           llvm::toString(p.takeError())));
      }
    }
    out.settings.push_back(s);
  };
  auto showSize = [](uint64_t b) {
    return b == 0 ? std::string("0 (no limit)") : formatSize(b);
  };
  auto showBool = [](bool b) { return std::string(b ? "true" : "false"); };
  resolve("max_size", "KILN_CACHE_MAX_SIZE", parseSize, showSize, out.maxBytes,
          showSize(DefaultCacheMaxBytes));
  resolve("disable", "KILN_CACHE_DISABLE", parseBool, showBool, out.disable,
          "false");
  resolve("recompile", "KILN_RECOMPILE", parseBool, showBool, out.recompile,
          "false");
  return out;
}

llvm::Error setCacheConfigValue(const std::string &dir, llvm::StringRef name,
                                llvm::StringRef value) {
  if (std::string why = makePrivateDirectories(dir); !why.empty())
    return configError(fmt::format("cannot use {}: {}", dir, why));
  std::string path = dir + "/" + CacheConfigName.str();
  std::string text;
  if (!readFile(path, text))
    text = "# Settings of Kiln's kernel cache (see docs/cache.md). The "
           "environment\n# (KILN_CACHE_MAX_SIZE, ...) overrides them.\n";
  std::string line = fmt::format("{} = {}", name.str(), value.str());
  llvm::SmallVector<llvm::StringRef, 16> lines;
  llvm::StringRef(text).split(lines, '\n');
  std::string out;
  bool replaced = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    llvm::StringRef l = lines[i];
    if (i + 1 == lines.size() && l.empty())
      break;
    llvm::StringRef body = l.split('#').first;
    if (body.contains('=') && body.split('=').first.trim() == name) {
      if (!replaced)
        out += line + "\n";
      replaced = true;
      continue;
    }
    out += l.str() + "\n";
  }
  if (!replaced)
    out += line + "\n";
  if (std::string why = writeFileAtomically(path, out); !why.empty())
    return configError(why);
  return llvm::Error::success();
}

} // namespace kiln::rt
