//===- Cache.cpp - kiln cache: statistics, limits, clearing ---------------===//
//
// `kiln cache` with ccache's options: -s statistics, -z zero them, -C clear,
// -c clean up (evict down to the limit), -M set the limit, -p settings and
// their sources. Several may be given at once; they run in the order
// -z, -C, -M, -c, -p, -s. With none, -s. The subcommands (list, show, ...)
// are commands of their own, named "cache list" and so on.
//
//===----------------------------------------------------------------------===//
#include "CacheCli.h"
#include "Commands.h"

#include "CacheFiles.h"
#include "IR/ClipText.h"
#include "IR/Diagnostics.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <ctime>
#include <sys/stat.h>

namespace kiln::cli {

const OptionSpec kFormatOption = {"--format", "FORMAT",
                                  "text (the default) or json, for scripts"};

llvm::Expected<bool> wantsJson(const ParsedArgs &args) {
  std::string f = args.get("--format", "text");
  if (f != "text" && f != "json")
    return usageError("--format must be text or json, not '{}'", f);
  return f == "json";
}

void printJson(const nlohmann::json &j) { llvm::outs() << j.dump(2) << "\n"; }

std::string formatTime(int64_t unixSeconds) {
  if (unixSeconds <= 0)
    return "never";
  time_t t = static_cast<time_t>(unixSeconds);
  struct tm tm;
  char buf[32];
  if (!::localtime_r(&t, &tm) ||
      std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm) == 0)
    return std::to_string(unixSeconds);
  return buf;
}

std::string formatMs(double ms) {
  return ms < 1000 ? fmt::format("{:.0f} ms", ms)
                   : fmt::format("{:.1f} s", ms / 1000);
}

llvm::Expected<CacheContext> openCache() {
  CacheContext ctx;
  ctx.settings = rt::resolveCacheSettings();
  for (const std::string &p : ctx.settings.problems)
    llvm::errs() << "warning: kernel cache setting: " << clipLongWords(p)
                 << "\n";
  const std::string &dir = ctx.settings.directory;
  if (dir.empty())
    return userError("there is no kernel cache directory: $HOME is not set; "
                     "name one with KILN_CACHE_DIR");
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode))
      return userError("the kernel cache directory {} is not a directory; "
                       "name another with KILN_CACHE_DIR",
                       dir);
    if (std::string why = rt::unsafeDirectoryReason(dir); !why.empty())
      return userError("{}", rt::unsafeDirectoryMessage(dir, why));
    ctx.exists = true;
  }
  ctx.dir = std::make_unique<rt::CacheDirectory>(dir);
  return ctx;
}

namespace {

nlohmann::json reportJson(const rt::CleanupReport &r) {
  nlohmann::json j = {{"removedEntries", r.removedEntries},
                      {"removedBytes", r.removedBytes},
                      {"removedLeftovers", r.removedStray},
                      {"entries", r.entries},
                      {"bytes", r.bytes}};
  if (r.failedEntries)
    j["failedEntries"] = r.failedEntries, j["failure"] = r.failure;
  return j;
}

/// An error on stderr for the entries that `kiln cache OPTION` (-C, -c or
/// -M) was to remove and could not: how many, the first and why, and what
/// to do. True if there were any; the command then prints no summary.
bool reportFailedRemovals(const rt::CleanupReport &r, const std::string &dir,
                          const char *option) {
  if (!r.failedEntries)
    return false;
  llvm::errs() << clipLongWords(fmt::format(
      "error: {} entr{} of the kernel cache could not be removed{} (the "
      "first: {}); make the cache directory and its subdirectories writable "
      "('chmod -R u+w {}') and run 'kiln cache {}' again\n",
      r.failedEntries, r.failedEntries == 1 ? "y" : "ies",
      r.removedEntries ? fmt::format(", {} were", r.removedEntries) : "",
      r.failure, dir, option));
  return true;
}

std::string limitText(uint64_t maxBytes) {
  return maxBytes ? rt::formatSize(maxBytes) : "no limit";
}

void printCleanup(const rt::CleanupReport &r, uint64_t maxBytes) {
  llvm::outs() << fmt::format(
      "cleanup: removed {} least recently used entr{} ({}){}; {} entr{}, {} "
      "({}) now\n",
      r.removedEntries, r.removedEntries == 1 ? "y" : "ies",
      rt::formatSize(r.removedBytes),
      r.removedStray ? fmt::format(" and {} leftover file(s) of interrupted "
                                   "writes",
                                   r.removedStray)
                     : "",
      r.entries, r.entries == 1 ? "y" : "ies", rt::formatSize(r.bytes),
      maxBytes ? "limit " + rt::formatSize(maxBytes) : "no limit");
}

nlohmann::json configJson(const rt::CacheSettings &s) {
  nlohmann::json j = nlohmann::json::object();
  for (const rt::CacheSetting &c : s.settings) {
    nlohmann::json v = {{"value", c.value},
                        {"source", rt::sourceName(c.source)},
                        {"where", c.where}};
    if (c.name == "max_size")
      v["bytes"] = s.maxBytes;
    j[c.name] = v;
  }
  j["configFile"] = s.configPath;
  j["configFileExists"] = s.configExists;
  j["problems"] = s.problems;
  return j;
}

void printConfig(const rt::CacheSettings &s) {
  for (const rt::CacheSetting &c : s.settings) {
    std::string from = rt::sourceName(c.source).str();
    if (!c.where.empty())
      from += " (" + c.where + ")";
    llvm::outs() << fmt::format("{:<11} {:<32} {}\n", c.name, c.value, from);
  }
  llvm::outs() << fmt::format("{:<11} {}{}\n", "config file", s.configPath,
                              s.configExists ? "" : " (not present)");
}

nlohmann::json statsJson(const CacheContext &ctx) {
  const rt::CacheSettings &s = ctx.settings;
  uint64_t bytes = 0;
  std::vector<rt::EntryFile> entries = ctx.dir->scan();
  for (const rt::EntryFile &e : entries)
    bytes += e.bytes;
  rt::CacheStats st = ctx.dir->stats();
  int64_t lookups = st.hits + st.misses;
  return {{"directory", s.directory},
          {"diskCacheEnabled", !s.disable},
          {"entries", entries.size()},
          {"bytes", bytes},
          {"maxBytes", s.maxBytes},
          {"hits", st.hits},
          {"misses", st.misses},
          {"hitRate", lookups ? double(st.hits) / double(lookups) : 0.0},
          {"compileMsSaved", st.savedMs},
          {"zeroedAt", st.zeroedAt}};
}

void printStats(const nlohmann::json &j, const rt::CacheSettings &s) {
  auto row = [](const char *name, const std::string &value) {
    llvm::outs() << fmt::format("{:<20} {}\n", name, value);
  };
  row("cache directory", s.directory);
  for (const rt::CacheSetting &c : s.settings)
    if (c.name == "disable" && s.disable)
      row("disk cache", fmt::format("off (disable = true, from the {}): "
                                    "kernels are compiled in memory only",
                                    rt::sourceName(c.source).str()));
  uint64_t bytes = j["bytes"], max = j["maxBytes"];
  int64_t hits = j["hits"], misses = j["misses"], zeroed = j["zeroedAt"];
  row("entries", std::to_string(j["entries"].get<size_t>()));
  row("size", max ? fmt::format("{} of {} ({:.1f}%)", rt::formatSize(bytes),
                                rt::formatSize(max), 100.0 * bytes / max)
                  : rt::formatSize(bytes) + " (no limit)");
  row("hits", std::to_string(hits));
  row("misses", std::to_string(misses));
  row("hit rate", hits + misses
                      ? fmt::format("{:.1f}%", 100.0 * hits / (hits + misses))
                      : "-");
  row("compile time saved", formatMs(j["compileMsSaved"].get<double>()));
  row("stats since",
      zeroed ? formatTime(zeroed) + " (zeroed)" : "the cache was created");
}

const char *const kSubcommands[] = {"list",   "show",   "verify",
                                    "export", "import", "why"};

int runCache(const ParsedArgs &args) {
  llvm::Expected<bool> json = wantsJson(args);
  if (!json)
    return reportError(json.takeError());
  if (!args.positional.empty()) {
    llvm::StringRef given = args.positional[0];
    std::string hint;
    for (const char *s : kSubcommands)
      if (given.edit_distance(s) <= 2)
        hint = fmt::format("; did you mean '{}'?", s);
    return reportError(usageError(
        "kiln cache: unknown subcommand '{}'{} The subcommands are list, "
        "show, verify, export, import and why (see 'kiln cache --help')",
        given.str(), hint.empty() ? "." : hint));
  }
  llvm::Expected<CacheContext> ctx = openCache();
  if (!ctx)
    return reportError(ctx.takeError());
  rt::CacheSettings &s = ctx->settings;
  const rt::CacheDirectory &dir = *ctx->dir;
  bool any = false, failed = false;
  nlohmann::json out = nlohmann::json::object();
  if (args.has("--zero-stats")) {
    any = true;
    const bool zeroed = !ctx->exists || dir.zeroStats();
    out["zeroed"] = zeroed;
    if (!zeroed) {
      llvm::errs() << fmt::format("error: cannot write the statistics in {}: "
                                  "they were not zeroed; make it writable "
                                  "('chmod u+w {}') and run 'kiln cache -z' "
                                  "again\n",
                                  s.directory, s.directory);
      failed = true;
    } else if (!*json) {
      llvm::outs() << "statistics zeroed\n";
    }
  }
  if (args.has("--clear")) {
    any = true;
    rt::CleanupReport r = dir.clear();
    bool clearFailed = reportFailedRemovals(r, s.directory, "-C");
    failed |= clearFailed;
    out["cleared"] = reportJson(r);
    if (!*json && !clearFailed)
      llvm::outs() << fmt::format(
          "cleared {}: removed {} entr{} ({})\n", s.directory, r.removedEntries,
          r.removedEntries == 1 ? "y" : "ies", rt::formatSize(r.removedBytes));
  }
  if (args.has("--max-size")) {
    any = true;
    std::string text = llvm::StringRef(args.get("--max-size")).trim().str();
    llvm::Expected<uint64_t> bytes = rt::parseSize(text);
    if (!bytes)
      return reportError(
          usageError("-M/--max-size: {}", llvm::toString(bytes.takeError())));
    if (llvm::Error e = rt::setCacheConfigValue(s.directory, "max_size", text))
      return reportError(std::move(e));
    ctx->exists = true;
    if (const char *env = std::getenv("KILN_CACHE_MAX_SIZE"); env && *env)
      llvm::errs() << fmt::format("note: KILN_CACHE_MAX_SIZE={} is set, and "
                                  "the environment overrides {}\n",
                                  env, s.configPath);
    else
      s = rt::resolveCacheSettings();
    out["maxSize"] = {{"bytes", *bytes}, {"configFile", s.configPath}};
    if (!*json)
      llvm::outs() << fmt::format("max_size = {} ({}) in {}\n", text,
                                  limitText(*bytes), s.configPath);
  }
  if (args.has("--cleanup") || args.has("--max-size")) {
    any = true;
    rt::CleanupReport r = dir.cleanup(s.maxBytes);
    bool cleanupFailed = reportFailedRemovals(
        r, s.directory, args.has("--cleanup") ? "-c" : "-M");
    failed |= cleanupFailed;
    out["cleanup"] = reportJson(r);
    if (!*json && !cleanupFailed && (args.has("--cleanup") || r.removedEntries))
      printCleanup(r, s.maxBytes);
  }
  if (args.has("--show-config")) {
    out["config"] = configJson(s);
    if (!*json)
      printConfig(s);
  }
  if (args.has("--show-stats") || (!any && !args.has("--show-config"))) {
    out["stats"] = statsJson(*ctx);
    if (!*json)
      printStats(out["stats"], s);
  }
  if (*json)
    printJson(out);
  return failed ? ExitUserError : ExitOk;
}

} // namespace

const CommandSpec &cacheCommand() {
  static const CommandSpec spec = {
      "cache",
      "inspect and manage the kernel cache (see 'kiln cache --help')",
      "kiln cache [-s] [-z] [-C] [-c] [-M SIZE] [-p] [--format json]\n"
      "       kiln cache list|show|verify|export|import|why ...",
      "Compiled kernels are kept in the kernel cache directory "
      "($KILN_CACHE_DIR, else\n$XDG_CACHE_HOME/kiln, else ~/.cache/kiln), "
      "one entry per kernel, up to a size\nlimit (1 GiB unless set). With "
      "no option, shows the statistics (-s). Options\nmay be combined; they "
      "run in the order -z, -C, -M, -c, -p, -s.\n\n"
      "subcommands ('kiln cache SUBCOMMAND --help' for each):\n"
      "  list          a table of the entries; sorting and filters\n"
      "  show KEY      one entry: metadata, source, PTX, SASS\n"
      "  verify        check every entry (exit 1 if any is bad); --fix "
      "removes them\n"
      "  export FILE   write entries into one archive\n"
      "  import FILE   add the entries of an archive (same arch)\n"
      "  why FILE      for a graph: which kernels would hit, and for a miss "
      "what\n                differs\n\n"
      "Environment: KILN_CACHE_DIR, KILN_CACHE_MAX_SIZE, KILN_CACHE_DISABLE,\n"
      "KILN_RECOMPILE; the same settings (but the directory) may be set in\n"
      "<dir>/kiln.conf. See docs/cache.md.",
      {{"--show-stats", nullptr,
        "entries, size, hits and misses since the last zeroing, compile "
        "time saved",
        false, "-s"},
       {"--zero-stats", nullptr, "zero the hit and miss counters", false, "-z"},
       {"--clear", nullptr, "remove every entry", false, "-C"},
       {"--cleanup", nullptr,
        "evict least recently used entries down to the limit; remove "
        "leftovers of interrupted writes",
        false, "-c"},
       {"--max-size", "SIZE",
        "set the limit in kiln.conf: 2GiB, 500MB, ... (0: no limit); "
        "evicts if over it",
        false, "-M"},
       {"--show-config", nullptr, "each setting and where it came from", false,
        "-p"},
       kFormatOption},
      0,
      1,
      runCache};
  return spec;
}

} // namespace kiln::cli
