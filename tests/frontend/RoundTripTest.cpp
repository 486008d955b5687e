//===- RoundTripTest.cpp - print(parse(s)) is a fixed point ---------------===//
#include "IR/Printer.h"
#include "Parser.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

using namespace kiln;

namespace {

/// Parses `text`, prints it, and checks that the print parses back and
/// prints identically, with and without type annotations. Returns the
/// canonical text.
std::string checkRoundTrip(llvm::StringRef text, llvm::StringRef file) {
  llvm::Expected<std::unique_ptr<Graph>> g = parseGraph(text, file);
  if (!g) {
    ADD_FAILURE() << errorToString(g.takeError());
    return "";
  }
  std::string first = printGraph(**g);
  llvm::Expected<std::unique_ptr<Graph>> again = parseGraph(first, "printed");
  if (!again) {
    ADD_FAILURE() << errorToString(again.takeError()) << "\n" << first;
    return "";
  }
  EXPECT_EQ(first, printGraph(**again));
  EXPECT_EQ((*g)->nodes().size(), (*again)->nodes().size());

  std::string typed = printGraph(**g, PrintOptions{/*types=*/true});
  llvm::Expected<std::unique_ptr<Graph>> fromTyped = parseGraph(typed, "typed");
  if (!fromTyped) {
    ADD_FAILURE() << errorToString(fromTyped.takeError()) << "\n" << typed;
    return first;
  }
  EXPECT_EQ(first, printGraph(**fromTyped));
  return first;
}

std::vector<std::filesystem::path> kgFiles() {
  std::vector<std::filesystem::path> files;
  for (const char *dir : {"examples", "tests/data/kg", "tests/data/golden"}) {
    std::filesystem::path root = std::filesystem::path(KILN_SOURCE_DIR) / dir;
    if (!std::filesystem::is_directory(root))
      continue;
    for (const auto &entry : std::filesystem::directory_iterator(root))
      if (entry.path().extension() == ".kg")
        files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

} // namespace

TEST(RoundTrip, EveryKgFile) {
  std::vector<std::filesystem::path> files = kgFiles();
  // The five flagships and the decoder block at two shapes each, plus the
  // golden cases.
  size_t examples = std::count_if(files.begin(), files.end(), [](auto &p) {
    return p.parent_path().filename() == "examples";
  });
  ASSERT_EQ(examples, 12u)
      << "examples/ should hold the flagships' and the decoder block's files";
  ASSERT_GE(files.size(), 110u);
  for (const auto &path : files) {
    SCOPED_TRACE(path.string());
    llvm::Expected<std::unique_ptr<Graph>> g = parseGraphFile(path.string());
    ASSERT_TRUE(bool(g)) << errorToString(g.takeError());
    EXPECT_EQ((*g)->file(), path.string());
    checkRoundTrip(printGraph(**g), path.string());
  }
  std::printf("round-tripped %zu .kg files\n", files.size());
}

TEST(RoundTrip, CanonicalForm) {
  const char *src = R"(# comment
graph g(x: f32[N, 8], y: f32[8]) {
  param w: f32[4, 8] = uniform(-1, 1, seed=3)  # trailing comment
  param b: f32[4]
  z: f32[N, 4] = linear(x, w, bias=b);
  q = group_norm(add(z, 1), bias=b, groups=2, eps=1e-5)
  return q, z
}
)";
  EXPECT_EQ(checkRoundTrip(src, "t.kg"), R"(graph g(x: f32[N, 8], y: f32[8]) {
  param w: f32[4, 8] = uniform(-1.0, 1.0, seed=3)
  param b: f32[4]
  z = linear(x, w, b)
  %0 = add(z, 1)
  q = group_norm(%0, bias=b, groups=2, eps=1e-05)
  return q, z
}
)");
}

TEST(RoundTrip, TypedOutput) {
  llvm::Expected<std::unique_ptr<Graph>> g =
      parseGraph("graph g(x: f32[N, 8]) { y = relu(x) return y }", "t.kg");
  ASSERT_TRUE(bool(g)) << errorToString(g.takeError());
  EXPECT_EQ(printGraph(**g, PrintOptions{true}),
            "graph g(x: f32[N, 8]) {\n  y: f32[N, 8] = relu(x)\n  return y\n"
            "}\n");
}

/// Inline sources covering every op, attribute kind, literal form and
/// initialiser.
static const char *const kInlineSources[] = {
    // Contractions, keyword operands out of order.
    R"(graph a(x: f32[N, 16], m: f32[B, 8, 16]) {
  param w: f32[8, 16] = randn(3)
  param v: f32[16, 4] = zeros
  y = linear(weight=w, input=x)
  z = matmul(m, other=v)
  return y, z
})",
    // Convolutions with every attribute.
    R"(graph c(x: f16[2, 4, 9, 9]) {
  param w: f16[8, 2, 3, 3] = full(-0.25)
  param wt: f16[8, 4, 2, 2] = ones
  y = conv2d(x, w, stride=[2, 1], padding=1, dilation=[1, 2], groups=2)
  t = conv_transpose2d(y, wt, output_padding=[1, 0], stride=2)
  return t
})",
    // Reductions and binary ops with literals.
    R"(graph r(x: f64[3, 4, 5]) {
  a = min(x, dim=1) ; b = max(x, dim=[0, -1], keepdim=true)
  c = sum(x) d = mean(x, dim=[2]) e = logsumexp(x, dim=-1, keepdim=false)
  f = sub(a, 2) g = mul(-3, b) h = div(c, .5) i = maximum(d, 1e3)
  j = minimum(e, -inf) k = pow(f, -2.5E-1) l = add(g, nan)
  return a, b, c, d, e, f, g, h, i, j, k, l
})",
    // Every unary op and its attributes.
    R"(graph u(x: bf16[7]) {
  a = neg(x) b = abs(a) c = exp(b) d = log(c) e = sqrt(d) f = rsqrt(e)
  g = relu(f) h = leaky_relu(g, negative_slope=0) i = sigmoid(h)
  j = tanh(i) k = swish(j) l = silu(k) m = gelu(l) n = gelu(m,
  approximate="none") o = hardtanh(n, min_val=-0.5) p = clamp(o, max=3)
  q = hardswish(p) r = mish(q) s = softplus(r, beta=1, threshold=15)
  return s
})",
};

TEST(RoundTrip, InlineSources) {
  int i = 0;
  for (const char *src : kInlineSources) {
    SCOPED_TRACE(src);
    llvm::Expected<std::unique_ptr<Graph>> g =
        parseGraph(src, "inline" + std::to_string(i++));
    if (!g) {
      ADD_FAILURE() << errorToString(g.takeError());
      continue;
    }
    checkRoundTrip(src, "inline");
  }
}
