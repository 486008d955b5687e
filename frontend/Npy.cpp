#include "Npy.h"

#include "FileUtil.h"
#include "NpyHeader.h"

#include "llvm/Support/Endian.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace kiln {

namespace {

constexpr llvm::StringLiteral kMagic("\x93NUMPY");
constexpr size_t kAlign = 64;

/// The type code after the byte-order character of a descr.
struct TypeCode {
  const char *code;
  DType dtype;
};
constexpr TypeCode kTypeCodes[] = {{"f4", DType::F32},
                                   {"f2", DType::F16},
                                   {"f8", DType::F64},
                                   {"i8", DType::I64},
                                   {"b1", DType::Bool}};

struct Descr {
  DType dtype;
  bool bigEndian;
};

std::optional<Descr> parseDescr(llvm::StringRef descr) {
  if (descr.size() != 3)
    return std::nullopt;
  char order = descr[0];
  for (const TypeCode &tc : kTypeCodes) {
    if (descr.substr(1) != tc.code)
      continue;
    bool oneByte = dtypeSize(tc.dtype) == 1;
    if (order == '<' || order == '=' || (order == '|' && oneByte))
      return Descr{tc.dtype, false};
    if (order == '>')
      return Descr{tc.dtype, !oneByte};
  }
  return std::nullopt;
}

llvm::Error unsupportedDescr(llvm::StringRef path, llvm::StringRef descr) {
  return fileError(path,
                   "unsupported dtype '{}'; supported: '<f4', '<f2', '<f8', "
                   "'<i8', '|b1' and the big-endian '>f4', '>f2', '>f8', "
                   "'>i8' (convert with arr.astype(np.float32))",
                   descr.str());
}

void byteSwap(std::vector<uint8_t> &bytes, unsigned itemSize) {
  for (size_t i = 0; i + itemSize <= bytes.size(); i += itemSize)
    std::reverse(bytes.begin() + i, bytes.begin() + i + itemSize);
}

/// Where the header text lies: checks the magic and version and reads the
/// header length. The first 12 bytes of the file are enough.
llvm::Expected<std::pair<size_t, uint64_t>> headerSpan(llvm::StringRef path,
                                                       llvm::StringRef file) {
  if (file.startswith(kMagic) && file.size() < 8)
    return fileError(path, "truncated .npy header ({} bytes in the file)",
                     file.size());
  // A .safetensors file starts with its JSON header's length, then '{'.
  const bool safetensors = file.size() > 8 && file[8] == '{';
  if (!file.startswith(kMagic))
    return fileError(path,
                     "not a .npy file (it does not start with the "
                     "magic string \\x93NUMPY){}",
                     safetensors ? "; it looks like a .safetensors file: "
                                   "give it that extension"
                                 : "");
  unsigned major = static_cast<uint8_t>(file[6]);
  unsigned minor = static_cast<uint8_t>(file[7]);
  if (major < 1 || major > 3 || minor != 0)
    return fileError(path,
                     "unsupported .npy format version {}.{} (supported: "
                     "1.0, 2.0, 3.0)",
                     major, minor);
  size_t prefix = major == 1 ? 10 : 12;
  if (file.size() < prefix)
    return fileError(path, "truncated .npy header ({} bytes in the file)",
                     file.size());
  const char *p = file.data() + 8;
  uint64_t len = major == 1 ? llvm::support::endian::read16le(p)
                            : llvm::support::endian::read32le(p);
  return std::make_pair(prefix, len);
}

/// Splits the file into header text and data; checks magic and version.
llvm::Error splitFile(llvm::StringRef path, llvm::StringRef file,
                      llvm::StringRef &header, llvm::StringRef &data) {
  llvm::Expected<std::pair<size_t, uint64_t>> span = headerSpan(path, file);
  if (!span)
    return span.takeError();
  auto [prefix, len] = *span;
  if (file.size() - prefix < len)
    return fileError(path,
                     "truncated .npy header: it declares {} bytes but only "
                     "{} follow",
                     len, file.size() - prefix);
  header = file.substr(prefix, len);
  data = file.substr(prefix + len);
  return llvm::Error::success();
}

/// What the header says: the tensor (without its bytes), its byte order
/// and its size in bytes.
struct Layout {
  HostTensor tensor;
  bool bigEndian = false;
  uint64_t bytes = 0;
};

llvm::Expected<Layout> parseLayout(llvm::StringRef path,
                                   llvm::StringRef headerText) {
  llvm::Expected<NpyHeader> header = parseNpyHeader(headerText, path);
  if (!header)
    return header.takeError();
  std::optional<Descr> descr = parseDescr(header->descr);
  if (!descr)
    return unsupportedDescr(path, header->descr);
  // One dimension has the same layout in either order.
  if (header->fortranOrder && header->shape.size() > 1)
    return fileError(path, "Fortran-order arrays are not supported; save "
                           "with np.ascontiguousarray");
  Layout l;
  l.tensor.dtype = descr->dtype;
  l.tensor.shape = header->shape;
  l.bigEndian = descr->bigEndian;
  std::optional<uint64_t> size =
      checkedByteSize(l.tensor.dtype, l.tensor.shape);
  if (!size)
    return fileError(path, "the shape {} is too large", l.tensor.typeStr());
  l.bytes = *size;
  return l;
}

/// How much of a .npy stream to read, from its first bytes.
llvm::Expected<StreamExtent> npyExtent(llvm::StringRef path,
                                       llvm::StringRef prefix) {
  if (prefix.size() < 12)
    return StreamExtent{12, false};
  llvm::Expected<std::pair<size_t, uint64_t>> span = headerSpan(path, prefix);
  if (!span)
    return span.takeError();
  uint64_t dataBegin = span->first + span->second;
  if (prefix.size() < dataBegin)
    return StreamExtent{dataBegin, false};
  llvm::Expected<Layout> layout =
      parseLayout(path, prefix.substr(span->first, span->second));
  if (!layout)
    return layout.takeError();
  // Both terms are below 2^63.
  return StreamExtent{dataBegin + layout->bytes, true};
}

llvm::Error checkDataSize(llvm::StringRef path, const HostTensor &t,
                          uint64_t expected, uint64_t actual) {
  if (actual < expected)
    return fileError(path,
                     "truncated data: {} needs {} bytes but the file holds "
                     "{}",
                     t.typeStr(), expected, actual);
  if (actual > expected)
    return fileError(path,
                     "{} trailing bytes after the data ({} needs {} bytes, "
                     "the file holds {})",
                     actual - expected, t.typeStr(), expected, actual);
  return llvm::Error::success();
}

} // namespace

llvm::Expected<HostTensor> readNpy(llvm::StringRef path) {
  auto buf = readWholeFile(
      path, [&](llvm::StringRef prefix) { return npyExtent(path, prefix); });
  if (!buf)
    return buf.takeError();
  return parseNpy((*buf)->getBuffer(), path);
}

llvm::Expected<HostTensor> parseNpy(llvm::StringRef bytes,
                                    llvm::StringRef path) {
  llvm::StringRef headerText, data;
  if (llvm::Error e = splitFile(path, bytes, headerText, data))
    return e;
  llvm::Expected<Layout> layout = parseLayout(path, headerText);
  if (!layout)
    return layout.takeError();
  HostTensor &t = layout->tensor;
  if (llvm::Error e = checkDataSize(path, t, layout->bytes, data.size()))
    return e;
  t.bytes.assign(data.begin(), data.end());
  if (layout->bigEndian)
    byteSwap(t.bytes, t.itemSize());
  return std::move(t);
}

static std::string descrFor(DType dtype) {
  for (const TypeCode &tc : kTypeCodes)
    if (tc.dtype == dtype)
      return (dtypeSize(dtype) == 1 ? "|" : "<") + std::string(tc.code);
  return "";
}

/// Magic, version, length and padded header, as NumPy's _wrap_header.
static std::string npyPrefix(const HostTensor &t) {
  std::string dict = formatNpyHeader({descrFor(t.dtype), false, t.shape});
  for (unsigned major : {1u, 2u}) {
    size_t lenField = major == 1 ? 2 : 4;
    size_t hlen = dict.size() + 1;
    size_t pad = kAlign - (kMagic.size() + 2 + lenField + hlen) % kAlign;
    uint64_t total = hlen + pad;
    if (major == 1 && total > 0xffff)
      continue;
    std::string out = kMagic.str();
    out += static_cast<char>(major);
    out += '\0';
    for (size_t i = 0; i < lenField; ++i)
      out += static_cast<char>((total >> (8 * i)) & 0xff);
    return out + dict + std::string(pad, ' ') + "\n";
  }
  llvm_unreachable("a .npy header cannot exceed 4 GiB");
}

llvm::Error writeNpy(llvm::StringRef path, const HostTensor &t) {
  assert(t.bytes.size() == t.byteSize() && "tensor bytes do not match shape");
  if (t.dtype == DType::BF16)
    return fileError(path, "cannot save a bf16 tensor as .npy (NumPy has no "
                           "bfloat16); convert it to f32 or use .safetensors");
  std::string prefix = npyPrefix(t);
  return writeFileAtomically(path, [&](llvm::raw_ostream &os) {
    os << prefix;
    os.write(reinterpret_cast<const char *>(t.bytes.data()), t.bytes.size());
  });
}

} // namespace kiln
