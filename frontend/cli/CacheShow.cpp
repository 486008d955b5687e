//===- CacheShow.cpp - kiln cache show ------------------------------------===//
//
// Reads one entry whole (checksum checked) and prints its metadata, the
// generated source, the PTX and the SASS. The entry holds no PTX: NVRTC is
// run again on the stored source, but only when this Kiln would compile it
// exactly as the entry was compiled (same templates, options and NVRTC), so
// the PTX shown is the PTX of that cubin. The SASS comes from cuobjdump or
// nvdisasm, looked for on PATH and in /usr/local/cuda/bin.
//
//===----------------------------------------------------------------------===//
#include "CacheCli.h"
#include "Commands.h"

#include "CacheFiles.h"
#include "Engine.h"
#include "IR/Diagnostics.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln::cli {

namespace {

/// A text the entry does not hold, or why it cannot be had.
struct Derived {
  std::string text; // "" when unavailable
  std::string note; // why it is unavailable
};

Derived regeneratePtx(const rt::CacheEntry &e) {
  const rt::KernelMetadata &m = e.meta;
  rt::CompileRequest req;
  req.source = e.source;
  req.fileName = m.kernelName + ".cu";
  req.headers = templateHeaders();
  req.arch = m.arch;
  std::vector<std::string> base = req.allOptions();
  if (m.options.size() < base.size() ||
      !std::equal(base.begin(), base.end(), m.options.begin()))
    return {"", "this Kiln passes NVRTC other options than the entry was "
                "compiled with"};
  req.options.assign(m.options.begin() + base.size(), m.options.end());
  rt::CacheKeyParts now = rt::cacheKeyParts(req, m.kilnVersion);
  std::vector<std::string> differ;
  if (m.headersHash != now.headersHash)
    differ.push_back("templates");
  if (m.nvrtcVersion != now.nvrtcVersion)
    differ.push_back("NVRTC " + m.nvrtcVersion + " (this is " +
                     now.nvrtcVersion + ")");
  if (!differ.empty())
    return {"", fmt::format("the entry was compiled with other {}; its PTX "
                            "cannot be made again here",
                            llvm::join(differ, " and "))};
  llvm::Expected<rt::CompileResult> r = rt::compileCuda(req);
  if (!r)
    return {"", "NVRTC failed: " + llvm::toString(r.takeError())};
  if (r->ptx.empty())
    return {"", "NVRTC gave no PTX"};
  return {r->ptx, ""};
}

/// cuobjdump or nvdisasm, and the arguments that print SASS with it.
std::string findDisassembler(std::vector<std::string> &args) {
  for (const char *tool : {"cuobjdump", "nvdisasm"}) {
    llvm::ErrorOr<std::string> p = llvm::sys::findProgramByName(tool);
    if (!p)
      p = llvm::sys::findProgramByName(tool, {"/usr/local/cuda/bin"});
    if (!p)
      continue;
    args = {*p};
    if (llvm::StringRef(tool) == "cuobjdump")
      args.push_back("-sass");
    return *p;
  }
  return "";
}

Derived disassemble(const rt::CacheEntry &e) {
  std::vector<std::string> args;
  std::string tool = findDisassembler(args);
  if (tool.empty())
    return {"", "neither cuobjdump nor nvdisasm is installed (looked on "
                "PATH and in /usr/local/cuda/bin); they come with the CUDA "
                "toolkit"};
  llvm::SmallString<128> cubin, out;
  if (llvm::sys::fs::createTemporaryFile("kiln-sass", "cubin", cubin) ||
      llvm::sys::fs::createTemporaryFile("kiln-sass", "txt", out))
    return {"", "cannot create a temporary file"};
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(cubin, ec);
    os.write(e.cubin.data(), e.cubin.size());
  }
  args.push_back(std::string(cubin));
  std::vector<llvm::StringRef> argv(args.begin(), args.end());
  llvm::Optional<llvm::StringRef> redirects[] = {
      llvm::StringRef(""), llvm::StringRef(out), llvm::StringRef(out)};
  std::string err;
  int rc =
      llvm::sys::ExecuteAndWait(tool, argv, llvm::None, redirects, 60, 0, &err);
  auto buf = llvm::MemoryBuffer::getFile(out);
  std::string text = buf ? (*buf)->getBuffer().str() : "";
  llvm::sys::fs::remove(cubin);
  llvm::sys::fs::remove(out);
  if (rc != 0)
    return {"", fmt::format("{} failed ({}): {}", tool,
                            err.empty() ? "exit " + std::to_string(rc) : err,
                            text)};
  return {text, ""};
}

void printMetadata(const nlohmann::json &j, const rt::CacheEntry &e) {
  auto row = [](const char *name, const std::string &value) {
    llvm::outs() << fmt::format("{:<12} {}\n", name, value);
  };
  const rt::KernelMetadata &m = e.meta;
  row("key", e.key);
  row("path", j["path"]);
  row("kernel", m.kernelName);
  row("graph", m.graph);
  row("group", m.group);
  row("arch", m.arch);
  row("shapes", m.shapes);
  row("launch", m.launch);
  row("options", llvm::join(m.options, " "));
  row("nvrtc", m.nvrtcVersion);
  row("kiln", m.kilnVersion);
  row("compile", formatMs(m.compileMs));
  row("size", fmt::format("{} (source {}, cubin {})",
                          rt::formatSize(j["bytes"].get<uint64_t>()),
                          rt::formatSize(e.source.size()),
                          rt::formatSize(e.cubin.size())));
  row("hits", std::to_string(j["hits"].get<int64_t>()));
  row("created", formatTime(e.created));
  row("last used", formatTime(j["lastUsed"].get<int64_t>()));
}

int runShow(const ParsedArgs &args) {
  llvm::Expected<bool> json = wantsJson(args);
  if (!json)
    return reportError(json.takeError());
  std::string only = args.get("--only", "all");
  if (only != "all" && only != "metadata" && only != "source" &&
      only != "ptx" && only != "sass")
    return reportError(usageError("--only must be metadata, source, ptx or "
                                  "sass, not '{}'",
                                  only));
  llvm::Expected<CacheContext> ctx = openCache();
  if (!ctx)
    return reportError(ctx.takeError());
  llvm::Expected<std::string> key = ctx->dir->findKey(args.positional[0]);
  if (!key)
    return reportError(key.takeError());
  rt::EntryFile f;
  for (rt::EntryFile &x : ctx->dir->scan(nullptr, /*withHits=*/true))
    if (x.key == *key)
      f = std::move(x);
  llvm::Expected<rt::CacheEntry> e = rt::readCacheEntry(f.path);
  if (!e)
    return reportError(userError("{}; 'kiln cache verify --fix' removes "
                                 "damaged entries",
                                 llvm::toString(e.takeError())));
  nlohmann::json j = entryMetadataJson(*e, f);
  bool all = only == "all";
  Derived ptx, sass;
  if (all || only == "ptx")
    ptx = regeneratePtx(*e);
  if (all || only == "sass")
    sass = disassemble(*e);
  if (*json) {
    if (all || only == "source")
      j["source"] = e->source;
    auto put = [&](const char *name, const Derived &d) {
      j[name] = d.text.empty() ? nlohmann::json() : nlohmann::json(d.text);
      if (!d.note.empty())
        j[std::string(name) + "Note"] = d.note;
    };
    if (all || only == "ptx")
      put("ptx", ptx);
    if (all || only == "sass")
      put("sass", sass);
    printJson(j);
    return ExitOk;
  }
  // One part alone prints bare, to be piped into a file.
  auto part = [&](const char *title, const std::string &text,
                  const std::string &note) {
    if (all)
      llvm::outs() << "\n== " << title << " ==\n";
    if (!text.empty())
      llvm::outs() << text << (text.back() == '\n' ? "" : "\n");
    else if (all)
      llvm::outs() << "(not shown: " << note << ")\n";
  };
  if (all || only == "metadata")
    printMetadata(j, *e);
  if (all || only == "source")
    part("source", e->source, "");
  if (all || only == "ptx")
    part("PTX", ptx.text, ptx.note);
  if (all || only == "sass")
    part("SASS", sass.text, sass.note);
  // Alone, an unavailable part is an error: nothing was printed.
  const Derived &asked = only == "ptx" ? ptx : sass;
  if ((only == "ptx" || only == "sass") && asked.text.empty())
    return reportError(userError("no {} for {}: {}",
                                 only == "ptx" ? "PTX" : "SASS", shortKey(*key),
                                 asked.note));
  return ExitOk;
}

} // namespace

const CommandSpec &cacheShowCommand() {
  static const CommandSpec spec = {
      "cache show",
      "one kernel cache entry: metadata, source, PTX, SASS",
      "kiln cache show KEY [--only metadata|source|ptx|sass] [--format json]",
      "Prints the entry whose key starts with KEY (see 'kiln cache list'): "
      "its\nmetadata, the generated CUDA source, the PTX (NVRTC run again "
      "on the stored\nsource, when this Kiln compiles it the same way) and "
      "the SASS (with cuobjdump\nor nvdisasm, when installed). With --only, "
      "that part alone, bare, e.g.\n'kiln cache show 3f2a --only source > "
      "kernel.cu'.",
      {{"--only", "PART", "metadata, source, ptx or sass alone"},
       kFormatOption},
      1,
      1,
      runShow};
  return spec;
}

} // namespace kiln::cli
