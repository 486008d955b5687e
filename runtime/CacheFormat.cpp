#include "CacheFormat.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace kiln::rt {

namespace {

constexpr llvm::StringLiteral Magic = "KILNCACHE 1\n";
constexpr size_t ChecksumBytes = 65; // 64 hex digits and '\n'

llvm::Error bad(const std::string &what) {
  return llvm::make_error<llvm::StringError>(what,
                                             llvm::inconvertibleErrorCode());
}

nlohmann::json metadataJson(const CacheEntry &e) {
  const KernelMetadata &m = e.meta;
  return {{"key", e.key},
          {"kernelName", m.kernelName},
          {"graph", m.graph},
          {"group", m.group},
          {"shapes", m.shapes},
          {"launch", m.launch},
          {"arch", m.arch},
          {"options", m.options},
          {"nvrtcVersion", m.nvrtcVersion},
          {"kilnVersion", m.kilnVersion},
          {"compileMs", m.compileMs},
          {"sourceBytes", e.source.size()},
          {"cubinBytes", e.cubin.size()},
          {"created", e.created},
          {"lastUsed", e.lastUsed}};
}

/// Fills `e` from the metadata record; throws nlohmann::json::exception on
/// a missing field or a wrong type.
void readMetadata(const nlohmann::json &j, CacheEntry &e) {
  KernelMetadata &m = e.meta;
  j.at("key").get_to(e.key);
  j.at("kernelName").get_to(m.kernelName);
  j.at("graph").get_to(m.graph);
  j.at("group").get_to(m.group);
  j.at("shapes").get_to(m.shapes);
  j.at("launch").get_to(m.launch);
  j.at("arch").get_to(m.arch);
  j.at("options").get_to(m.options);
  j.at("nvrtcVersion").get_to(m.nvrtcVersion);
  j.at("kilnVersion").get_to(m.kilnVersion);
  j.at("compileMs").get_to(m.compileMs);
  j.at("created").get_to(e.created);
  j.at("lastUsed").get_to(e.lastUsed);
}

} // namespace

std::string sha256Hex(llvm::StringRef bytes) {
  llvm::SHA256 h;
  h.update(bytes);
  return llvm::toHex(h.final(), /*LowerCase=*/true);
}

std::string encodeCacheEntry(const CacheEntry &entry) {
  std::string meta = metadataJson(entry).dump(1) + "\n";
  std::string out = Magic.str();
  out += fmt::format("lengths {} {} {}\n", meta.size(), entry.source.size(),
                     entry.cubin.size());
  out += meta;
  out += entry.source;
  out.append(entry.cubin.begin(), entry.cubin.end());
  out += sha256Hex(out) + "\n";
  return out;
}

llvm::Expected<CacheEntry> decodeCacheEntry(llvm::StringRef bytes) {
  if (bytes.empty())
    return bad("empty file (0 bytes)");
  if (!bytes.startswith(Magic))
    return bad("not a Kiln cache entry (no 'KILNCACHE 1' line)");
  llvm::StringRef rest = bytes.drop_front(Magic.size());
  auto [line, body] = rest.split('\n');
  llvm::SmallVector<llvm::StringRef, 4> fields;
  line.split(fields, ' ');
  uint64_t len[3];
  if (line.size() == rest.size() || fields.size() != 4 ||
      fields[0] != "lengths" || fields[1].getAsInteger(10, len[0]) ||
      fields[2].getAsInteger(10, len[1]) || fields[3].getAsInteger(10, len[2]))
    return bad("bad 'lengths' line");
  uint64_t headerBytes = bytes.size() - body.size();
  // A length above 1 TiB is garbage; below, the sum cannot overflow.
  for (uint64_t l : len)
    if (l > (uint64_t(1) << 40))
      return bad(fmt::format("bad 'lengths' line (length {})", l));
  uint64_t expected = headerBytes + len[0] + len[1] + len[2] + ChecksumBytes;
  if (bytes.size() != expected)
    return bad(fmt::format("{}: {} bytes where the lengths say {}",
                           bytes.size() < expected ? "truncated" : "too long",
                           bytes.size(), expected));
  llvm::StringRef covered = bytes.drop_back(ChecksumBytes);
  llvm::StringRef stored = bytes.take_back(ChecksumBytes);
  if (stored.back() != '\n' || stored.drop_back() != sha256Hex(covered))
    return bad("checksum mismatch: the file is damaged");

  CacheEntry e;
  llvm::StringRef meta = body.take_front(len[0]);
  e.source = body.substr(len[0], len[1]).str();
  llvm::StringRef cubin = body.substr(len[0] + len[1], len[2]);
  e.cubin.assign(cubin.begin(), cubin.end());
  try {
    readMetadata(nlohmann::json::parse(meta.begin(), meta.end()), e);
  } catch (const nlohmann::json::exception &ex) {
    return bad(std::string("bad metadata record: ") + ex.what());
  }
  return e;
}

} // namespace kiln::rt
