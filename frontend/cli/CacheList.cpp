//===- CacheList.cpp - kiln cache list ------------------------------------===//
//
// One row per entry, from its metadata record alone: fast, since checking
// checksums is verify's job.
//
//===----------------------------------------------------------------------===//
#include "CacheCli.h"
#include "Commands.h"

#include "IR/ClipText.h"
#include "IR/Diagnostics.h"
#include "KernelCache.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <functional>

namespace kiln::cli {

nlohmann::json entryMetadataJson(const rt::CacheEntry &e,
                                 const rt::EntryFile &f) {
  const rt::KernelMetadata &m = e.meta;
  return {{"key", e.key},
          {"path", f.path},
          {"kernel", m.kernelName},
          {"graph", m.graph},
          {"group", m.group},
          {"arch", m.arch},
          {"shapes", m.shapes},
          {"launch", m.launch},
          {"options", m.options},
          {"nvrtcVersion", m.nvrtcVersion},
          {"kilnVersion", m.kilnVersion},
          {"sourceHash", m.sourceHash},
          {"headersHash", m.headersHash},
          {"bytes", f.bytes},
          {"compileMs", m.compileMs},
          {"hits", f.hits},
          {"created", e.created},
          {"lastUsed", f.lastUsedNs / 1000000000}};
}

namespace {

struct Row {
  rt::EntryFile file;
  rt::CacheEntry entry;
};

/// Orders rows for --sort; the default, "used", puts the latest first.
llvm::Error sortRows(std::vector<Row> &rows, const std::string &by,
                     bool reverse) {
  using Less = std::function<bool(const Row &, const Row &)>;
  auto meta = [](const Row &r) -> const rt::KernelMetadata & {
    return r.entry.meta;
  };
  static const char *const names[] = {"used", "key",  "kernel",  "graph",
                                      "arch", "size", "compile", "hits"};
  Less less;
  if (by == "used")
    less = [](const Row &a, const Row &b) {
      return a.file.lastUsedNs > b.file.lastUsedNs;
    };
  else if (by == "key")
    less = [](const Row &a, const Row &b) { return a.file.key < b.file.key; };
  else if (by == "kernel")
    less = [&](const Row &a, const Row &b) {
      return meta(a).kernelName < meta(b).kernelName;
    };
  else if (by == "graph")
    less = [&](const Row &a, const Row &b) {
      return meta(a).graph < meta(b).graph;
    };
  else if (by == "arch")
    less = [&](const Row &a, const Row &b) {
      return meta(a).arch < meta(b).arch;
    };
  else if (by == "size")
    less = [](const Row &a, const Row &b) {
      return a.file.bytes > b.file.bytes;
    };
  else if (by == "compile")
    less = [&](const Row &a, const Row &b) {
      return meta(a).compileMs > meta(b).compileMs;
    };
  else if (by == "hits")
    less = [](const Row &a, const Row &b) { return a.file.hits > b.file.hits; };
  if (!less) {
    std::string all;
    for (const char *n : names)
      all += std::string(all.empty() ? "" : ", ") + n;
    return usageError("--sort: unknown field '{}' (the fields are {})", by,
                      all);
  }
  // Ties keep key order, so the output is the same run to run.
  std::stable_sort(rows.begin(), rows.end(), less);
  if (reverse)
    std::reverse(rows.begin(), rows.end());
  return llvm::Error::success();
}

void printTable(const std::vector<Row> &rows) {
  std::vector<std::vector<std::string>> cells = {
      {"KEY", "KERNEL", "GRAPH", "ARCH", "SHAPES", "SIZE", "COMPILE", "HITS",
       "LAST USED"}};
  for (const Row &r : rows) {
    const rt::KernelMetadata &m = r.entry.meta;
    cells.push_back({shortKey(r.file.key), clipText(m.kernelName, 48),
                     clipText(m.graph, 40), clipText(m.arch, 20),
                     clipText(m.shapes, 40), rt::formatSize(r.file.bytes),
                     formatMs(m.compileMs), std::to_string(r.file.hits),
                     formatTime(r.file.lastUsedNs / 1000000000)});
  }
  std::vector<size_t> width(cells[0].size(), 0);
  for (const auto &row : cells)
    for (size_t c = 0; c < row.size(); ++c)
      width[c] = std::max(width[c], row[c].size());
  for (const auto &row : cells) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      bool right = c >= 5 && c <= 7; // size, compile, hits
      line += c ? "  " : "";
      line += right                ? fmt::format("{:>{}}", row[c], width[c])
              : c + 1 < row.size() ? fmt::format("{:<{}}", row[c], width[c])
                                   : row[c];
    }
    llvm::outs() << line << "\n";
  }
}

int runList(const ParsedArgs &args) {
  llvm::Expected<bool> json = wantsJson(args);
  if (!json)
    return reportError(json.takeError());
  llvm::Expected<CacheContext> ctx = openCache();
  if (!ctx)
    return reportError(ctx.takeError());
  std::vector<Row> rows;
  size_t total = 0, damaged = 0;
  uint64_t bytes = 0;
  for (rt::EntryFile &f : ctx->dir->scan(nullptr, /*withHits=*/true)) {
    ++total;
    bytes += f.bytes;
    llvm::Expected<rt::CacheEntry> e = rt::readCacheEntryMetadata(f.path);
    if (!e) {
      llvm::consumeError(e.takeError());
      ++damaged;
      continue;
    }
    const rt::KernelMetadata &m = e->meta;
    if ((args.has("--graph") && m.graph != args.get("--graph")) ||
        (args.has("--arch") && m.arch != args.get("--arch")) ||
        (args.has("--kernel") &&
         m.kernelName.find(args.get("--kernel")) == std::string::npos))
      continue;
    rows.push_back({std::move(f), std::move(*e)});
  }
  if (llvm::Error e =
          sortRows(rows, args.get("--sort", "used"), args.has("--reverse")))
    return reportError(std::move(e));
  if (*json) {
    nlohmann::json list = nlohmann::json::array();
    for (const Row &r : rows)
      list.push_back(entryMetadataJson(r.entry, r.file));
    printJson({{"directory", ctx->settings.directory},
               {"entries", list},
               {"totalEntries", total},
               {"totalBytes", bytes},
               {"unreadable", damaged}});
    return ExitOk;
  }
  if (total == 0) {
    llvm::outs() << "the kernel cache in " << ctx->settings.directory
                 << " is empty\n";
    return ExitOk;
  }
  if (!rows.empty())
    printTable(rows);
  llvm::outs() << fmt::format(
      "{}{} entr{}, {} (limit {})\n",
      rows.size() + damaged == total ? ""
                                     : fmt::format("{} shown of ", rows.size()),
      total, total == 1 ? "y" : "ies", rt::formatSize(bytes),
      ctx->settings.maxBytes ? rt::formatSize(ctx->settings.maxBytes) : "none");
  if (damaged)
    llvm::outs() << fmt::format("{} entr{} could not be read: run 'kiln "
                                "cache verify'\n",
                                damaged, damaged == 1 ? "y" : "ies");
  return ExitOk;
}

} // namespace

const CommandSpec &cacheListCommand() {
  static const CommandSpec spec = {
      "cache list",
      "a table of the kernel cache's entries",
      "kiln cache list [--sort FIELD] [--reverse] [--graph NAME] "
      "[--kernel TEXT] [--arch SM] [--format json]",
      "Lists the entries of the kernel cache: short key, kernel name, graph, "
      "arch,\nshapes, size, compile time, hits and last use. The key "
      "(a prefix is enough)\nis what 'kiln cache show' takes. Sort fields: "
      "used (latest first, the\ndefault), key, kernel, graph, arch, size "
      "(largest first), compile (slowest\nfirst), hits (most first).",
      {{"--sort", "FIELD", "order the rows by FIELD (default: used)"},
       {"--reverse", nullptr, "reverse the order"},
       {"--graph", "NAME", "only the entries of graph NAME"},
       {"--kernel", "TEXT", "only kernels whose name contains TEXT"},
       {"--arch", "SM", "only entries for arch SM, e.g. sm_90"},
       kFormatOption},
      0,
      0,
      runList};
  return spec;
}

} // namespace kiln::cli
