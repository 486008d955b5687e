//===- ParserErrorTest.cpp - Golden diagnostics ---------------------------===//
//
// Each case is a source and the exact message a user sees, location
// included. The sources mostly share one header (kHead) so that the line
// numbers read easily: the statement under test is on line 4.
//
//===----------------------------------------------------------------------===//
#include "Parser.h"

#include <gtest/gtest.h>

using namespace kiln;

namespace {

struct ErrorCase {
  std::string source;
  std::string message;
};

const std::string kHead = "graph g(x: f32[N, 8], v: f32[3, 4]) {\n"
                          "  param w: f32[8, 8]\n"
                          "  y = relu(x)\n";

std::string stmt(const std::string &line) {
  return kHead + "  " + line + "\n  return y\n}\n";
}

std::string parseError(const std::string &source) {
  llvm::Expected<std::unique_ptr<Graph>> g = parseGraph(source, "t.kg");
  if (g)
    return "<parsed>";
  return errorToString(g.takeError());
}

std::vector<ErrorCase> cases() {
  std::string deep = "z = ";
  for (int i = 0; i < 300; ++i)
    deep += "relu(";
  return {
      // Lexical errors.
      {stmt("z = relu($)"),
       "t.kg:4:12: error: unexpected character '$' in a .kg file"},
      {"\xef\xbb\xbf" + stmt("z = relu(x)"),
       "t.kg:1:1: error: the file starts with a UTF-8 byte order mark; save "
       "it without one"},
      {stmt("z\xc3\xa9 = relu(x)"),
       "t.kg:4:4: error: unexpected non-ASCII character (byte 0xc3) in a .kg "
       "file: names and punctuation are ASCII (other text may stand only in "
       "comments and strings)"},
      {stmt("z = gelu(x, approximate=\"tanh)"),
       "t.kg:4:27: error: unterminated string; close it with '\"' on the same "
       "line"},
      {stmt("z = gelu(x, approximate=\"t\\n\")"),
       "t.kg:4:29: error: unknown escape in string; only \\\" and \\\\ are "
       "allowed"},
      {stmt("z = add(x, 1e)"),
       "t.kg:4:15: error: exponent of '1e' has no digits; write e.g. 1e-5"},
      {stmt("z = add(x, 12abc)"),
       "t.kg:4:16: error: unexpected 'a' after the number '12'; separate a "
       "number from a name with a space or a comma"},
      {stmt("z = add(x, 99999999999999999999)"),
       "t.kg:4:14: error: integer 99999999999999999999 is too large; the "
       "largest is 9223372036854775807"},
      {stmt("z = add(x, 1e999)"),
       "t.kg:4:14: error: float 1e999 is out of range; write inf for infinity"},
      {stmt("z = add(x, 9007199254740993)"),
       "t.kg:4:14: error: integer operand 9007199254740993 is too large; "
       "number operands lie within +-2^53"},
      // File structure.
      {"", "t.kg: error: the file holds no graph; write 'graph NAME(INPUTS) { "
           "... }'"},
      {"  # only a comment\n", "t.kg: error: the file holds no graph; write "
                               "'graph NAME(INPUTS) { ... }'"},
      {"grph g() {}",
       "t.kg:1:1: error: expected 'graph' to start the file, got 'grph'"},
      {"graph g(x: f32[N] y: f32[N]) {}",
       "t.kg:1:19: error: expected ')' to close the inputs of graph 'g' opened "
       "at 1:8, got 'y'"},
      {kHead, "t.kg:4:1: error: expected '}' to close graph 'g' opened at "
              "1:37, got end of file"},
      {kHead + "}\n", "t.kg:4:1: error: graph 'g' has no 'return'; end it with "
                      "'return' and the values it computes"},
      {kHead + "  return y\n  z = relu(y)\n}\n",
       "t.kg:5:3: error: statement after 'return'; 'return' must be the "
       "graph's last statement"},
      {kHead + "  return y\n}\ngraph h() {}\n",
       "t.kg:6:1: error: unexpected 'graph' after the graph's closing '}'; a "
       "file holds one graph"},
      {stmt("z = relu(x);;"), "t.kg:4:15: error: expected a statement (param, "
                              "an assignment or return), got ';'"},
      // Names and types.
      {stmt("true = relu(x)"), "t.kg:4:3: error: 'true' is a reserved word and "
                               "cannot name a value; pick another name"},
      {stmt("z = relu(yy)"),
       "t.kg:4:12: error: use of undefined value 'yy'; did you mean 'y'?"},
      {stmt("z = add(later, y)\n  later = relu(y)"),
       "t.kg:4:11: error: 'later' is used here but only defined later, at "
       "5:3; statements run in order, so move its definition up"},
      {stmt("z = linear(x, w, bias)\n  q = group_norm(x, bias=w, groups=1)"),
       "t.kg:4:20: error: use of undefined value 'bias'; define it (or add it "
       "as a graph input) before it is used"},
      {stmt("z = relu(q)"),
       "t.kg:4:12: error: use of undefined value 'q'; define it (or add it as "
       "a graph input) before it is used"},
      {stmt("x = relu(y)"),
       "t.kg:4:7: error: 'x' is already defined (first defined at 1:9); each "
       "value is assigned once, pick another name"},
      {stmt("z = y"),
       "t.kg:4:7: error: expected an op call such as relu(x) after 'z =', got "
       "'y'; a value cannot be renamed or set to a number"},
      {stmt("z = y(1)"),
       "t.kg:4:7: error: 'y' is a value, not an op; it cannot be called"},
      {stmt("param p: f33[3]"),
       "t.kg:4:12: error: unknown dtype 'f33'; expected one of f32, f16, bf16, "
       "f64, i64, bool"},
      {stmt("param p: f32"), "t.kg:5:3: error: expected '[' and the dims after "
                             "'f32' (write f32[] for a scalar), got 'return'"},
      {stmt("param p: f32[-1]"), "t.kg:4:16: error: expected a dim (an "
                                 "integer, or a name such as N), got '-'"},
      {stmt("z: f32[N, 10] = linear(x, w)"),
       "t.kg:4:6: error: 'z' is declared f32[N, 10] but linear gives f32[N, "
       "8]"},
      {stmt("z = add(x, param)"),
       "t.kg:4:14: error: 'param' is a reserved word, not a value"},
      {stmt("z = true"),
       "t.kg:4:7: error: expected an op call such as relu(x) after 'z =', "
       "got 'true'; a value cannot be renamed or set to a number"},
      {stmt("z = add(x, -y)"),
       "t.kg:4:15: error: expected a number after '-', got 'y'"},
      // Initialisers.
      {stmt("param p: f32[3] = rand(seed=1)"),
       "t.kg:4:21: error: unknown initialiser 'rand'; expected zeros, ones, "
       "full(v), randn(seed=s) or uniform(lo, hi, seed=s) (did you mean "
       "'randn'?)"},
      {stmt("param p: f32[3] = randn(sed=1)"),
       "t.kg:4:27: error: expected a seed such as seed=1, got 'sed'"},
      {stmt("param p: f32[3] = uniform(1, 0, seed=1)"),
       "t.kg:4:9: error: uniform(lo, hi, ...) needs finite lo < hi (and hi "
       "- lo finite), got 1.0 and 0.0"},
      {stmt("param p: f32[3] = uniform(-1e308, 1e308, seed=1)"),
       "t.kg:4:9: error: uniform(lo, hi, ...) needs finite lo < hi (and hi "
       "- lo finite), got -1e+308 and 1e+308"},
      {stmt("param p: i64[3] = randn(1)"),
       "t.kg:4:9: error: parameter 'p' is i64, but randn(seed=1) fills "
       "floating-point tensors only; use zeros, ones or full(...)"},
      // Calls.
      {stmt("z = linear(x w)"), "t.kg:4:16: error: expected ')' to close the "
                                "call to 'linear' opened at 4:7, got 'w'"},
      {stmt("z = grup_norm(x, groups=2)"),
       "t.kg:4:7: error: unknown op 'grup_norm'; did you mean 'group_norm'?"},
      {stmt("z = frobnicate(x)"),
       "t.kg:4:7: error: unknown op 'frobnicate'; docs/ops.md lists the ops"},
      {stmt("z = linear(x, w, foo=y)"),
       "t.kg:4:20: error: 'foo' is not an operand of linear (operands: input, "
       "weight, bias)"},
      {stmt("z = linear(x, w, foo=1)"),
       "t.kg:4:20: error: linear has no attribute 'foo'; it takes none"},
      {stmt("z = linear(x, weight=w, y)"),
       "t.kg:4:27: error: positional operand after the keyword argument "
       "'weight'; put positional operands first"},
      {stmt("z = linear(x, weight=w, weight=w)"),
       "t.kg:4:27: error: operand 'weight' of linear is given twice"},
      {stmt("z = linear(x, w, input=x)"),
       "t.kg:4:20: error: operand 'input' of linear is given twice (it is "
       "positional operand 1)"},
      {stmt("z = relu(x, x)"), "t.kg:4:15: error: relu takes at most 1 operand "
                               "(input); this is one too many"},
      {stmt("z = linear(x)"),
       "t.kg:4:7: error: linear is missing its operand 'weight'"},
      {stmt("z = gelu(x, approximate=tanh)"),
       "t.kg:4:27: error: attribute 'approximate' of gelu is a string; write "
       "it in quotes: \"tanh\""},
      {stmt("z = min(x, dim=1.5)"),
       "t.kg:4:14: error: min: attribute 'dim' must be int list, got 1.5"},
      {stmt("z = min(x, dim=[1, 2.0])"),
       "t.kg:4:22: error: expected an integer, got the float 2.0"},
      {stmt("z = min(x, dim=[1 2])"), "t.kg:4:21: error: expected ',' or ']' "
                                      "in the list opened at 4:18, got '2'"},
      {stmt("z = relu(1.0)"), "t.kg:4:7: error: relu: operand 'input' must be "
                              "a tensor, not the number 1.0"},
      {stmt(deep), "t.kg:4:1007: error: calls nest more than 200 deep; name "
                   "some intermediate values"},
      // Shapes, through the graph.
      {stmt("z = linear(v, w)"),
       "t.kg:4:7: error: linear: input 'v' [3, 4] has 4 features in its last "
       "dim, but weight 'w' [8, 8] expects 8; weight is [out_features, "
       "in_features] as in torch.nn.Linear"},
      {stmt("param u: f32[5, 4]\n  z = add(v, u)"),
       "t.kg:5:7: error: add: cannot broadcast [3, 4] with [5, 4]: dimension 0 "
       "is 3 in one and 5 in the other (each pair of dims, aligned on the "
       "right, must be equal or 1)"},
      // An attribute's value that the operands rule out: at the attribute.
      {stmt("z = min(x, dim=2)"), "t.kg:4:14: error: min: dim 2 is out of "
                                  "range for 'x' [N, 8] (valid: -2 to 1)"},
      {stmt("z = clamp(x, min=2, max=1)"),
       "t.kg:4:23: error: clamp: min 2.0 is greater than max 1.0"},
      {stmt("z = group_norm(x, groups=3)"),
       "t.kg:4:21: error: group_norm: 8 channels of 'x' [N, 8] do not split "
       "into 3 groups; groups must divide the channel count"},
      {stmt("param p: f32[2147483648]"),
       "t.kg:4:16: error: dim 2147483648 is too large; a dim is at most "
       "2147483647"},
      {stmt("z = min(x, dim=[-2147483648])"),
       "t.kg:4:19: error: integer attribute -2147483648 is out of range; it "
       "must lie within -2147483647 to 2147483647"},
      {stmt("z = group_norm(x, groups=4294967296)"),
       "t.kg:4:28: error: integer attribute 4294967296 is out of range; it "
       "must lie within -2147483647 to 2147483647"},
      // Outputs.
      {kHead + "  return 1.0\n}\n",
       "t.kg:4:10: error: a graph output must be a tensor, not the number 1.0"},
      {kHead + "  return y, y\n}\n", "t.kg:4:13: error: 'y' is returned twice"},
  };
}

} // namespace

TEST(ParserErrors, Golden) {
  for (const ErrorCase &c : cases()) {
    SCOPED_TRACE(c.source);
    EXPECT_EQ(parseError(c.source), c.message);
  }
}
