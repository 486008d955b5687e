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
          {"sourceHash", m.sourceHash},
          {"headersHash", m.headersHash},
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
  // Entries of Kiln 0.1.0 have no key parts.
  m.sourceHash = j.value("sourceHash", "");
  m.headersHash = j.value("headersHash", "");
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

namespace {

/// The magic and lengths lines of an entry file.
struct EntryHeader {
  uint64_t headerBytes = 0; // the two lines
  uint64_t len[3] = {0, 0, 0};
};

llvm::Expected<EntryHeader> decodeHeader(llvm::StringRef bytes) {
  if (bytes.empty())
    return bad("empty file (0 bytes)");
  if (!bytes.startswith(Magic))
    return bad("not a Kiln cache entry (no 'KILNCACHE 1' line)");
  llvm::StringRef rest = bytes.drop_front(Magic.size());
  auto [line, body] = rest.split('\n');
  llvm::SmallVector<llvm::StringRef, 4> fields;
  line.split(fields, ' ');
  EntryHeader h;
  if (line.size() == rest.size() || fields.size() != 4 ||
      fields[0] != "lengths" || fields[1].getAsInteger(10, h.len[0]) ||
      fields[2].getAsInteger(10, h.len[1]) ||
      fields[3].getAsInteger(10, h.len[2]))
    return bad("bad 'lengths' line");
  h.headerBytes = bytes.size() - body.size();
  // A length above 1 TiB is garbage; below, sums cannot overflow.
  for (uint64_t l : h.len)
    if (l > (uint64_t(1) << 40))
      return bad(fmt::format("bad 'lengths' line (length {})", l));
  return h;
}

llvm::Error readMetadataRecord(llvm::StringRef meta, CacheEntry &e) {
  try {
    readMetadata(nlohmann::json::parse(meta.begin(), meta.end()), e);
  } catch (const nlohmann::json::exception &ex) {
    return bad(std::string("bad metadata record: ") + ex.what());
  }
  return llvm::Error::success();
}

} // namespace

llvm::Expected<CacheEntry> decodeCacheEntry(llvm::StringRef bytes) {
  llvm::Expected<EntryHeader> h = decodeHeader(bytes);
  if (!h)
    return h.takeError();
  const uint64_t *len = h->len;
  uint64_t expected = h->headerBytes + len[0] + len[1] + len[2] + ChecksumBytes;
  if (bytes.size() != expected)
    return bad(fmt::format("{}: {} bytes where the lengths say {}",
                           bytes.size() < expected ? "truncated" : "too long",
                           bytes.size(), expected));
  llvm::StringRef covered = bytes.drop_back(ChecksumBytes);
  llvm::StringRef stored = bytes.take_back(ChecksumBytes);
  if (stored.back() != '\n' || stored.drop_back() != sha256Hex(covered))
    return bad("checksum mismatch: the file is damaged");

  CacheEntry e;
  llvm::StringRef body = bytes.drop_front(h->headerBytes);
  e.source = body.substr(len[0], len[1]).str();
  llvm::StringRef cubin = body.substr(len[0] + len[1], len[2]);
  e.cubin.assign(cubin.begin(), cubin.end());
  if (llvm::Error err = readMetadataRecord(body.take_front(len[0]), e))
    return err;
  return e;
}

size_t decodeCacheEntryHeaderSize(llvm::StringRef head) {
  llvm::Expected<EntryHeader> h = decodeHeader(head);
  if (!h) {
    llvm::consumeError(h.takeError());
    return head.size();
  }
  return h->headerBytes + h->len[0];
}

llvm::Expected<CacheEntry> decodeCacheEntryMetadata(llvm::StringRef head) {
  llvm::Expected<EntryHeader> h = decodeHeader(head);
  if (!h)
    return h.takeError();
  if (head.size() < h->headerBytes + h->len[0])
    return bad(fmt::format("truncated: {} bytes, the metadata alone needs {}",
                           head.size(), h->headerBytes + h->len[0]));
  CacheEntry e;
  if (llvm::Error err =
          readMetadataRecord(head.substr(h->headerBytes, h->len[0]), e))
    return err;
  return e;
}

} // namespace kiln::rt
