//===- ParserTest.cpp - What the parser builds ----------------------------===//
#include "Parser.h"
#include "IR/Printer.h"
#include "Lexer.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace kiln;

namespace {

std::unique_ptr<Graph> parseOk(llvm::StringRef text) {
  llvm::Expected<std::unique_ptr<Graph>> g = parseGraph(text, "t.kg");
  if (!g) {
    ADD_FAILURE() << errorToString(g.takeError());
    return nullptr;
  }
  return std::move(*g);
}

} // namespace

TEST(Lexer, TokensAndPositions) {
  llvm::Expected<std::vector<Token>> toks =
      lex("a %3 # c\n 12 1.5 .5 1e-5 2.5E3 inf nan \"q\\\"\\\\\" (-)", "t");
  ASSERT_TRUE(bool(toks)) << errorToString(toks.takeError());
  std::vector<TokKind> kinds;
  for (const Token &t : *toks)
    kinds.push_back(t.kind);
  EXPECT_EQ(kinds,
            (std::vector<TokKind>{
                TokKind::Name, TokKind::Name, TokKind::Int, TokKind::Float,
                TokKind::Float, TokKind::Float, TokKind::Float, TokKind::Float,
                TokKind::Float, TokKind::String, TokKind::LParen,
                TokKind::Minus, TokKind::RParen, TokKind::Eof}));
  EXPECT_EQ((*toks)[1].text, "%3");
  EXPECT_EQ((*toks)[2].line, 2u);
  EXPECT_EQ((*toks)[2].col, 2u);
  EXPECT_EQ((*toks)[9].str, "q\"\\");
}

TEST(Parser, NodesOperandsAndNames) {
  auto g = parseOk(R"(graph g(x: f32[N, 8]) {
  param w: f32[4, 8] = randn(seed=5)
  y = linear(x, w)
  z = add(relu(y), 2)
  return z
})");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->name(), "g");
  EXPECT_EQ(g->file(), "t.kg");
  ASSERT_EQ(g->nodes().size(), 3u);
  EXPECT_EQ(g->nodes()[0]->op(), OpKind::Linear);
  EXPECT_EQ(g->nodes()[1]->op(), OpKind::Relu);
  EXPECT_EQ(g->nodes()[2]->op(), OpKind::Add);
  EXPECT_EQ(g->nodes()[0]->operand(2), nullptr);
  EXPECT_EQ(g->nodes()[1]->result()->name(), "%0");
  const Value *lit = g->nodes()[2]->operand(1);
  ASSERT_TRUE(lit->isLiteral());
  EXPECT_TRUE(lit->literalIsInt());
  EXPECT_EQ(lit->literal(), 2.0);
  EXPECT_EQ(g->lookup("y")->type().str(), "f32[N, 4]");
  EXPECT_EQ(g->nodes()[0]->loc().str(), "t.kg:3:7");
  EXPECT_EQ(g->lookup("w")->loc().str(), "t.kg:2:9");
  ASSERT_EQ(g->outputs().size(), 1u);
  EXPECT_EQ(g->outputs()[0]->name(), "z");
  EXPECT_EQ(g->symbols(), (llvm::SmallVector<std::string, 4>{"N"}));
}

TEST(Parser, AttributeCoercion) {
  auto g = parseOk(R"(graph g(x: f32[2, 4, 8, 8]) {
  param w: f32[4, 4, 3, 3]
  a = min(x, dim=1)
  b = conv2d(x, w, stride=2, padding=[1, 0])
  c = leaky_relu(x, negative_slope=1)
  d = group_norm(x, num_groups=2)
  e = gelu(x, approximate="tanh")
  return a, b, c, d, e
})");
  ASSERT_TRUE(g);
  const auto &n = g->nodes();
  EXPECT_EQ(n[0]->getInts("dim"), (llvm::SmallVector<int64_t, 4>{1}));
  EXPECT_FALSE(n[0]->getBool("keepdim"));
  EXPECT_EQ(n[1]->getInts("stride"), (llvm::SmallVector<int64_t, 4>{2, 2}));
  EXPECT_EQ(n[1]->getInts("padding"), (llvm::SmallVector<int64_t, 4>{1, 0}));
  EXPECT_EQ(n[2]->attr("negative_slope")->kind(), AttrKind::Float);
  EXPECT_EQ(n[2]->getFloat("negative_slope"), 1.0);
  EXPECT_EQ(n[3]->getInt("groups"), 2);
  EXPECT_EQ(n[4]->getString("approximate"), "tanh");
  EXPECT_EQ(n[2]->attrs()[0].first, "negative_slope");
}

TEST(Parser, LiteralsAndKeywords) {
  auto g = parseOk(R"(graph g(i: i64[3], x: f32[3]) {
  a = add(i, 2.0)
  b = sub(x, -inf)
  c = mul(input=x, other=-3)
  return a, b, c
})");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->lookup("a")->dtype(), DType::F32);
  const Value *ninf = g->nodes()[1]->operand(1);
  EXPECT_FALSE(ninf->literalIsInt());
  EXPECT_TRUE(std::isinf(ninf->literal()) && ninf->literal() < 0);
  const Value *m3 = g->nodes()[2]->operand(1);
  EXPECT_TRUE(m3->literalIsInt());
  EXPECT_EQ(m3->literal(), -3.0);
}

TEST(Parser, BoolOperands) {
  // true and false are operands (Python's True and False) as well as
  // attribute values; they print back as written.
  auto g = parseOk(R"(graph g(i: i64[3], x: f32[3]) {
  a = add(i, true)
  b = mul(x, other=false)
  m = min(x, dim=0, keepdim=true)
  return a, b, m
})");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->lookup("a")->dtype(), DType::I64);
  EXPECT_EQ(g->lookup("b")->dtype(), DType::F32);
  const Value *t = g->nodes()[0]->operand(1);
  EXPECT_TRUE(t->isLiteral());
  EXPECT_EQ(t->dtype(), DType::Bool);
  EXPECT_EQ(t->literal(), 1.0);
  EXPECT_EQ(t->literalStr(), "true");
  EXPECT_EQ(g->nodes()[1]->operand(1)->literalStr(), "false");
  EXPECT_TRUE(g->nodes()[2]->getBool("keepdim"));
  std::string printed = printGraph(*g);
  EXPECT_NE(printed.find("add(i, true)"), std::string::npos) << printed;
  EXPECT_NE(printed.find("mul(x, false)"), std::string::npos) << printed;
}

TEST(Parser, Initialisers) {
  auto g = parseOk(R"(graph g() {
  param a: f32[2] = zeros
  param b: f32[2] = ones
  param c: f32[2] = full(3)
  param d: f32[2] = randn(4)
  param e: f32[2] = uniform(-1, 0.5, seed=6)
  param f: f32[2]
  y = add(a, f)
  return y
})");
  ASSERT_TRUE(g);
  auto init = [&](const char *n) { return *g->lookup(n)->init(); };
  using K = Initializer::Kind;
  EXPECT_EQ(init("a").kind, K::Zeros);
  EXPECT_EQ(init("b").kind, K::Ones);
  EXPECT_EQ(init("c").kind, K::Full);
  EXPECT_EQ(init("c").a, 3.0);
  EXPECT_EQ(init("d").kind, K::Randn);
  EXPECT_EQ(init("d").seed, 4u);
  EXPECT_EQ(init("e").kind, K::Uniform);
  EXPECT_EQ(init("e").a, -1.0);
  EXPECT_EQ(init("e").b, 0.5);
  EXPECT_EQ(init("e").seed, 6u);
  EXPECT_FALSE(g->lookup("f")->init().has_value());
}

TEST(Parser, UnreadableFile) {
  llvm::Expected<std::unique_ptr<Graph>> g =
      parseGraphFile("/nonexistent/dir/g.kg");
  ASSERT_FALSE(g);
  EXPECT_EQ(errorToString(g.takeError()),
            "/nonexistent/dir/g.kg: error: cannot read file: No such file or "
            "directory");
  llvm::Expected<std::unique_ptr<Graph>> dir = parseGraphFile("/tmp");
  ASSERT_FALSE(dir);
  EXPECT_EQ(errorToString(dir.takeError()),
            "/tmp: error: cannot read file: it is a directory");
  // A device that never ends is refused at its first NUL byte, not read
  // until memory runs out (endless text: tensorio/StreamTest.cpp).
  llvm::Expected<std::unique_ptr<Graph>> endless = parseGraphFile("/dev/zero");
  ASSERT_FALSE(endless);
  EXPECT_EQ(errorToString(endless.takeError()),
            "/dev/zero:1:1: error: a NUL byte: a .kg file is text (is this a "
            "binary file?)");
}
