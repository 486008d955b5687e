//===- CacheWhy.cpp - kiln cache why --------------------------------------===//
//
// For a graph at given shapes: generates its kernels (no compile), computes
// each kernel's key as the compiler would, and says whether the cache holds
// it. For a miss it finds the nearest entry -- the same kind of kernel
// (fusion group description), fewest differing key parts, then the same
// graph and group, then the latest used -- and says which key parts differ
// and, for the source, how (the shapes, or the first line that differs).
//
//===----------------------------------------------------------------------===//
#include "CacheCli.h"
#include "Commands.h"

#include "Engine.h"
#include "Execute.h"
#include "IR/ClipText.h"
#include "IR/Diagnostics.h"

#include "llvm/Support/raw_ostream.h"

#include <tuple>

#ifndef KILN_VERSION
#define KILN_VERSION "0.0.0"
#endif

namespace kiln::cli {

namespace {

/// "gn_swish_add" from the group "2:gn_swish_add".
llvm::StringRef groupKind(llvm::StringRef group) {
  return group.split(':').second;
}

std::vector<std::string> withoutArch(std::vector<std::string> options) {
  llvm::erase_if(options, [](const std::string &o) {
    return llvm::StringRef(o).startswith("--gpu-architecture=");
  });
  return options;
}

struct Difference {
  std::string part, here, entry, detail;
};

/// The key parts of `here` that differ from those of `m`; the source is
/// only compared by hash here (describeSource says how it differs).
std::vector<Difference> differences(const rt::CacheKeyParts &here,
                                    const rt::KernelMetadata &m) {
  std::vector<Difference> out;
  auto add = [&](const char *part, const std::string &a, const std::string &b,
                 const char *detail = "") {
    if (a != b)
      out.push_back({part, a, b, detail});
  };
  add("source", here.sourceHash, m.sourceHash);
  add("templates", here.headersHash, m.headersHash,
      "the CUDA templates (headers) differ: another build of Kiln");
  add("options", llvm::join(withoutArch(here.options), " "),
      llvm::join(withoutArch(m.options), " "));
  add("arch", here.arch, m.arch);
  add("nvrtc", here.nvrtcVersion, m.nvrtcVersion);
  add("kiln", here.kilnVersion, m.kilnVersion);
  return out;
}

/// How the source of `here` differs from the entry's: the shapes, else the
/// first line that differs.
std::string describeSource(const rt::KernelMetadata &here,
                           const std::string &source, const std::string &path) {
  llvm::Expected<rt::CacheEntry> e = rt::readCacheEntry(path);
  if (!e) {
    llvm::consumeError(e.takeError());
    return "the entry cannot be read to compare sources";
  }
  if (here.shapes != e->meta.shapes)
    return fmt::format("the shapes differ: here {}, entry {}", here.shapes,
                       e->meta.shapes);
  llvm::SmallVector<llvm::StringRef, 64> a, b;
  llvm::StringRef(source).split(a, '\n');
  llvm::StringRef(e->source).split(b, '\n');
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    llvm::StringRef x = i < a.size() ? a[i] : "(end of source)";
    llvm::StringRef y = i < b.size() ? b[i] : "(end of source)";
    if (x != y)
      return fmt::format("line {} differs: here '{}', entry '{}'", i + 1,
                         clipText(x.trim(), 100), clipText(y.trim(), 100));
  }
  return "the same text (the hashes differ)";
}

struct Candidate {
  rt::EntryFile file;
  rt::KernelMetadata meta;
};

int runWhy(const ParsedArgs &args) {
  llvm::Expected<bool> json = wantsJson(args);
  if (!json)
    return reportError(json.takeError());
  // The kernels `kiln run` would build on this machine's GPU; without one
  // (or on any other error, which the second try reports), those of `kiln
  // compile`.
  llvm::Expected<CompileOptions> options = compileOptions(args);
  if (!options)
    return reportError(options.takeError());
  CompileOptions opts = std::move(*options);
  opts.generateOnly = true;
  auto exe = compileFromArgs(args, opts);
  if (!exe) {
    llvm::consumeError(exe.takeError());
    opts.compileOnly = true;
    exe = compileFromArgs(args, opts);
  }
  if (!exe)
    return reportError(exe.takeError());
  llvm::Expected<CacheContext> ctx = openCache();
  if (!ctx)
    return reportError(ctx.takeError());

  std::vector<Candidate> all; // read on the first miss
  bool read = false;
  nlohmann::json kernels = nlohmann::json::array();
  size_t hits = 0;
  for (size_t i = 0; i < (*exe)->kernels().size(); ++i) {
    const EmittedKernel &k = (*exe)->kernels()[i];
    rt::KernelMetadata meta = (*exe)->cacheMetadata(i);
    rt::CacheKeyParts parts = rt::cacheKeyParts(
        compileRequest(k, (*exe)->target().arch, opts.nvrtcOptions),
        KILN_VERSION);
    std::string key = rt::cacheKey(parts);
    nlohmann::json row = {
        {"kernel", k.name}, {"group", meta.group}, {"key", key}};
    std::string path = ctx->dir->entryPath(key);
    llvm::Expected<rt::CacheEntry> have = rt::readCacheEntry(path);
    if (have && !rt::checkCacheEntry(*have, key)) {
      row["status"] = "hit";
      kernels.push_back(row);
      ++hits;
      continue;
    }
    if (!have)
      llvm::consumeError(have.takeError());
    row["status"] = "miss";
    if (!read) {
      read = true;
      for (rt::EntryFile &f : ctx->dir->scan()) {
        llvm::Expected<rt::CacheEntry> e = rt::readCacheEntryMetadata(f.path);
        if (!e)
          llvm::consumeError(e.takeError());
        else if (!e->meta.sourceHash.empty()) // Kiln 0.1.0's: no parts
          all.push_back({std::move(f), std::move(e->meta)});
      }
    }
    const Candidate *best = nullptr;
    std::tuple<size_t, bool, bool, int64_t> bestRank;
    for (const Candidate &c : all) {
      if (groupKind(c.meta.group) != groupKind(meta.group) || c.file.key == key)
        continue;
      auto rank = std::make_tuple(
          differences(parts, c.meta).size(), c.meta.graph != meta.graph,
          c.meta.group != meta.group, -c.file.lastUsedNs);
      if (!best || rank < bestRank) {
        best = &c;
        bestRank = rank;
      }
    }
    row["nearest"] = nullptr;
    row["differences"] = nlohmann::json::array();
    if (best) {
      row["nearest"] = {{"key", best->file.key},
                        {"kernel", best->meta.kernelName},
                        {"graph", best->meta.graph},
                        {"group", best->meta.group},
                        {"lastUsed", best->file.lastUsedNs / 1000000000}};
      for (Difference &d : differences(parts, best->meta)) {
        if (d.part == "source")
          d.detail = describeSource(meta, k.source, best->file.path);
        row["differences"].push_back({{"part", d.part},
                                      {"here", d.here},
                                      {"entry", d.entry},
                                      {"detail", d.detail}});
      }
    }
    kernels.push_back(row);
  }

  const std::string precision = precisionName(opts.matmulPrecision).str();
  const rt::CacheSettings &s = ctx->settings;
  std::string note = s.disable     ? "the disk cache is disabled: every "
                                     "kernel would be compiled"
                     : s.recompile ? "recompile is set: every kernel "
                                     "would be compiled anew"
                                   : "";
  if (*json) {
    printJson({{"graph", (*exe)->graph().name()},
               {"arch", (*exe)->target().arch},
               {"matmulPrecision", precision},
               {"directory", s.directory},
               {"hits", hits},
               {"misses", kernels.size() - hits},
               {"note", note},
               {"kernels", kernels}});
    return ExitOk;
  }
  // Names and details come from the graph and the entries' metadata: a
  // word of them longer than MaxEchoChars is cut.
  auto line = [](const std::string &text) {
    llvm::outs() << clipLongWords(text) << "\n";
  };
  line(fmt::format("{} for {}, matmul precision {}: {} kernel(s), {} would "
                   "hit, {} would miss (cache {})",
                   (*exe)->graph().name(), (*exe)->target().arch, precision,
                   kernels.size(), hits, kernels.size() - hits, s.directory));
  if (!note.empty())
    line("note: " + note);
  for (const nlohmann::json &r : kernels) {
    std::string name = r["kernel"], key = r["key"], status = r["status"];
    line(fmt::format("  {:<5} {:<32} {}", status, name, shortKey(key)));
    if (status == "hit")
      continue;
    if (r["nearest"].is_null()) {
      line(fmt::format("        no entry of this kind of kernel ({}) to "
                       "compare with",
                       groupKind(r["group"].get<std::string>())));
      continue;
    }
    const nlohmann::json &n = r["nearest"];
    line(fmt::format(
        "        nearest entry {} {} (graph {}, group {}, last used {})",
        shortKey(n["key"]), n["kernel"].get<std::string>(),
        n["graph"].get<std::string>(), n["group"].get<std::string>(),
        formatTime(n["lastUsed"].get<int64_t>())));
    for (const nlohmann::json &d : r["differences"]) {
      std::string part = d["part"], detail = d["detail"];
      if (detail.empty())
        detail = fmt::format("here {}, entry {}", d["here"].get<std::string>(),
                             d["entry"].get<std::string>());
      line(fmt::format("        differs in {}: {}", part, detail));
    }
  }
  return ExitOk;
}

} // namespace

const CommandSpec &cacheWhyCommand() {
  static const CommandSpec spec = {
      "cache why",
      "for a graph: which kernels would hit the cache, and why the others "
      "miss",
      "kiln cache why FILE [--bind NAME=SIZE]... [--arch SM] "
      "[--matmul-precision MODE] [--format json]",
      "Generates the kernels of FILE without compiling them (for the GPU when "
      "there\nis one, as 'kiln run' does; else as 'kiln compile' does) and "
      "says, for each,\nwhether the kernel cache holds it. For a miss, it "
      "names the nearest entry of\nthe same kind of kernel and the parts of "
      "the key that differ: source (with the\nshapes or the first line that "
      "differs), templates, options, arch, nvrtc, kiln.\nGive the "
      "--matmul-precision of the run or compile to explain: linear's "
      "kernel,\nhence its source, differs by precision.",
      {{"--bind", "NAME=SIZE", "bind a named dim, e.g. --bind N=1024", true},
       {"--arch", "SM",
        "target arch, e.g. sm_90 (default: the GPU's, else "
        "sm_90)"},
       kMatmulPrecisionOption,
       kFormatOption},
      1,
      1,
      runWhy};
  return spec;
}

} // namespace kiln::cli
