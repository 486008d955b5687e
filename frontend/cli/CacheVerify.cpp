//===- CacheVerify.cpp - kiln cache verify, export and import -------------===//
#include "CacheCli.h"
#include "Commands.h"

#include "CacheArchive.h"
#include "CacheFiles.h"
#include "FileUtil.h"
#include "IR/ClipText.h"
#include "IR/Diagnostics.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln::cli {

namespace {

/// What is wrong with the entry file `f`, or "".
std::string problemWith(const rt::EntryFile &f) {
  struct stat st;
  if (::stat(f.path.c_str(), &st) == 0 && st.st_uid != ::geteuid())
    return fmt::format("it belongs to another user (uid {})", st.st_uid);
  llvm::Expected<rt::CacheEntry> e = rt::readCacheEntry(f.path);
  if (!e) {
    // The error names the file; the report names it already.
    std::string why = llvm::toString(e.takeError());
    return why.rfind(f.path + ": ", 0) == 0 ? why.substr(f.path.size() + 2)
                                            : why;
  }
  if (llvm::Error err = rt::checkCacheEntry(*e, f.key))
    return llvm::toString(std::move(err));
  return "";
}

int runVerify(const ParsedArgs &args) {
  llvm::Expected<bool> json = wantsJson(args);
  if (!json)
    return reportError(json.takeError());
  llvm::Expected<CacheContext> ctx = openCache();
  if (!ctx)
    return reportError(ctx.takeError());
  bool fix = args.has("--fix");
  std::vector<rt::StrayFile> stray;
  std::vector<rt::EntryFile> entries = ctx->dir->scan(&stray);
  nlohmann::json bad = nlohmann::json::array();
  std::vector<std::string> leftovers;
  size_t removed = 0;
  for (const rt::EntryFile &f : entries) {
    std::string why = problemWith(f);
    if (why.empty())
      continue;
    bad.push_back({{"key", f.key}, {"path", f.path}, {"problem", why}});
    if (fix && ctx->dir->removeEntry(f.key))
      ++removed;
    if (!*json)
      llvm::outs() << fmt::format("{}  {}  {}: {}\n", fix ? "REMOVED" : "BAD",
                                  shortKey(f.key), f.path, why);
  }
  for (const rt::StrayFile &s : stray) {
    if (s.kind != rt::StrayFile::Kind::StaleTemp &&
        s.kind != rt::StrayFile::Kind::OrphanHits)
      continue;
    leftovers.push_back(s.path);
    if (fix)
      ::unlink(s.path.c_str());
  }
  size_t good = entries.size() - bad.size();
  if (*json) {
    printJson({{"directory", ctx->settings.directory},
               {"checked", entries.size()},
               {"good", good},
               {"bad", bad},
               {"leftovers", leftovers},
               {"fixed", fix},
               {"removed", removed}});
  } else {
    llvm::outs() << fmt::format("checked {} entr{} in {}: {} good, {} bad\n",
                                entries.size(),
                                entries.size() == 1 ? "y" : "ies",
                                ctx->settings.directory, good, bad.size());
    if (!leftovers.empty())
      llvm::outs() << fmt::format(
          "{} leftover file(s) of interrupted writes or evicted entries{}\n",
          leftovers.size(),
          fix ? ", removed"
              : " (--fix or 'kiln cache -c' "
                "removes them)");
    if (fix && !bad.empty())
      llvm::outs() << fmt::format("removed {} bad entr{}: they will be "
                                  "compiled again when next used\n",
                                  removed, removed == 1 ? "y" : "ies");
    else if (!bad.empty())
      llvm::outs() << "run 'kiln cache verify --fix' to remove the bad "
                      "entries\n";
  }
  return bad.empty() || (fix && removed == bad.size()) ? ExitOk : ExitUserError;
}

int runExport(const ParsedArgs &args) {
  llvm::Expected<CacheContext> ctx = openCache();
  if (!ctx)
    return reportError(ctx.takeError());
  std::vector<std::string> keys;
  for (const rt::EntryFile &f : ctx->dir->scan()) {
    if (args.has("--graph") || args.has("--arch")) {
      llvm::Expected<rt::CacheEntry> e = rt::readCacheEntryMetadata(f.path);
      if (!e) {
        llvm::consumeError(e.takeError());
        continue;
      }
      if ((args.has("--graph") && e->meta.graph != args.get("--graph")) ||
          (args.has("--arch") && e->meta.arch != args.get("--arch")))
        continue;
    }
    keys.push_back(f.key);
  }
  std::string path = args.positional[0];
  bool toStdout = path == "-";
  std::string tmp = toStdout ? "" : rt::tempFileFor(path);
  std::error_code ec;
  llvm::raw_fd_ostream file(toStdout ? "-" : tmp, ec);
  if (ec)
    return reportError(userError("cannot write {}: {}", path, ec.message()));
  rt::ExportReport r = exportCacheArchive(*ctx->dir, keys, file);
  file.close();
  if (file.has_error() ||
      (!toStdout && std::rename(tmp.c_str(), path.c_str()) != 0)) {
    file.clear_error();
    llvm::sys::fs::remove(tmp);
    return reportError(userError("cannot write {}: {}", path, rt::errnoText()));
  }
  for (const std::string &s : r.skipped)
    llvm::errs() << "warning: not exported, damaged: " << clipLongWords(s)
                 << "\n";
  // With the archive on stdout, the report goes to stderr.
  llvm::raw_ostream &os = toStdout ? llvm::errs() : llvm::outs();
  os << fmt::format("exported {} entr{} ({}) to {}\n", r.entries,
                    r.entries == 1 ? "y" : "ies", rt::formatSize(r.bytes),
                    toStdout ? "standard output" : path);
  return ExitOk;
}

int runImport(const ParsedArgs &args) {
  llvm::Expected<CacheContext> ctx = openCache();
  if (!ctx)
    return reportError(ctx.takeError());
  const std::string &dir = ctx->settings.directory;
  if (std::string why = rt::makePrivateDirectories(dir); !why.empty())
    return reportError(userError("cannot use {}: {}", dir, why));
  if (std::string why = rt::unsafeDirectoryReason(dir); !why.empty())
    return reportError(userError("{}", rt::unsafeDirectoryMessage(dir, why)));
  std::string path = args.positional[0];
  // A pipe is read as far as its lines announce, and refused at the first
  // one that is not an archive's.
  rt::ArchiveScanner scanner;
  auto buf = readWholeFile(
      path == "-" ? "/dev/stdin" : path,
      [&](llvm::StringRef prefix) -> llvm::Expected<StreamExtent> {
        llvm::Expected<rt::ArchiveScanner::Extent> e = scanner.next(prefix);
        if (!e)
          return userError("{}: {}", path, llvm::toString(e.takeError()));
        return StreamExtent{e->bytes, e->whole};
      });
  if (!buf)
    return reportError(buf.takeError());
  llvm::Expected<rt::ImportReport> r =
      rt::importCacheArchive(*ctx->dir, (*buf)->getBuffer());
  if (!r)
    return reportError(
        userError("{}: {}", path, llvm::toString(r.takeError())));
  for (const std::string &s : r->refused)
    llvm::errs() << "error: refused " << clipLongWords(s) << "\n";
  llvm::outs() << fmt::format(
      "imported {} entr{} ({}) into {}; {} already present{}\n", r->imported,
      r->imported == 1 ? "y" : "ies", rt::formatSize(r->bytes), dir, r->present,
      r->refused.empty() ? "" : fmt::format(", {} refused", r->refused.size()));
  rt::CleanupReport c = ctx->dir->cleanup(ctx->settings.maxBytes);
  if (c.failedEntries)
    llvm::errs() << fmt::format("warning: the cache is over its limit, and {} "
                                "entr{} could not be evicted; the first: {}\n",
                                c.failedEntries,
                                c.failedEntries == 1 ? "y" : "ies", c.failure);
  if (c.removedEntries)
    llvm::outs() << fmt::format(
        "evicted {} least recently used entr{} ({}) "
        "to stay under the limit of {}\n",
        c.removedEntries, c.removedEntries == 1 ? "y" : "ies",
        rt::formatSize(c.removedBytes), rt::formatSize(ctx->settings.maxBytes));
  return r->refused.empty() ? ExitOk : ExitUserError;
}

} // namespace

const CommandSpec &cacheVerifyCommand() {
  static const CommandSpec spec = {
      "cache verify",
      "check every kernel cache entry",
      "kiln cache verify [--fix] [--format json]",
      "Reads every entry whole and checks its checksum, that it holds the "
      "key its\nname says, that its key is the hash of the key parts it "
      "records, that its\ncubin is an ELF file and that the entry is yours. "
      "Exits with 1 when any entry\nis bad. With --fix, removes the bad "
      "entries (they are compiled again when\nnext used) and the leftovers "
      "of interrupted writes, and exits with 0 once\nthey are gone.",
      {{"--fix", nullptr, "remove the bad entries and the leftovers"},
       kFormatOption},
      0,
      0,
      runVerify};
  return spec;
}

const CommandSpec &cacheExportCommand() {
  static const CommandSpec spec = {
      "cache export",
      "write kernel cache entries into one archive",
      "kiln cache export FILE [--graph NAME] [--arch SM]",
      "Writes the entries of the kernel cache (or those of one graph or "
      "arch) into\nthe archive FILE ('-' for standard output), for 'kiln "
      "cache import' on\nanother machine with the same GPU arch, Kiln and "
      "CUDA. Damaged entries are\nleft out, with a warning.",
      {{"--graph", "NAME", "only the entries of graph NAME"},
       {"--arch", "SM", "only the entries for arch SM"}},
      1,
      1,
      runExport};
  return spec;
}

const CommandSpec &cacheImportCommand() {
  static const CommandSpec spec = {
      "cache import",
      "add the entries of an archive to the kernel cache",
      "kiln cache import FILE",
      "Adds the entries of the archive FILE ('-' for standard input), made "
      "by 'kiln\ncache export', to the kernel cache. Every entry is checked "
      "as 'kiln cache\nverify' checks it; a bad one is refused (exit 1), one "
      "already present is\nskipped. Import only archives you trust: their "
      "cubins run on your GPU.",
      {},
      1,
      1,
      runImport};
  return spec;
}

} // namespace kiln::cli
