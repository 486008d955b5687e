#include "Safetensors.h"

#include "FileUtil.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <cassert>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

namespace kiln {

using json = nlohmann::json;

namespace {

constexpr uint64_t kMaxHeader = 100'000'000;
constexpr llvm::StringLiteral kMetadataKey("__metadata__");

/// One tensor's header entry, checked against the data buffer.
struct Entry {
  std::string name;
  HostTensor tensor; // dtype and shape only until the data is copied
  uint64_t begin = 0, end = 0;
};

std::optional<DType> parseDTypeName(llvm::StringRef s) {
#define X(E, S, B)                                                             \
  if (s == safetensorsDTypeName(DType::E))                                     \
    return DType::E;
  KILN_DTYPES(X)
#undef X
  return std::nullopt;
}

/// Parses the header JSON, rejecting duplicate top-level names (which
/// nlohmann::json would otherwise silently merge).
llvm::Expected<json> parseHeaderJson(llvm::StringRef path,
                                     llvm::StringRef text) {
  std::set<std::string> names;
  std::string duplicate;
  auto callback = [&](int depth, json::parse_event_t event, json &parsed) {
    if (depth == 1 && event == json::parse_event_t::key &&
        !names.insert(parsed.get<std::string>()).second && duplicate.empty())
      duplicate = parsed.get<std::string>();
    return true;
  };
  json header;
  try {
    header = json::parse(text.begin(), text.end(), callback);
  } catch (const json::exception &e) {
    return fileError(path, "invalid JSON in the safetensors header: {}",
                     e.what());
  }
  if (!duplicate.empty())
    return fileError(path, "duplicate tensor name '{}' in the header",
                     duplicate);
  if (!header.is_object())
    return fileError(path, "the safetensors header is not a JSON object");
  return header;
}

bool isSize(const json &v) {
  return v.is_number_unsigned() &&
         v.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX);
}

llvm::Error badField(llvm::StringRef path, llvm::StringRef name,
                     llvm::StringRef field, llvm::StringRef expected) {
  return fileError(path,
                   "tensor '{}': missing or invalid field '{}' (expected {})",
                   name.str(), field.str(), expected.str());
}

llvm::Error parseDType(llvm::StringRef path, const std::string &name,
                       const json &v, Entry &e) {
  if (!v.contains("dtype") || !v["dtype"].is_string())
    return badField(path, name, "dtype", "a string such as \"F32\"");
  std::string s = v["dtype"].get<std::string>();
  std::optional<DType> dt = parseDTypeName(s);
  if (!dt)
    return fileError(path,
                     "tensor '{}': unsupported dtype '{}'; supported: F32, "
                     "F16, BF16, F64, I64, BOOL",
                     name, s);
  e.tensor.dtype = *dt;
  return llvm::Error::success();
}

llvm::Error parseLayout(llvm::StringRef path, const std::string &name,
                        const json &v, Entry &e) {
  const json *shape = v.contains("shape") ? &v["shape"] : nullptr;
  if (!shape || !shape->is_array() ||
      !std::all_of(shape->begin(), shape->end(), isSize))
    return badField(path, name, "shape", "a list of non-negative integers");
  for (const json &s : *shape)
    e.tensor.shape.push_back(s.get<int64_t>());
  const json *off = v.contains("data_offsets") ? &v["data_offsets"] : nullptr;
  if (!off || !off->is_array() || off->size() != 2 ||
      !std::all_of(off->begin(), off->end(), isSize) ||
      (*off)[0].get<uint64_t>() > (*off)[1].get<uint64_t>())
    return badField(path, name, "data_offsets",
                    "[begin, end] with 0 <= begin <= end");
  e.begin = (*off)[0].get<uint64_t>();
  e.end = (*off)[1].get<uint64_t>();
  return llvm::Error::success();
}

llvm::Expected<Entry> parseEntry(llvm::StringRef path, const std::string &name,
                                 const json &v) {
  if (!v.is_object())
    return fileError(path, "tensor '{}': entry is not a JSON object", name);
  Entry e;
  e.name = name;
  if (llvm::Error err = parseDType(path, name, v, e))
    return err;
  if (llvm::Error err = parseLayout(path, name, v, e))
    return err;
  std::optional<uint64_t> size =
      checkedByteSize(e.tensor.dtype, e.tensor.shape);
  if (!size || *size != e.end - e.begin)
    return fileError(path,
                     "tensor '{}': {} needs {} bytes but data_offsets [{}, "
                     "{}] span {}",
                     name, e.tensor.typeStr(),
                     size ? std::to_string(*size) : "too many", e.begin, e.end,
                     e.end - e.begin);
  return e;
}

llvm::Error parseMetadata(llvm::StringRef path, const json &v,
                          std::map<std::string, std::string> &out) {
  bool ok = v.is_object() && std::all_of(v.begin(), v.end(),
                                         [](auto &x) { return x.is_string(); });
  if (!ok)
    return fileError(path, "'__metadata__' must map strings to strings");
  for (auto it = v.begin(); it != v.end(); ++it)
    out[it.key()] = it.value().get<std::string>();
  return llvm::Error::success();
}

/// The tensors must fill the data buffer exactly, as the format requires:
/// sorted by offset, each starts where the one before ends, the first at 0
/// and the last at the buffer's end. Empty tensors hold no bytes and may
/// stand anywhere inside the buffer.
llvm::Error checkLayout(llvm::StringRef path, std::vector<Entry> &entries,
                        uint64_t dataSize) {
  std::vector<Entry *> byOffset;
  for (Entry &e : entries) {
    if (e.end > dataSize)
      return fileError(path,
                       "tensor '{}': data_offsets [{}, {}] lie outside the "
                       "data buffer of {} bytes (is the file truncated?)",
                       e.name, e.begin, e.end, dataSize);
    if (e.begin != e.end)
      byOffset.push_back(&e);
  }
  std::sort(byOffset.begin(), byOffset.end(), [](Entry *a, Entry *b) {
    return std::tie(a->begin, a->end) < std::tie(b->begin, b->end);
  });
  Entry *prev = nullptr;
  for (Entry *e : byOffset) {
    uint64_t at = prev ? prev->end : 0;
    if (e->begin < at)
      return fileError(path,
                       "tensors '{}' and '{}' overlap in the data buffer "
                       "([{}, {}] and [{}, {}])",
                       prev->name, e->name, prev->begin, prev->end, e->begin,
                       e->end);
    if (e->begin > at && prev)
      return fileError(path,
                       "a hole of {} bytes in the data buffer between "
                       "tensors '{}' [{}, {}] and '{}' [{}, {}]; the format "
                       "requires the tensors to fill it without gaps",
                       e->begin - at, prev->name, prev->begin, prev->end,
                       e->name, e->begin, e->end);
    if (e->begin > at)
      return fileError(path,
                       "a hole of {} bytes at the start of the data buffer: "
                       "the first tensor, '{}', has data_offsets [{}, {}]; "
                       "the format requires the tensors to fill the buffer "
                       "from offset 0 without gaps",
                       e->begin, e->name, e->begin, e->end);
    prev = e;
  }
  uint64_t used = prev ? prev->end : 0;
  if (used < dataSize)
    return fileError(path,
                     "{} bytes at the end of the data buffer of {} bytes "
                     "belong to no tensor{}; the format requires the tensors "
                     "to fill the buffer exactly",
                     dataSize - used, dataSize,
                     prev ? fmt::format(" (the last, '{}', ends at {})",
                                        prev->name, prev->end)
                          : "");
  return llvm::Error::success();
}

/// The header length at the start of `file`, checked against the bound
/// the format's implementations use.
llvm::Expected<uint64_t> headerLength(llvm::StringRef path,
                                      llvm::StringRef file) {
  if (file.size() < 8)
    return fileError(path,
                     "file too short for safetensors ({} bytes; the 8-byte "
                     "header length is missing)",
                     file.size());
  uint64_t n = llvm::support::endian::read64le(file.data());
  if (n > kMaxHeader)
    return fileError(path,
                     "header length {} is absurd (over 100 MB); this is not "
                     "a safetensors file",
                     n);
  return n;
}

/// The header: its length and JSON, checked against the file size.
llvm::Expected<llvm::StringRef> headerText(llvm::StringRef path,
                                           llvm::StringRef file) {
  llvm::Expected<uint64_t> n = headerLength(path, file);
  if (!n)
    return n.takeError();
  if (*n > file.size() - 8)
    return fileError(path,
                     "header length {} runs past the end of the file ({} "
                     "bytes); the file is truncated or not safetensors",
                     *n, file.size());
  return file.substr(8, *n);
}

/// The header's tensors (their bytes not yet copied) and metadata.
struct Header {
  std::vector<Entry> entries;
  std::map<std::string, std::string> metadata;
  uint64_t dataBegin = 0;
};

llvm::Expected<Header> parseHeader(llvm::StringRef path, llvm::StringRef file) {
  llvm::Expected<llvm::StringRef> text = headerText(path, file);
  if (!text)
    return text.takeError();
  llvm::Expected<json> header = parseHeaderJson(path, *text);
  if (!header)
    return header.takeError();
  Header out;
  out.dataBegin = 8 + text->size();
  for (auto it = header->begin(); it != header->end(); ++it) {
    if (it.key() == kMetadataKey) {
      if (llvm::Error e = parseMetadata(path, it.value(), out.metadata))
        return e;
      continue;
    }
    llvm::Expected<Entry> e = parseEntry(path, it.key(), *it);
    if (!e)
      return e.takeError();
    out.entries.push_back(std::move(*e));
  }
  return out;
}

/// How much of a .safetensors stream to read, from its first bytes: the
/// header, then the data up to the end of the last tensor.
llvm::Expected<StreamExtent> safetensorsExtent(llvm::StringRef path,
                                               llvm::StringRef prefix) {
  if (prefix.size() < 8)
    return StreamExtent{8, false};
  llvm::Expected<uint64_t> n = headerLength(path, prefix);
  if (!n)
    return n.takeError();
  if (prefix.size() < 8 + *n)
    return StreamExtent{8 + *n, false};
  llvm::Expected<Header> header = parseHeader(path, prefix);
  if (!header)
    return header.takeError();
  uint64_t end = 0;
  for (const Entry &e : header->entries)
    end = std::max(end, e.end);
  // Below 2^63 + 2^27.
  return StreamExtent{header->dataBegin + end, true};
}

} // namespace

llvm::Expected<SafetensorsFile> parseSafetensors(llvm::StringRef file,
                                                 llvm::StringRef path) {
  llvm::Expected<Header> header = parseHeader(path, file);
  if (!header)
    return header.takeError();
  llvm::StringRef data = file.substr(header->dataBegin);
  if (llvm::Error e = checkLayout(path, header->entries, data.size()))
    return e;
  SafetensorsFile out;
  out.metadata = std::move(header->metadata);
  for (Entry &e : header->entries) {
    e.tensor.bytes.assign(data.begin() + e.begin, data.begin() + e.end);
    out.tensors.emplace_back(std::move(e.name), std::move(e.tensor));
  }
  return out;
}

llvm::StringRef safetensorsDTypeName(DType t) {
  switch (t) {
  case DType::F32:
    return "F32";
  case DType::F16:
    return "F16";
  case DType::BF16:
    return "BF16";
  case DType::F64:
    return "F64";
  case DType::I64:
    return "I64";
  case DType::Bool:
    return "BOOL";
  }
  llvm_unreachable("bad dtype");
}

const HostTensor *SafetensorsFile::find(llvm::StringRef name) const {
  for (const auto &[n, t] : tensors)
    if (n == name)
      return &t;
  return nullptr;
}

llvm::Expected<SafetensorsFile> readSafetensors(llvm::StringRef path) {
  auto buf = readWholeFile(path, [&](llvm::StringRef prefix) {
    return safetensorsExtent(path, prefix);
  });
  if (!buf)
    return buf.takeError();
  return parseSafetensors((*buf)->getBuffer(), path);
}

llvm::Error
writeSafetensors(llvm::StringRef path,
                 llvm::ArrayRef<std::pair<std::string, HostTensor>> tensors,
                 const std::map<std::string, std::string> &metadata) {
  std::vector<const std::pair<std::string, HostTensor> *> order;
  for (const auto &t : tensors)
    order.push_back(&t);
  std::sort(order.begin(), order.end(),
            [](auto *a, auto *b) { return a->first < b->first; });
  json header = json::object();
  uint64_t offset = 0;
  for (const auto *t : order) {
    const HostTensor &h = t->second;
    assert(h.bytes.size() == h.byteSize() && "tensor bytes do not match shape");
    if (header.contains(t->first) || t->first == kMetadataKey)
      return fileError(path, "cannot write tensor '{}': the name is {}",
                       t->first,
                       header.contains(t->first) ? "duplicated" : "reserved");
    header[t->first] = {
        {"dtype", safetensorsDTypeName(h.dtype).str()},
        {"shape", std::vector<int64_t>(h.shape.begin(), h.shape.end())},
        {"data_offsets", {offset, offset + h.bytes.size()}}};
    offset += h.bytes.size();
  }
  if (!metadata.empty())
    header[kMetadataKey.str()] = metadata;
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  return writeFileAtomically(path, [&](llvm::raw_ostream &os) {
    char len[8];
    llvm::support::endian::write64le(len, text.size());
    os.write(len, 8);
    os << text;
    for (const auto *t : order)
      os.write(reinterpret_cast<const char *>(t->second.bytes.data()),
               t->second.bytes.size());
  });
}

} // namespace kiln
