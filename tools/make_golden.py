#!/usr/bin/env python3
"""Generate Kiln's golden test cases: small .kg graphs whose expected outputs
come from PyTorch in float64.

Each case NAME is written as NAME.kg (the graph text) and NAME.safetensors
(every graph input and param in its declared dtype, `expected.<out>` as F64,
and metadata `torch_dtype.<out>` and `description`).  See
tests/data/golden/README.md for the format.

The graph text is the single source of truth: this script parses it with a
small .kg reader and evaluates it op by op with torch functional ops, once on
the float64 upcast of the stored inputs/params (-> expected values) and once
on the original dtypes (-> torch_dtype).

Usage:
  python3 tools/make_golden.py --check            # parse/validate only, no torch
  python3 tools/make_golden.py --out DIR          # needs torch + safetensors
  python3 tools/make_golden.py --out DIR --only gn_2d,mm_1d_1d

Deterministic: each case seeds torch with crc32 of its name; one CPU thread.
"""
import argparse
import json
import math
import os
import re
import struct
import sys
import traceback
import zlib

# ---------------------------------------------------------------------------
# .kg reader (docs/format.md)
# ---------------------------------------------------------------------------

TOKEN_RE = re.compile(r"""
    (?P<ws>\s+|\#[^\n]*)
  | (?P<float>(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+)
  | (?P<int>[0-9]+)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*|%[A-Za-z0-9_]+)
  | (?P<string>"(?:[^"\\]|\\.)*")
  | (?P<punct>[(){}\[\],:=;-])
""", re.VERBOSE)

DTYPES = {"f32", "f16", "bf16", "f64", "i64", "bool"}

# op -> (operand names, {attr: default}); aliases map to canonical names.
UNARY = ["neg", "abs", "exp", "log", "sqrt", "rsqrt", "relu", "leaky_relu",
         "sigmoid", "tanh", "swish", "gelu", "hardtanh", "clamp", "hardswish",
         "mish", "softplus"]
BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "pow"]
REDUCTIONS = ["min", "max", "sum", "mean", "logsumexp"]
ALIASES = {"amin": "min", "amax": "max", "silu": "swish"}
_UNARY_ATTRS = {
    "leaky_relu": {"negative_slope": 0.01},
    "gelu": {"approximate": "none"},
    "hardtanh": {"min_val": -1.0, "max_val": 1.0},
    "clamp": {"min": None, "max": None},
    "softplus": {"beta": 1.0, "threshold": 20.0},
}
_CONV_ATTRS = {"stride": [1, 1], "padding": [0, 0], "dilation": [1, 1],
               "groups": 1}
OPS = {}
for _o in UNARY:
    OPS[_o] = (["input"], dict(_UNARY_ATTRS.get(_o, {})))
for _o in BINARY:
    OPS[_o] = (["input", "other"], {})
for _o in REDUCTIONS:
    OPS[_o] = (["input"], {"dim": None, "keepdim": False})
OPS["linear"] = (["input", "weight", "bias"], {})
OPS["matmul"] = (["input", "other"], {})
OPS["conv2d"] = (["input", "weight", "bias"], dict(_CONV_ATTRS))
OPS["conv_transpose2d"] = (["input", "weight", "bias"],
                           dict(_CONV_ATTRS, output_padding=[0, 0]))
OPS["group_norm"] = (["input", "weight", "bias"], {"groups": None, "eps": 1e-5})
LIST_ATTRS = {"dim", "stride", "padding", "dilation", "output_padding"}
PAIR_ATTRS = {"stride", "padding", "dilation", "output_padding"}


class KgError(Exception):
    pass


def tokenize(text):
    toks, pos = [], 0
    while pos < len(text):
        m = TOKEN_RE.match(text, pos)
        if not m:
            raise KgError("bad character at %r" % text[pos:pos + 20])
        pos = m.end()
        kind = m.lastgroup
        if kind == "ws":
            continue
        toks.append((kind, m.group(kind)))
    toks.append(("eof", ""))
    return toks


class Parser:
    """Parses one graph into a dict; expressions are tuples:
    ('name', n) | ('num', value, is_float) | ('call', op, [operand exprs],
    {attr: value})."""

    def __init__(self, text):
        self.toks = tokenize(text)
        self.i = 0
        self.anon = 0

    def peek(self, k=0):
        return self.toks[self.i + k]

    def next(self):
        t = self.toks[self.i]
        self.i += 1
        return t

    def expect(self, kind, val=None):
        t = self.next()
        if t[0] != kind or (val is not None and t[1] != val):
            raise KgError("expected %s %r, got %r" % (kind, val, t))
        return t[1]

    def accept(self, kind, val=None):
        t = self.peek()
        if t[0] == kind and (val is None or t[1] == val):
            self.i += 1
            return True
        return False

    def parse_type(self):
        dt = self.expect("name")
        if dt not in DTYPES:
            raise KgError("unknown dtype %r" % dt)
        self.expect("punct", "[")
        dims = []
        while not self.accept("punct", "]"):
            t = self.next()
            if t[0] == "int":
                dims.append(int(t[1]))
            elif t[0] == "name":
                dims.append(t[1])
            else:
                raise KgError("bad dim %r" % (t,))
            if not self.accept("punct", ","):
                self.expect("punct", "]")
                break
        return (dt, dims)

    def parse_number(self):
        neg = self.accept("punct", "-")
        t = self.next()
        if t[0] == "int":
            v, isf = int(t[1]), False
        elif t[0] == "float":
            v, isf = float(t[1]), True
        elif t[0] == "name" and t[1] in ("inf", "nan"):
            v, isf = float(t[1]), True
        else:
            raise KgError("expected a number, got %r" % (t,))
        return (-v if neg else v), isf

    def is_number_start(self):
        t = self.peek()
        return (t[0] in ("int", "float") or (t[0] == "punct" and t[1] == "-")
                or (t[0] == "name" and t[1] in ("inf", "nan")))

    def parse_attr(self):
        t = self.peek()
        if t[0] == "name" and t[1] in ("true", "false"):
            self.next()
            return t[1] == "true"
        if t[0] == "string":
            self.next()
            return bytes(t[1][1:-1], "utf-8").decode("unicode_escape")
        if t[0] == "punct" and t[1] == "[":
            self.next()
            vals = []
            while not self.accept("punct", "]"):
                v, isf = self.parse_number()
                if isf:
                    raise KgError("list attributes hold integers")
                vals.append(v)
                if not self.accept("punct", ","):
                    self.expect("punct", "]")
                    break
            return vals
        v, _ = self.parse_number()
        return v

    def parse_expr(self):
        if self.is_number_start():
            v, isf = self.parse_number()
            return ("num", v, isf)
        name = self.expect("name")
        if not self.accept("punct", "("):
            return ("name", name)
        op = ALIASES.get(name, name)
        if op not in OPS:
            raise KgError("unknown op %r" % name)
        opnames, attr_defaults = OPS[op]
        positional, keyword, attrs = [], {}, {}
        while not self.accept("punct", ")"):
            t0, t1 = self.peek(), self.peek(1)
            if t0[0] == "name" and t1 == ("punct", "="):
                self.next()
                self.next()
                key = t0[1]
                if key in opnames:
                    keyword[key] = self.parse_expr()
                else:
                    if key not in attr_defaults:
                        raise KgError("op %s has no attribute %r" % (op, key))
                    attrs[key] = self.parse_attr()
            else:
                if keyword or attrs:
                    raise KgError("positional operand after keyword in %s" % op)
                positional.append(self.parse_expr())
            if not self.accept("punct", ","):
                self.expect("punct", ")")
                break
        if len(positional) > len(opnames):
            raise KgError("too many operands for %s" % op)
        operands = positional + [None] * (len(opnames) - len(positional))
        for k, v in keyword.items():
            idx = opnames.index(k)
            if operands[idx] is not None:
                raise KgError("operand %s given twice" % k)
            operands[idx] = v
        required = 2 if op in ("linear", "conv2d", "conv_transpose2d") else \
            (1 if op == "group_norm" else len(opnames))
        if any(o is None for o in operands[:required]):
            raise KgError("missing operand for %s" % op)
        full = dict(attr_defaults)
        full.update(attrs)
        for k in PAIR_ATTRS:
            if k in full and isinstance(full[k], int):
                full[k] = [full[k], full[k]]
        if "dim" in full and isinstance(full["dim"], int):
            full["dim"] = [full["dim"]]
        if op == "group_norm" and full["groups"] is None:
            raise KgError("group_norm needs groups=")
        if op == "clamp" and full["min"] is None and full["max"] is None:
            raise KgError("clamp needs min or max")
        return ("call", op, operands, full)

    def parse(self):
        self.expect("name", "graph")
        gname = self.expect("name")
        self.expect("punct", "(")
        inputs = []
        while not self.accept("punct", ")"):
            n = self.expect("name")
            self.expect("punct", ":")
            inputs.append((n, self.parse_type()))
            if not self.accept("punct", ","):
                self.expect("punct", ")")
                break
        self.expect("punct", "{")
        params, stmts, returns = [], [], None
        while not self.accept("punct", "}"):
            if returns is not None:
                raise KgError("return must be the last statement")
            t = self.next()
            if t == ("name", "param"):
                n = self.expect("name")
                self.expect("punct", ":")
                ty = self.parse_type()
                if self.accept("punct", "="):  # initialiser: skipped
                    init = self.expect("name")
                    if init not in ("zeros", "ones", "full", "randn",
                                    "uniform"):
                        raise KgError("unknown initialiser %r" % init)
                    if self.accept("punct", "("):
                        while not self.accept("punct", ")"):
                            if self.next()[0] == "eof":
                                raise KgError("unterminated initialiser")
                params.append((n, ty))
            elif t == ("name", "return"):
                returns = [self.parse_expr()]
                while self.accept("punct", ","):
                    returns.append(self.parse_expr())
            elif t[0] == "name":
                n = t[1]
                ty = None
                if self.accept("punct", ":"):
                    ty = self.parse_type()
                self.expect("punct", "=")
                stmts.append((n, ty, self.parse_expr()))
            else:
                raise KgError("unexpected %r" % (t,))
            self.accept("punct", ";")
        self.expect("eof")
        if returns is None:
            raise KgError("no return")
        # Names: SSA, defined before use.
        defined = set()
        for n, _ in inputs + params:
            if n in defined:
                raise KgError("%s defined twice" % n)
            defined.add(n)

        def uses(e):
            if e is None:
                return
            if e[0] == "name":
                if e[1] not in defined:
                    raise KgError("%s used before definition" % e[1])
            elif e[0] == "call":
                for o in e[2]:
                    uses(o)
        for n, _, e in stmts:
            uses(e)
            if n in defined:
                raise KgError("%s assigned twice" % n)
            defined.add(n)
        for r in returns:
            if r[0] != "name":
                raise KgError("golden cases return names only")
            uses(r)
        if len(set(r[1] for r in returns)) != len(returns):
            raise KgError("a value is returned twice")
        return {"name": gname, "inputs": inputs, "params": params,
                "stmts": stmts, "returns": [r[1] for r in returns]}


def parse_kg(text):
    return Parser(text).parse()


# ---------------------------------------------------------------------------
# Evaluation with torch
# ---------------------------------------------------------------------------

torch = None
F = None


def _import_torch():
    global torch, F
    import torch as _t
    import torch.nn.functional as _F
    torch, F = _t, _F
    torch.set_num_threads(1)


TORCH_DTYPE = {"f32": "float32", "f16": "float16", "bf16": "bfloat16",
               "f64": "float64", "i64": "int64", "bool": "bool"}


def _all_dims(x, dims):
    if not dims:
        return list(range(x.dim()))
    return list(dims)


def _minmax_operand(v, other):
    """torch.maximum/minimum take no Python numbers; a literal becomes a
    0-dim tensor of the dtype PyTorch gives tensor-op-scalar
    (torch.result_type), which is what a wrapped Python scalar does."""
    if isinstance(v, (int, float)):
        return torch.tensor(v, dtype=torch.result_type(other, v))
    return v


def apply_op(op, ops, at):
    if op in BINARY:
        a, b = ops
        if not torch.is_tensor(a) and not torch.is_tensor(b):
            raise KgError("binary op of two literals")
        if op == "add":
            return a + b
        if op == "sub":
            return a - b
        if op == "mul":
            return a * b
        if op == "div":
            return a / b
        if op == "pow":
            return a ** b
        ta = _minmax_operand(a, b)
        tb = _minmax_operand(b, a)
        return torch.maximum(ta, tb) if op == "maximum" else \
            torch.minimum(ta, tb)
    x = ops[0]
    if op == "neg":
        return torch.neg(x)
    if op == "abs":
        return torch.abs(x)
    if op == "exp":
        return torch.exp(x)
    if op == "log":
        return torch.log(x)
    if op == "sqrt":
        return torch.sqrt(x)
    if op == "rsqrt":
        return torch.rsqrt(x)
    if op == "relu":
        return torch.relu(x)
    if op == "leaky_relu":
        return F.leaky_relu(x, at["negative_slope"])
    if op == "sigmoid":
        return torch.sigmoid(x)
    if op == "tanh":
        return torch.tanh(x)
    if op == "swish":
        return F.silu(x)
    if op == "gelu":
        return F.gelu(x, approximate=at["approximate"])
    if op == "hardtanh":
        return F.hardtanh(x, at["min_val"], at["max_val"])
    if op == "clamp":
        return torch.clamp(x, min=at["min"], max=at["max"])
    if op == "hardswish":
        return F.hardswish(x)
    if op == "mish":
        return F.mish(x)
    if op == "softplus":
        return F.softplus(x, beta=at["beta"], threshold=at["threshold"])
    if op in REDUCTIONS:
        dims = _all_dims(x, at["dim"])
        k = at["keepdim"]
        if op == "min":
            return torch.amin(x, dim=dims, keepdim=k)
        if op == "max":
            return torch.amax(x, dim=dims, keepdim=k)
        if op == "sum":
            return torch.sum(x, dim=dims, keepdim=k)
        if op == "mean":
            return torch.mean(x, dim=dims, keepdim=k)
        return torch.logsumexp(x, dim=dims, keepdim=k)
    if op == "linear":
        return F.linear(x, ops[1], ops[2])
    if op == "matmul":
        return torch.matmul(x, ops[1])
    if op == "conv2d":
        return F.conv2d(x, ops[1], ops[2], stride=at["stride"],
                        padding=at["padding"], dilation=at["dilation"],
                        groups=at["groups"])
    if op == "conv_transpose2d":
        return F.conv_transpose2d(x, ops[1], ops[2], stride=at["stride"],
                                  padding=at["padding"],
                                  output_padding=at["output_padding"],
                                  groups=at["groups"],
                                  dilation=at["dilation"])
    if op == "group_norm":
        return F.group_norm(x, at["groups"], ops[1], ops[2], eps=at["eps"])
    raise KgError("no evaluator for %s" % op)


def evaluate(graph, env):
    env = dict(env)

    def ev(e):
        if e is None:
            return None
        if e[0] == "name":
            return env[e[1]]
        if e[0] == "num":
            return e[1]
        return apply_op(e[1], [ev(o) for o in e[2]], e[3])
    for n, _, e in graph["stmts"]:
        env[n] = ev(e)
    return {r: env[r] for r in graph["returns"]}


# ---------------------------------------------------------------------------
# Data helpers (closures: torch is only touched at generation time).
# Each returns f(shape) -> float64 (or int64/bool) tensor; the generator casts
# it to the declared dtype.
# ---------------------------------------------------------------------------

def N(scale=1.0, offset=0.0):
    return lambda s: torch.randn(s, dtype=torch.float64) * scale + offset


def U(lo, hi):
    return lambda s: torch.rand(s, dtype=torch.float64) * (hi - lo) + lo


def INT(lo, hi):  # inclusive lo, exclusive hi
    return lambda s: torch.randint(lo, hi, s, dtype=torch.int64)


def BOOL():
    return lambda s: torch.rand(s) > 0.5


def VALS(vals):
    """Exact values, reshaped to the declared shape (numel must match)."""
    def f(s):
        return torch.tensor(vals, dtype=torch.float64).reshape(s)
    return f


def WITH(base, *puts):
    """base data with some elements overwritten: puts are (index, value)."""
    def f(s):
        t = base(s)
        for idx, v in puts:
            t[idx] = v
        return t
    return f


def SLICES(base, dim, slices):
    """Overwrites whole slices along `dim`: slices is {i: value}."""
    def f(s):
        t = base(s)
        for i, v in slices.items():
            t.select(dim, i).fill_(v)
        return t
    return f


NAN, INF = float("nan"), float("inf")

SPECIAL = [NAN, INF, -INF, 0.0, -0.0, 1e-30, -1e-30, 1.0, -1.0, 0.5, -0.5,
           2.0, -2.0, 3.0, -3.0, 10.0, -10.0, 20.0, -20.0, 88.0, 89.0,
           -88.0, -104.0, 1e10, -1e10, 1e30, -1e30, 1e-8, 0.7071, -6.5]

HARDSWISH_EDGES = [-3.0 - 1e-9, -3.0, -3.0 + 1e-9, -2.9999, -3.0001,
                   3.0 - 1e-9, 3.0, 3.0 + 1e-9, 2.9999, 3.0001,
                   0.0, -0.0, 1.5, -1.5, -4.0, 4.0, NAN, INF, -INF, 1e-7,
                   -1e-7]

SOFTPLUS_EDGES = [19.9999, 20.0 - 1e-9, 20.0, 20.0 + 1e-9, 20.0001, 25.0,
                  2.4999, 2.5 - 1e-9, 2.5, 2.5 + 1e-9, 2.5001, 5.0, 10.0,
                  -50.0, -800.0, 0.0, -0.0, 1e-9, NAN, INF, -INF, 700.0,
                  -20.0, 0.25]


# ---------------------------------------------------------------------------
# The cases
# ---------------------------------------------------------------------------

CASES = []


def case(name, kg, desc, data=None, dims=None, module=None):
    CASES.append({"name": name, "kg": kg.strip() + "\n", "desc": desc,
                  "data": data or {}, "dims": dims or {}, "module": module})


def simple(name, sig, body, ret, desc, data=None, dims=None):
    """Shorthand: graph NAME(sig) { body; return ret }."""
    lines = ["graph %s(%s) {" % (name, sig)]
    for ln in body.strip().split("\n"):
        lines.append("  " + ln.strip())
    lines.append("  return %s" % ret)
    lines.append("}")
    if data:  # shared data dicts may name tensors this graph does not have
        declared = set(re.findall(r"([A-Za-z_][A-Za-z0-9_]*)\s*:", sig))
        data = {k: v for k, v in data.items() if k in declared}
    case(name, "\n".join(lines), desc, data, dims)


# --- Unary ops at random values -------------------------------------------
simple("unary_math", "x: f32[3, 5, 7]",
       "a = neg(x)\nb = abs(x)\nc = relu(x)\nd = exp(x)\ne = sigmoid(x)\n"
       "f = tanh(x)",
       "a, b, c, d, e, f", "neg/abs/relu/exp/sigmoid/tanh on x ~ N(0, 3^2) (f32)",
       data={"x": N(3.0)})
simple("unary_positive", "x: f32[3, 5, 7]",
       "a = log(x)\nb = sqrt(x)\nc = rsqrt(x)",
       "a, b, c", "log/sqrt/rsqrt on x ~ U(0.01, 5) (f32)",
       data={"x": U(0.01, 5.0)})
simple("unary_act", "x: f32[3, 5, 7]",
       "a = leaky_relu(x)\nb = swish(x)\nc = gelu(x)\n"
       'd = gelu(x, approximate="tanh")\ne = gelu(x, approximate="none")\n'
       "f = hardtanh(x)\ng = hardswish(x)\nh = mish(x)\ni = softplus(x)\n"
       "j = silu(x)\nk = clamp(x, min=-0.5, max=1.25)",
       "a, b, c, d, e, f, g, h, i, j, k",
       "activations with default attributes on x ~ N(0, 3^2) (f32); "
       "gelu erf and tanh; silu alias",
       data={"x": N(3.0)})
simple("unary_attrs", "x: f32[5, 9]",
       "a = clamp(x, min=-0.5, max=1.25)\nb = clamp(x, min=-0.25)\n"
       "c = clamp(x, max=0.75)\nd = clamp(x, min=0)\n"
       "e = leaky_relu(x, negative_slope=0.2)\n"
       "f = leaky_relu(x, negative_slope=-0.3)\n"
       "g = leaky_relu(x, negative_slope=1.5)\n"
       "h = softplus(x, beta=2, threshold=5)\n"
       "i = softplus(x, beta=0.5, threshold=1.0)\n"
       "j = hardtanh(x, min_val=-0.5, max_val=2.0)\n"
       "k = hardtanh(x, min_val=0, max_val=0.25)",
       "a, b, c, d, e, f, g, h, i, j, k",
       "non-default attributes: clamp both/only min/only max/int bound, "
       "leaky_relu slopes 0.2 -0.3 1.5, softplus beta/threshold, hardtanh bounds",
       data={"x": N(3.0)})

_n = len(SPECIAL)
simple("special_values", "x: f32[%d]" % _n,
       "a = neg(x)\nb = abs(x)\nc = exp(x)\nd = log(x)\ne = sqrt(x)\n"
       "f = rsqrt(x)\ng = relu(x)\nh = sigmoid(x)\ni = tanh(x)\n"
       "j = leaky_relu(x)\nk = swish(x)\nl = gelu(x)\n"
       'm = gelu(x, approximate="tanh")\nn = hardtanh(x)\n'
       "o = clamp(x, min=-1.5, max=2.5)\np = mish(x)\nq = softplus(x)\n"
       "r = hardswish(x)",
       "a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q, r",
       "every unary op on NaN, +-inf, +-0, tiny, huge, f32 exp overflow",
       data={"x": VALS(SPECIAL)})
simple("special_f64", "x: f64[%d]" % _n,
       "a = exp(x)\nb = log(x)\nc = sigmoid(x)\nd = mish(x)\ne = softplus(x)\n"
       "f = gelu(x)\ng = swish(x)\nh = rsqrt(x)",
       "a, b, c, d, e, f, g, h",
       "unary ops on special values with f64 inputs (f64 output)",
       data={"x": VALS(SPECIAL)})
simple("special_hardswish_edges",
       "x: f64[%d], xf: f32[%d]" % (len(HARDSWISH_EDGES), len(HARDSWISH_EDGES)),
       "a = hardswish(x)\nb = hardtanh(x, min_val=-3, max_val=3)\n"
       "c = relu(x)\nd = hardswish(xf)",
       "a, b, c, d", "hardswish around its kinks at -3 and +3 (f64 and f32 inputs)",
       data={"x": VALS(HARDSWISH_EDGES), "xf": VALS(HARDSWISH_EDGES)})
simple("special_softplus_threshold", "x: f64[%d]" % len(SOFTPLUS_EDGES),
       "a = softplus(x)\nb = softplus(x, beta=2, threshold=5)\n"
       "c = softplus(x, beta=-1)",
       "a, b, c",
       "softplus around beta*x == threshold (20 and 2*2.5 == 5), negative "
       "beta, huge negative inputs (f64)",
       data={"x": VALS(SOFTPLUS_EDGES)})
simple("unary_i64", "x: i64[4, 6]",
       "a = neg(x)\nb = abs(x)\nc = relu(x)\nd = exp(x)\ne = sigmoid(x)\n"
       "f = tanh(x)\ng = sqrt(x)\nh = log(x)\ni = rsqrt(x)",
       "a, b, c, d, e, f, g, h, i",
       "unary ops on i64: neg/abs/relu keep i64, the others promote",
       data={"x": INT(-5, 7)})
simple("unary_f16", "x: f16[5, 7]",
       'a = gelu(x)\nb = exp(x)\nc = tanh(x)\nd = swish(x)\ne = softplus(x)\n'
       'f = hardswish(x)\ng = abs(x)',
       "a, b, c, d, e, f, g", "unary ops on f16 inputs (f16 outputs)",
       data={"x": N(3.0)})
simple("unary_bf16", "x: bf16[5, 7]",
       'a = gelu(x, approximate="tanh")\nb = mish(x)\nc = sigmoid(x)\n'
       'd = leaky_relu(x, negative_slope=0.1)\ne = clamp(x, min=-1, max=2)',
       "a, b, c, d, e", "unary ops on bf16 inputs (bf16 outputs)",
       data={"x": N(3.0)})

# --- Binary ops ------------------------------------------------------------
_ALLB = "\n".join("%s_ = %s(a, b)" % (o, o) for o in BINARY)
_ALLB_RET = ", ".join("%s_" % o for o in BINARY)
simple("binary_same_shape", "a: f32[5, 7], b: f32[5, 7]", _ALLB, _ALLB_RET,
       "every binary op on equal shapes (a > 0 so pow is real)",
       data={"a": U(0.1, 3.0), "b": N(1.5)})
simple("binary_bcast_3x1_1x4x1x1", "a: f32[3, 1], b: f32[1, 4, 1, 1]",
       _ALLB, _ALLB_RET,
       "every binary op broadcasting [3,1] with [1,4,1,1] -> [1,4,3,1]",
       data={"a": U(0.1, 3.0), "b": N(1.5)})
simple("binary_bcast_7x1_1x5x1x1", "a: f32[7, 1], b: f32[1, 5, 1, 1]",
       _ALLB, _ALLB_RET,
       "every binary op broadcasting [7,1] with [1,5,1,1] -> [1,5,7,1]",
       data={"a": U(0.1, 3.0), "b": N(1.5)})
simple("binary_bcast_middle", "a: f32[2, 1, 6], b: f32[5, 1]",
       _ALLB, _ALLB_RET,
       "every binary op broadcasting [2,1,6] with [5,1] -> [2,5,6]",
       data={"a": U(0.1, 3.0), "b": N(1.5)})
simple("binary_rank0", "x: f32[4, 3], s: f32[], t: f32[]",
       "a = add(x, s)\nb = mul(s, x)\nc = div(s, x)\nd = pow(x, s)\n"
       "e = sub(s, x)\nf = maximum(s, x)\ng = minimum(x, s)\n"
       "h = add(s, t)\ni = pow(s, t)\nj = div(s, t)",
       "a, b, c, d, e, f, g, h, i, j",
       "binary ops with a rank-0 tensor on either side, and of two rank-0 "
       "tensors (rank-0 outputs)",
       data={"x": U(0.1, 3.0), "s": VALS(1.75), "t": VALS(-0.75)})
simple("literal_left", "x: f32[4, 7]",
       "a = sub(1.0, x)\nb = div(2, x)\nc = pow(2.0, x)\nd = mul(-0.5, x)\n"
       "e = add(3, x)\nf = maximum(0.0, x)\ng = minimum(1.5, x)",
       "a, b, c, d, e, f, g", "number literals as the first operand",
       data={"x": N(2.0)})
simple("literal_right", "x: f32[4, 7]",
       "a = add(x, 1)\nb = sub(x, 2.5)\nc = mul(x, -3)\nd = div(x, 4)\n"
       "e = pow(x, 2)\nf = pow(x, 0.5)\ng = pow(x, -1.0)\nh = maximum(x, 0.25)\n"
       "i = minimum(x, -0.25)\nj = pow(x, 3)",
       "a, b, c, d, e, f, g, h, i, j",
       "number literals as the second operand (pow(x, 0.5) of negatives is NaN)",
       data={"x": N(2.0)})
simple("literal_special", "x: f32[9]",
       "a = div(x, 0.0)\nb = mul(x, inf)\nc = add(x, nan)\nd = pow(x, 0)\n"
       "e = pow(0.0, x)\nf = maximum(x, nan)\ng = sub(x, -inf)\nh = div(0, x)",
       "a, b, c, d, e, f, g, h",
       "literals inf, nan, 0 and 0.0 (x holds 0, -0.0 and +-inf)",
       data={"x": VALS([0.0, -0.0, 1.0, -2.0, INF, -INF, NAN, 0.5, -3.0])})
simple("binary_nan_propagation", "a: f32[4, 5], b: f32[4, 5]",
       "mx = maximum(a, b)\nmn = minimum(a, b)\ns = add(a, b)",
       "mx, mn, s",
       "maximum/minimum propagate NaN from either side; +-inf and +-0",
       data={"a": WITH(N(), ((0, 0), NAN), ((1, 2), NAN), ((2, 3), INF),
                       ((3, 1), 0.0), ((3, 2), -0.0), ((2, 0), -INF)),
             "b": WITH(N(), ((0, 1), NAN), ((1, 2), NAN), ((2, 3), -INF),
                       ((3, 1), -0.0), ((3, 2), 0.0), ((2, 0), NAN))})

# --- dtype promotion ---------------------------------------------------------
simple("promote_i64_float_literal", "i: i64[3, 5]",
       "a = add(i, 2.5)\nb = mul(i, 0.5)\nc = sub(1.5, i)\nd = pow(2.0, i)\n"
       "e = maximum(i, 0.5)\nf = div(i, 2)",
       "a, b, c, d, e, f",
       "i64 tensor with float literals -> f32; div(i64, int) -> f32",
       data={"i": INT(-4, 6)})
simple("promote_i64_i64", "i: i64[3, 5], j: i64[3, 5]",
       "a = add(i, j)\nb = sub(i, j)\nc = mul(i, j)\nd = div(i, j)\n"
       "e = maximum(i, j)\nf = minimum(i, j)\ng = pow(i, 2)\nh = add(i, 3)\n"
       "k = pow(i, j)",
       "a, b, c, d, e, f, g, h, k",
       "i64 op i64 stays i64 except true division -> f32; j in [1, 4)",
       data={"i": INT(-4, 6), "j": INT(1, 4)})
simple("promote_mixed_tensors",
       "i: i64[3, 4], x: f32[3, 4], h: f16[3, 4], g: bf16[3, 4], d: f64[3, 4]",
       "a = add(i, x)\nb = mul(h, x)\nc = add(h, g)\ne = sub(x, d)\n"
       "f = add(h, h)\nk = mul(g, 0.5)\nm = div(i, h)",
       "a, b, c, e, f, k, m",
       "tensor-tensor promotion: i64+f32, f16*f32, f16+bf16 (-> f32), "
       "f32-f64, f16+f16, bf16*literal, i64/f16",
       data={"i": INT(-5, 6), "x": N(), "h": N(), "g": N(), "d": N()})
simple("promote_rank0",
       "x: f32[3, 4], i: i64[3, 4], h: f16[3, 4], sd: f64[], si: i64[], sf: f32[]",
       "a = add(x, sd)\nb = add(i, sd)\nc = mul(x, si)\ne = add(h, sf)\n"
       "f = add(i, si)\ng = div(si, i)",
       "a, b, c, e, f, g",
       "rank-0 tensors only widen across categories: f32+f64[] -> f32, "
       "i64+f64[] -> f64, f16+f32[] -> f16",
       data={"x": N(), "i": INT(1, 6), "h": N(), "sd": VALS(1.25),
             "si": lambda s: torch.tensor(3, dtype=torch.int64),
             "sf": VALS(-0.5)})
simple("promote_bool", "b: bool[3, 5], i: i64[3, 5], x: f32[3, 5]",
       "a = add(b, i)\nc = mul(b, x)\nd = sum(b)\ne = sum(b, dim=1)\n"
       "f = maximum(b, x)",
       "a, c, d, e, f", "bool with i64 -> i64, bool with f32 -> f32, sum of bool -> i64",
       data={"b": BOOL(), "i": INT(-4, 5), "x": N()})
simple("promote_i64_reductions", "i: i64[4, 5, 3]",
       "a = sum(i)\nb = sum(i, dim=[0, 2])\nc = min(i, dim=1)\n"
       "d = max(i, dim=-1, keepdim=true)",
       "a, b, c, d", "reductions of i64: sum -> i64, min/max -> i64",
       data={"i": INT(-6, 7)})
simple("promote_i64_logsumexp", "i: i64[4, 5]",
       "a = logsumexp(i, dim=1)\nb = logsumexp(i)", "a, b",
       "logsumexp of i64 promotes to the default float dtype",
       data={"i": INT(-6, 7)})
simple("half_binary_reduce", "h: f16[5, 7], g: bf16[5, 7]",
       "a = add(h, h)\nb = mul(g, g)\nc = sum(h, dim=1)\nd = mean(g, dim=0)\n"
       "e = logsumexp(h, dim=1)\nf = max(g)",
       "a, b, c, d, e, f", "f16/bf16 binary ops and reductions keep their dtype",
       data={"h": N(), "g": N()})

# --- reductions -------------------------------------------------------------
_R = ["min", "max", "sum", "mean", "logsumexp"]


def _reds(variants):
    body, ret = [], []
    for i, args in enumerate(variants):
        ops = _R
        if isinstance(args, tuple):
            args, ops = args
        for r in ops:
            v = "%s%d" % (r, i)
            body.append("%s = %s(x%s)" % (v, r, args))
            ret.append(v)
    return "\n".join(body), ", ".join(ret)


for _nm, _sig, _variants, _desc in [
        ("reduce_dim1", "x: f32[3, 5, 7]", [", dim=1", ", dim=1, keepdim=true"],
         "dim 1, keepdim false and true"),
        ("reduce_dims_0_2", "x: f32[3, 5, 7]", [", dim=[0, 2]"], "dims [0, 2]"),
        ("reduce_dims_keepdim", "x: f32[2, 3, 5, 7]",
         [", dim=[1, 3], keepdim=true"], "dims [1, 3] of 4-D, keepdim"),
        ("reduce_neg_dims", "x: f32[3, 5, 7]",
         [", dim=-1", ", dim=[-1, -3], keepdim=true"],
         "dim -1, and dims [-1, -3] keepdim"),
        ("reduce_unsorted_dims", "x: f32[2, 3, 5, 7]", [", dim=[3, 0, -3]"],
         "unsorted mixed-sign dims [3, 0, -3]"),
        ("reduce_all", "x: f32[3, 5, 7]",
         # torch.logsumexp refuses dim=[] ("output with shape [] doesn't
         # match the broadcast shape"), so that variant leaves it out.
         ["", ", keepdim=true", (", dim=[]", _R[:4]), ", dim=[0, 1, 2]"],
         "all dims: no dim, no dim keepdim, dim=[] (not logsumexp), every "
         "dim listed"),
        ("reduce_1d", "x: f32[11]", [", dim=0"], "a 1-D input, dim 0"),
]:
    _b, _r = _reds(_variants)
    simple(_nm, _sig, _b, _r, "min/max/sum/mean/logsumexp over " + _desc,
           data={"x": N(2.0)})

simple("reduce_minmax_nan", "x: f32[4, 5, 3]",
       "a = min(x, dim=1)\nb = max(x, dim=1)\nc = min(x)\nd = max(x, dim=[0, 2])\n"
       "e = sum(x, dim=1)",
       "a, b, c, d, e",
       "min/max with NaN in some slices (NaN wins), inf in others",
       data={"x": WITH(N(), ((0, 2, 1), NAN), ((2, 0, 0), NAN),
                       ((2, 4, 0), NAN), ((1, 1, 2), INF),
                       ((3, 3, 1), -INF))})
simple("reduce_logsumexp_special", "x: f32[6, 5]",
       "a = logsumexp(x, dim=1)\nb = logsumexp(x, dim=1, keepdim=true)\n"
       "c = sum(x, dim=1)\nd = mean(x, dim=1)\ne = max(x, dim=1)",
       "a, b, c, d, e",
       "rows: +inf inside, all -inf, NaN inside, huge (1e4) values, "
       "-inf mixed with finite, +inf and -inf together",
       data={"x": VALS([
           [0.5, INF, -1.0, 2.0, 0.0],
           [-INF, -INF, -INF, -INF, -INF],
           [1.0, NAN, 2.0, 3.0, -1.0],
           [1e4, 1e4 + 1, 9999.5, 1e4 - 3, 1e4 + 0.25],
           [-INF, 1.5, -INF, -2.0, 0.0],
           [INF, -INF, 1.0, 2.0, 3.0]])})
simple("reduce_amin_amax_alias", "x: f32[4, 6]",
       "a = amin(x, dim=0)\nb = amax(x, dim=-1, keepdim=true)\nc = silu(x)",
       "a, b, c", "the aliases amin/amax/silu", data={"x": N()})
simple("reduce_5d", "x: f32[2, 3, 2, 5, 3]",
       "a = sum(x, dim=[1, 3])\nb = logsumexp(x, dim=[0, 2, 4], keepdim=true)\n"
       "c = mean(x, dim=-2)",
       "a, b, c", "reductions of a 5-D input", data={"x": N()})
simple("reduce_large_sum", "x: f32[3, 1001]",
       "a = sum(x, dim=1)\nb = mean(x, dim=1)\nc = logsumexp(x, dim=1)",
       "a, b, c", "long rows (1001) of offset data: summation accuracy",
       data={"x": N(1.0, 100.0)})

# --- group_norm ---------------------------------------------------------------
def gn(name, sig, call, desc, data=None, dims=None, extra="", ret="y"):
    simple(name, sig, "y = " + call + ("\n" + extra if extra else ""), ret,
           desc, data=data, dims=dims)


_GW = {"w": N(1.0, 1.0), "b": N()}
gn("gn_2d", "x: f32[4, 6], w: f32[6], b: f32[6]",
   "group_norm(x, w, b, groups=3)", "group_norm of 2-D [N, C], affine",
   data=dict(_GW, x=N(2.0)))
gn("gn_2d_groups_eq_c", "x: f32[4, 5], w: f32[5], b: f32[5]",
   "group_norm(x, w, b, groups=5)",
   "group_norm 2-D with one element per group (output = bias)",
   data=dict(_GW, x=N(2.0)))
gn("gn_3d", "x: f32[3, 6, 7], w: f32[6], b: f32[6]",
   "group_norm(x, w, b, groups=2)", "group_norm of 3-D [N, C, L], affine",
   data=dict(_GW, x=N(2.0)))
gn("gn_4d", "x: f32[2, 6, 5, 3], w: f32[6], b: f32[6]",
   "group_norm(x, w, b, groups=3)", "group_norm of 4-D, affine",
   data=dict(_GW, x=N(2.0, 0.5)))
gn("gn_5d", "x: f32[2, 4, 3, 2, 3], w: f32[4], b: f32[4]",
   "group_norm(x, w, b, groups=2)", "group_norm of 5-D, affine",
   data=dict(_GW, x=N()))
gn("gn_4d_noaffine", "x: f32[2, 6, 5, 3]", "group_norm(x, groups=3)",
   "group_norm without weight and bias", data={"x": N(3.0, -1.0)})
gn("gn_weight_or_bias_only", "x: f32[3, 6, 5], w: f32[6], b: f32[6]",
   "group_norm(x, w, groups=3)",
   "group_norm with weight only, and with bias only (keyword operand)",
   data=dict(_GW, x=N()), extra="y2 = group_norm(x, bias=b, groups=2)",
   ret="y, y2")
gn("gn_groups_extremes", "x: f32[2, 6, 5], w: f32[6], b: f32[6]",
   "group_norm(x, w, b, groups=1)",
   "group_norm groups=1 (layer-norm-like) and groups=C (instance-norm-like)",
   data=dict(_GW, x=N()), extra="y2 = group_norm(x, w, b, groups=6)",
   ret="y, y2")
gn("gn_eps", "x: f32[2, 6, 5]",
   "group_norm(x, groups=3, eps=0.1)",
   "group_norm eps variants: 0.1, 1e-3, 0",
   data={"x": N(0.3)},
   extra="y2 = group_norm(x, groups=3, eps=1e-3)\n"
         "y3 = group_norm(x, groups=3, eps=0)", ret="y, y2, y3")
gn("gn_constant_group", "x: f32[2, 6, 5], w: f32[6], b: f32[6]",
   "group_norm(x, w, b, groups=3)",
   "group_norm where one group is constant (variance 0 -> output = bias)",
   data=dict(_GW, x=lambda s: (lambda t: (t[0, 2:4].fill_(1.5), t)[1])(
       torch.randn(s, dtype=torch.float64))))
gn("gn_offset_1e4", "x: f32[2, 6, 7], w: f32[6], b: f32[6]",
   "group_norm(x, w, b, groups=3)",
   "group_norm of 1e4 + rand (f32): catastrophic-cancellation check",
   data=dict(_GW, x=U(1e4, 1e4 + 1)))
gn("gn_offset_1e6", "x: f32[2, 6, 7], w: f32[6], b: f32[6]",
   "group_norm(x, w, b, groups=3)",
   "group_norm of 1e6 + rand (f32; stored at 1/16 resolution)",
   data=dict(_GW, x=U(1e6, 1e6 + 1)))
gn("gn_offset_1e6_f64", "x: f64[2, 6, 7], w: f64[6], b: f64[6]",
   "group_norm(x, w, b, groups=3)",
   "group_norm of 1e6 + rand in f64: variance must not come from E[x^2]-E[x]^2",
   data=dict(_GW, x=U(1e6, 1e6 + 1)))
gn("gn_nan_in_group", "x: f32[2, 6, 5], w: f32[6], b: f32[6]",
   "group_norm(x, w, b, groups=3)",
   "group_norm with one NaN: only that sample's group becomes NaN",
   data=dict(_GW, x=WITH(N(), ((0, 3, 2), NAN))))
gn("gn_named_batch", "x: f32[N, 6, 5], w: f32[6], b: f32[6]",
   "group_norm(x, w, b, groups=2, eps=1e-5)",
   "group_norm with a named batch dim (bound to 3 by the stored input)",
   data=dict(_GW, x=N()), dims={"N": 3})
gn("gn_bf16", "x: bf16[2, 6, 5], w: bf16[6], b: bf16[6]",
   "group_norm(x, w, b, groups=3)", "group_norm on bf16 (bf16 output)",
   data=dict(_GW, x=N()))
gn("gn_f16_noaffine", "x: f16[3, 4, 5]", "group_norm(x, groups=2)",
   "group_norm on f16 without affine", data={"x": N()})

# --- linear / matmul ---------------------------------------------------------
_L = {"w": N(0.3), "b": N(0.3)}
simple("linear_1d", "x: f32[7], w: f32[5, 7], b: f32[5]",
       "y = linear(x, w, b)\nz = linear(x, w)", "y, z",
       "linear of a 1-D input with and without bias", data=dict(_L, x=N()))
simple("linear_2d", "x: f32[6, 9], w: f32[5, 9], b: f32[5]",
       "y = linear(x, w, b)", "y", "linear of 2-D input with bias",
       data=dict(_L, x=N()))
simple("linear_3d", "x: f32[2, 3, 9], w: f32[5, 9], b: f32[5]",
       "y = linear(x, w, b)", "y", "linear of 3-D input with bias",
       data=dict(_L, x=N()))
simple("linear_4d_nobias", "x: f32[2, 3, 2, 7], w: f32[5, 7]",
       "y = linear(x, w)", "y", "linear of 4-D input, no bias",
       data=dict(_L, x=N()))
simple("linear_keywords", "x: f32[3, 5], w: f32[6, 5], b: f32[6]",
       "y = linear(x, weight=w, bias=b)\nz = linear(x, w, bias=b)",
       "y, z", "linear with keyword operands", data=dict(_L, x=N()))
simple("linear_bf16", "x: bf16[3, 9], w: bf16[5, 9], b: bf16[5]",
       "y = linear(x, w, b)", "y", "linear on bf16 (bf16 output)",
       data=dict(_L, x=N()))
simple("linear_f64", "x: f64[3, 9], w: f64[5, 9]",
       "y = linear(x, w)", "y", "linear on f64", data=dict(_L, x=N()))

for _nm, _sa, _sb, _d in [
        ("mm_1d_1d", "[7]", "[7]", "1-D . 1-D -> rank-0"),
        ("mm_1d_2d", "[5]", "[5, 3]", "1-D . 2-D -> [3]"),
        ("mm_2d_1d", "[4, 5]", "[5]", "2-D . 1-D -> [4]"),
        ("mm_2d_2d", "[4, 5]", "[5, 3]", "2-D . 2-D"),
        ("mm_batched_bcast", "[2, 1, 3, 4]", "[5, 4, 2]",
         "batched broadcast [2,1,3,4] . [5,4,2] -> [2,5,3,2]"),
        ("mm_3d_3d", "[3, 4, 5]", "[3, 5, 2]", "3-D . 3-D same batch"),
]:
    simple(_nm, "a: f32%s, b: f32%s" % (_sa, _sb), "y = matmul(a, b)", "y",
           "matmul " + _d, data={"a": N(), "b": N()})

simple("mm_1d_nd", "v: f32[4], a: f32[2, 4, 3], c: f32[2, 3, 4]",
       "y = matmul(v, a)\nz = matmul(c, v)", "y, z",
       "matmul 1-D . 3-D -> [2,3] and 3-D . 1-D -> [2,3]",
       data={"v": N(), "a": N(), "c": N()})
simple("mm_2d_4d", "a: f32[3, 5], b: f32[2, 3, 5, 2]", "y = matmul(a, b)",
       "y", "matmul 2-D . 4-D broadcast batch", data={"a": N(), "b": N()})

# --- conv2d -------------------------------------------------------------------
_C = {"w": N(0.3), "b": N(0.3), "x": N()}
for _nm, _xs, _ws, _bias, _attrs, _d in [
        ("conv_basic", "[2, 3, 7, 9]", "[5, 3, 3, 3]", True, "",
         "3x3, stride 1, no padding, bias"),
        ("conv_stride2_pad1", "[2, 3, 9, 7]", "[4, 3, 3, 3]", True,
         ", stride=2, padding=1", "stride 2, padding 1"),
        ("conv_dilation2", "[1, 3, 9, 11]", "[5, 3, 3, 3]", False,
         ", padding=2, dilation=2", "dilation 2, padding 2, no bias"),
        ("conv_groups3", "[2, 6, 7, 7]", "[9, 2, 3, 3]", True, ", groups=3",
         "groups 3 with bias"),
        ("conv_depthwise", "[1, 4, 6, 5]", "[8, 1, 3, 3]", False,
         ", padding=1, groups=4", "depthwise (groups = C), multiplier 2"),
        ("conv_asym", "[2, 3, 9, 10]", "[5, 3, 3, 2]", False,
         ", stride=[2, 1], padding=[0, 2], dilation=[1, 2]",
         "asymmetric kernel, stride, padding and dilation"),
        ("conv_unbatched", "[3, 7, 6]", "[4, 3, 3, 3]", True, ", padding=1",
         "unbatched [C, H, W] input"),
        ("conv_full_kernel", "[3, 2, 5, 5]", "[3, 2, 5, 5]", True, "",
         "kernel as large as the input -> 1x1 output"),
        ("conv_stride3_uneven", "[1, 2, 11, 8]", "[3, 2, 4, 3]", True,
         ", stride=3, padding=[2, 1]",
         "stride 3 where the last window does not reach the end"),
]:
    _sig = "x: f32%s, w: f32%s%s" % (_xs, _ws, ", b: f32[%s]" %
                                     _ws[1:_ws.index(",")] if _bias else "")
    simple(_nm, _sig, "y = conv2d(x, w%s%s)" % (", b" if _bias else "", _attrs),
           "y", "conv2d " + _d, data=dict(_C))

# conv_transpose2d: weight [C_in, C_out/groups, kH, kW]
for _nm, _xs, _ws, _cout, _attrs, _d in [
        ("convt_basic", "[2, 4, 5, 6]", "[4, 3, 3, 3]", 3, "",
         "3x3 stride 1, bias"),
        ("convt_stride2", "[2, 4, 5, 4]", "[4, 3, 3, 3]", 3, ", stride=2",
         "stride 2, bias"),
        ("convt_stride2_pad1_outpad1", "[2, 3, 5, 4]", "[3, 5, 3, 3]", 5,
         ", stride=2, padding=1, output_padding=1",
         "stride 2, padding 1, output_padding 1, bias"),
        ("convt_dilation2", "[1, 3, 4, 5]", "[3, 2, 3, 3]", None,
         ", dilation=2", "dilation 2, no bias"),
        ("convt_dilation2_outpad1", "[1, 3, 4, 5]", "[3, 2, 3, 3]", 2,
         ", dilation=2, output_padding=1",
         "dilation 2 with output_padding 1 (allowed since < dilation)"),
        ("convt_groups2", "[2, 4, 5, 5]", "[4, 3, 3, 3]", 6, ", groups=2",
         "groups 2 with bias (C_out = 6)"),
        ("convt_all_attrs", "[2, 4, 4, 5]", "[4, 2, 3, 2]", None,
         ", stride=[2, 3], padding=[1, 0], output_padding=[1, 2], "
         "dilation=[2, 1], groups=2",
         "asymmetric stride/padding/output_padding/dilation with groups 2"),
        ("convt_unbatched", "[4, 5, 6]", "[4, 3, 3, 3]", 3,
         ", stride=2, padding=1", "unbatched [C, H, W] input"),
]:
    _sig = "x: f32%s, w: f32%s%s" % (_xs, _ws,
                                     ", b: f32[%d]" % _cout if _cout else "")
    simple(_nm, _sig, "y = conv_transpose2d(x, w%s%s)" %
           (", b" if _cout else "", _attrs),
           "y", "conv_transpose2d " + _d, data=dict(_C))

# --- DAGs, several outputs, nested calls ------------------------------------
case("dag_shared_value", """
# y feeds three ops; the graph returns two values.
graph dag_shared_value(x: f32[5, 7]) {
  param w: f32[6, 7]
  param b: f32[6]
  y = linear(x, w, b)
  s = sigmoid(y)
  p = mul(s, y)
  q = add(p, y);
  r = sum(mul(y, y), dim=1, keepdim=true)
  return q, r
}
""", "one value feeding several ops, two outputs, a nested call",
     data={"x": N(), "w": N(0.4), "b": N(0.4)})
case("dag_nested", """
graph dag_nested(x: f32[4, 6]) {
  out = add(mul(sigmoid(x), x), tanh(neg(abs(x))))
  return out
}
""", "deeply nested calls (anonymous values)", data={"x": N(2.0)})
case("dag_softmax", """
# softmax and log-softmax spelt with reductions; x feeds four ops
graph dag_softmax(x: f32[3, 11]) {
  m = max(x, dim=1, keepdim=true)
  e = exp(sub(x, m))
  s = sum(e, dim=1, keepdim=true)
  sm = div(e, s)
  lse = logsumexp(x, dim=1, keepdim=true)
  lsm = sub(x, lse)
  return sm, lsm
}
""", "softmax / log-softmax from reductions and broadcasting, two outputs",
     data={"x": N(3.0)})
case("dag_conv_chain", """
graph dag_conv_chain(x: f32[2, 3, 8, 7]) {
  param w: f32[6, 3, 3, 3]
  param b: f32[6]
  param gamma: f32[6]
  param beta: f32[6]
  c = conv2d(x, w, b, stride=1, padding=1)
  g = group_norm(c, gamma, beta, groups=3)
  h = hardswish(g)
  m = mean(h, dim=[2, 3])
  return g, m
}
""", "conv2d -> group_norm -> hardswish -> mean, returns an intermediate too",
     data={"x": N(), "w": N(0.3), "b": N(0.3), "gamma": N(1.0, 1.0),
           "beta": N()})
case("dag_mlp", """
graph dag_mlp(x: f32[4, 9]) {
  param w1: f32[11, 9]
  param b1: f32[11]
  param w2: f32[3, 11]
  h: f32[4, 11] = gelu(linear(x, w1, b1), approximate="tanh")
  o: f32[4, 3] = linear(h, weight=w2)
  sp = softplus(o, beta=2)
  total = sum(sp)
  return sp, total
}
""", "two-layer MLP with type annotations, keyword operand, total sum",
     data={"x": N(), "w1": N(0.4), "b1": N(0.4), "w2": N(0.4)})
case("dag_convt_chain", """
graph dag_convt_chain(x: f32[2, 4, 3, 4]) {
  param w: f32[4, 2, 3, 3]
  y = conv_transpose2d(x, w, stride=2, padding=1, output_padding=1, groups=2)
  z = mish(y)
  mx = max(z, dim=[1, 2, 3])
  out = clamp(sub(z, minimum(z, 0.0)), max=0.5)
  return out, mx
}
""", "conv_transpose2d -> mish -> max and an elementwise tail",
     data={"x": N(), "w": N(0.4)})
case("dag_matmul_bcast", """
graph dag_matmul_bcast(a: f32[3, 5], v: f32[5], s: f32[]) {
  p = matmul(a, v)
  q = mul(p, s)
  d = matmul(v, v)
  return q, d
}
""", "matrix-vector product scaled by a rank-0 tensor, and a dot product",
     data={"a": N(), "v": N(), "s": VALS(-1.5)})
case("dag_residual", """
graph dag_residual(x: f32[2, 4, 5, 5]) {
  param w: f32[4, 4, 3, 3]
  c = conv2d(x, w, padding=1)
  r = relu(c)
  y = add(x, r)
  z = leaky_relu(y, negative_slope=0.05)
  n = group_norm(z, groups=2)
  return n
}
""", "residual block: x used by conv and by the add", data={"x": N(), "w": N(0.3)})

# --- The five flagship small graphs (examples/*_small.kg) ---------------------
FLAGSHIPS = {
    "l1_35_small": {"dims": {"N": 3}},
    "l2_19_small": {"dims": {"N": 2}},
    "l2_37_small": {"dims": {"N": 9}},
    "l2_62_small": {"dims": {"N": 6}},
    "l2_75_small": {"dims": {"N": 5}},
}


def flagship_data(name, graph, dims):
    """Parameters from seeded torch.nn modules, input torch.rand."""
    nn = torch.nn
    torch.manual_seed(1234)
    d = {}
    if name == "l1_35_small":
        g = nn.GroupNorm(8, 64)
        d["gamma"], d["beta"] = g.weight, g.bias
    elif name == "l2_19_small":
        c = nn.ConvTranspose2d(64, 64, kernel_size=3, stride=1)
        g = nn.GroupNorm(8, 64)
        d.update(w=c.weight, b=c.bias, gamma=g.weight, beta=g.bias)
    elif name == "l2_37_small":
        lin = nn.Linear(96, 256)
        bias = torch.randn(256)
        g = nn.GroupNorm(16, 256)
        d.update(w=lin.weight, b=lin.bias, bias=bias, gamma=g.weight,
                 beta=g.bias)
    elif name == "l2_62_small":
        lin = nn.Linear(128, 256)
        g = nn.GroupNorm(32, 256, eps=1e-5)
        d.update(w=lin.weight, b=lin.bias, gamma=g.weight, beta=g.bias)
    elif name == "l2_75_small":
        lin = nn.Linear(128, 256)
        g = nn.GroupNorm(16, 256)
        bias = torch.randn(1, 256, 1, 1)
        d.update(w=lin.weight, b=lin.bias, gamma=g.weight, beta=g.bias,
                 bias=bias)
    (xn, (_, xshape)), = graph["inputs"]
    d[xn] = torch.rand([dims.get(s, s) for s in xshape])
    return {k: v.detach().clone() for k, v in d.items()}


def load_flagships(examples_dir):
    for stem, info in FLAGSHIPS.items():
        path = os.path.join(examples_dir, stem + ".kg")
        with open(path) as f:
            text = f.read()
        first = text.strip().split("\n")[0].lstrip("# ").strip()
        case(stem, text, "flagship examples/%s.kg: %s" % (stem, first),
             dims=info["dims"], module=stem)


# ---------------------------------------------------------------------------
# Kiln's shape and dtype rules (compiler/ops/*.cpp), mirrored without torch so
# --check can validate shapes locally and report the dtype Kiln will infer.
# ---------------------------------------------------------------------------

def _cat(dt):
    return 0 if dt == "bool" else (1 if dt == "i64" else 2)


def _promote(a, b):
    if a == b:
        return a
    for x, y in ((a, b), (b, a)):
        if x == "bool":
            return y
    for x, y in ((a, b), (b, a)):
        if x == "i64":
            return y
    return "f64" if "f64" in (a, b) else "f32"


def _result_type(vals):
    acc = {"dimmed": None, "zero": None, "lit": None}
    for v in vals:
        if v is None:
            continue
        k = "lit" if v[2] else ("zero" if len(v[1]) == 0 else "dimmed")
        acc[k] = v[0] if acc[k] is None else _promote(acc[k], v[0])
    r = acc["dimmed"]
    if acc["zero"] and (r is None or _cat(acc["zero"]) > _cat(r)):
        r = acc["zero"]
    if acc["lit"] and (r is None or _cat(acc["lit"]) > _cat(r)):
        r = acc["lit"]
    return r


def _bcast(a, b):
    n = max(len(a), len(b))
    a = [1] * (n - len(a)) + list(a)
    b = [1] * (n - len(b)) + list(b)
    out = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            raise KgError("cannot broadcast %s with %s" % (a, b))
        out.append(y if x == 1 else x)
    return out


def kiln_infer(graph, dims):
    """Returns {name: (dtype, shape)} for the returned values."""
    env = {}
    for n, (dt, shape) in graph["inputs"] + graph["params"]:
        env[n] = (dt, [dims.get(d, d) for d in shape], False)

    def ev(e):
        if e is None:
            return None
        if e[0] == "name":
            return env[e[1]]
        if e[0] == "num":
            return ("f32" if e[2] else "i64", [], True)
        op, at = e[1], e[3]
        ops = [ev(o) for o in e[2]]
        isfloat = lambda v: v[0] in ("f32", "f16", "bf16", "f64")
        if op in BINARY:
            a, b = ops
            shape = _bcast(a[1], b[1])
            dt = _result_type([a, b])
            if dt == "bool":
                raise KgError("bool arithmetic")
            if op == "div" and dt in ("i64", "bool"):
                dt = "f32"
            return (dt, shape, False)
        x = ops[0]
        if op in UNARY:
            dt = x[0]
            if not isfloat(x):
                if op in ("neg", "abs", "relu"):
                    if dt == "bool":
                        raise KgError("bool input")
                elif op in ("exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh"):
                    dt = "f32"
                else:
                    raise KgError("%s needs a float input" % op)
            return (dt, list(x[1]), False)
        if op in REDUCTIONS:
            r = len(x[1])
            ds = sorted(set((d + r) % r for d in (at["dim"] or range(r))))
            shape = []
            for i, d in enumerate(x[1]):
                if i not in ds:
                    shape.append(d)
                elif at["keepdim"]:
                    shape.append(1)
            dt = x[0]
            if op == "sum" and dt in ("i64", "bool"):
                dt = "i64"
            if op == "mean" and not isfloat(x):
                raise KgError("integer mean")
            if op == "logsumexp" and not isfloat(x):
                dt = "f32"
            return (dt, shape, False)
        tensors = [o for o in ops if o is not None]
        if not isfloat(x) or len(set(t[0] for t in tensors)) != 1:
            raise KgError("%s needs float operands of one dtype" % op)
        if op == "linear":
            w, b = ops[1], ops[2]
            if x[1][-1] != w[1][1] or (b and b[1] != [w[1][0]]):
                raise KgError("linear shapes %s %s" % (x[1], w[1]))
            return (x[0], x[1][:-1] + [w[1][0]], False)
        if op == "matmul":
            sa, sb = list(x[1]), list(ops[1][1])
            dr, dc = len(sa) == 1, len(sb) == 1
            if dr:
                sa = [1] + sa
            if dc:
                sb = sb + [1]
            if sa[-1] != sb[-2]:
                raise KgError("matmul inner dims %s %s" % (sa, sb))
            out = _bcast(sa[:-2], sb[:-2])
            if not dr:
                out.append(sa[-2])
            if not dc:
                out.append(sb[-1])
            return (x[0], out, False)
        if op in ("conv2d", "conv_transpose2d"):
            w, b = ops[1][1], ops[2]
            r, g = len(x[1]), at["groups"]
            cin = x[1][r - 3]
            if op == "conv2d":
                if w[1] * g != cin or w[0] % g:
                    raise KgError("conv channels")
                cout = w[0]
            else:
                if w[0] != cin or cin % g:
                    raise KgError("convT channels")
                cout = w[1] * g
            if b and b[1] != [cout]:
                raise KgError("conv bias")
            out = ([x[1][0]] if r == 4 else []) + [cout]
            for i in range(2):
                n, k = x[1][r - 2 + i], w[2 + i]
                st, pd, dl = at["stride"][i], at["padding"][i], at["dilation"][i]
                if op == "conv2d":
                    span = dl * (k - 1) + 1
                    if n + 2 * pd < span:
                        raise KgError("conv input too small")
                    out.append((n + 2 * pd - span) // st + 1)
                else:
                    op_ = at["output_padding"][i]
                    if op_ >= st and op_ >= dl:
                        raise KgError("output_padding too large")
                    out.append((n - 1) * st - 2 * pd + dl * (k - 1) + op_ + 1)
            return (x[0], out, False)
        if op == "group_norm":
            c = x[1][1]
            if len(x[1]) < 2 or c % at["groups"]:
                raise KgError("group_norm groups")
            for p in ops[1:]:
                if p and p[1] != [c]:
                    raise KgError("group_norm affine shape")
            return (x[0], list(x[1]), False)
        raise KgError(op)

    for n, ty, e in graph["stmts"]:
        v = ev(e)
        if ty is not None and (ty[0] != v[0] or
                               [dims.get(d, d) for d in ty[1]] != v[1]):
            raise KgError("%s annotated %s but is %s" % (n, ty, v[:2]))
        env[n] = (v[0], v[1], False)
    return {r: env[r][:2] for r in graph["returns"]}


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------

def check_cases():
    names = set()
    for c in CASES:
        if c["name"] in names:
            raise KgError("duplicate case %s" % c["name"])
        names.add(c["name"])
        g = parse_kg(c["kg"])
        c["graph"] = g
        declared = dict(g["inputs"] + g["params"])
        for k in c["data"]:
            if k not in declared:
                raise KgError("%s: data for unknown %s" % (c["name"], k))
        for n, (dt, shape) in declared.items():
            for s in shape:
                if isinstance(s, str) and s not in c["dims"]:
                    raise KgError("%s: named dim %s unbound" % (c["name"], s))
            if c["module"] is None and n not in c["data"]:
                # default data is fine, but require float tensors to be
                # declared explicitly so the distribution is deliberate
                raise KgError("%s: no data for %s" % (c["name"], n))
        if not c["desc"] or "\n" in c["desc"]:
            raise KgError("%s: description must be one line" % c["name"])
        try:
            c["kiln"] = kiln_infer(g, c["dims"])
        except KgError as e:
            raise KgError("%s: %s" % (c["name"], e))


def make_tensor(gen, dt, shape):
    t = gen(tuple(shape))
    tdt = getattr(torch, TORCH_DTYPE[dt])
    if not torch.is_tensor(t):
        t = torch.tensor(t)
    if list(t.shape) != list(shape):
        raise KgError("generated shape %s != declared %s" %
                      (list(t.shape), shape))
    return t.to(tdt).contiguous()


def canonicalize_safetensors(path):
    """Rewrites a safetensors header in a fixed order: save_file serialises
    __metadata__ from a hash map, so its key order (and so the file's bytes)
    changes from run to run. Tensor data and offsets are left as they are;
    the header stays compact JSON padded with spaces to 8 bytes, as
    safetensors writes it."""
    with open(path, "rb") as f:
        blob = f.read()
    n = struct.unpack("<Q", blob[:8])[0]
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    data = blob[8 + n:]
    meta = header.pop("__metadata__", None)
    new = {}
    if meta is not None:
        new["__metadata__"] = dict(sorted(meta.items()))
    for k in sorted(header, key=lambda k: (header[k]["data_offsets"], k)):
        new[k] = header[k]
    hj = json.dumps(new, separators=(",", ":"), ensure_ascii=False).encode()
    hj += b" " * (-len(hj) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hj)) + hj + data)


def run_case(c, out_dir, torch_version):
    from safetensors.torch import save_file
    g = c["graph"]
    seed = zlib.crc32(c["name"].encode())
    torch.manual_seed(seed)
    declared = g["inputs"] + g["params"]
    if c["module"]:
        stored = flagship_data(c["module"], g, c["dims"])
        for n, (dt, shape) in declared:
            tdt = getattr(torch, TORCH_DTYPE[dt])
            stored[n] = stored[n].to(tdt).contiguous()
    else:
        stored = {}
        for n, (dt, shape) in declared:
            shape = [c["dims"].get(s, s) for s in shape]
            stored[n] = make_tensor(c["data"][n], dt, shape)
    for n, (dt, shape) in declared:
        t = stored[n]
        want = [c["dims"].get(s, s) for s in shape]
        if list(t.shape) != want:
            raise KgError("%s has shape %s, declared %s" % (n, list(t.shape),
                                                           want))
        # Random data is never all zeros; a flagship's module-initialised
        # GroupNorm bias (zeros, as its .kg initialiser says) is exempt.
        exempt = c["module"] and n != g["inputs"][0][0]
        if t.numel() and not exempt and not bool((t != 0).any()):
            raise KgError("%s is all zeros" % n)
    # Original dtypes: torch_dtype.
    orig = evaluate(g, stored)
    # float64 upcast: expected values.
    up = evaluate(g, {k: v.to(torch.float64) for k, v in stored.items()})
    tensors = {k: v for k, v in stored.items()}
    meta = {"description": c["desc"], "torch_version": str(torch_version),
            "generator": "tools/make_golden.py"}
    outs = {}
    for r in g["returns"]:
        e, o = up[r], orig[r]
        if e.dtype != torch.float64:
            raise KgError("f64 evaluation of %s gave %s" % (r, e.dtype))
        if list(e.shape) != list(o.shape):
            raise KgError("%s: shape %s in f64 but %s in original dtypes" %
                          (r, list(e.shape), list(o.shape)))
        tensors["expected." + r] = e.detach().clone().contiguous()
        tdt = str(o.dtype).replace("torch.", "")
        meta["torch_dtype." + r] = tdt
        outs[r] = {"torch_dtype": tdt, "shape": list(e.shape)}
        if r in stored:
            raise KgError("output %s collides with an input name" % r)
        if c["kiln"][r][0] != TORCH_DTYPE_KG.get(tdt) or \
                c["kiln"][r][1] != list(o.shape):
            print("NOTE %s.%s: Kiln's rules give %s%s, PyTorch gives %s%s" %
                  (c["name"], r, c["kiln"][r][0], c["kiln"][r][1], tdt,
                   list(o.shape)))
    with open(os.path.join(out_dir, c["name"] + ".kg"), "w") as f:
        f.write(c["kg"])
    st_path = os.path.join(out_dir, c["name"] + ".safetensors")
    save_file(tensors, st_path, metadata=meta)
    canonicalize_safetensors(st_path)
    return {"name": c["name"], "description": c["desc"],
            "inputs": {n: {"dtype": dt, "shape": list(stored[n].shape)}
                       for n, (dt, _) in declared},
            "outputs": outs}


TORCH_DTYPE_KG = {v: k for k, v in TORCH_DTYPE.items()}

PROBES = [
    "torch.maximum(torch.ones(2), 1.0)",
    "torch.logsumexp(torch.arange(3), 0).dtype",
    "torch.sum(torch.ones(2, 3), dim=[]).shape",
    "torch.mean(torch.ones(2, 3), dim=[]).shape",
    "torch.amin(torch.ones(2, 3), dim=[]).shape",
    "torch.logsumexp(torch.ones(2, 3), dim=[]).shape",
    "torch.logsumexp(torch.ones(2, 3), dim=()).shape",
    "torch.clamp(torch.arange(3), min=0.5).dtype",
    "torch.clamp(torch.arange(3), min=1).dtype",
    "F.hardtanh(torch.arange(3)).dtype",
    "F.leaky_relu(torch.arange(3)).dtype",
    "F.gelu(torch.arange(3)).dtype",
    "F.silu(torch.arange(3)).dtype",
    "F.softplus(torch.arange(3)).dtype",
    "torch.relu(torch.tensor([True]))",
    "torch.neg(torch.tensor([True]))",
    "torch.abs(torch.tensor([True]))",
    "torch.pow(torch.arange(3), -1)",
    "torch.pow(torch.arange(3), torch.tensor(-1))",
    "(torch.arange(3) + torch.tensor(1.0, dtype=torch.float64)).dtype",
    "(torch.arange(3, dtype=torch.float16) + torch.tensor(1.0)).dtype",
    "torch.tensor(True) + torch.tensor(True)",
    "(torch.tensor([True]) - torch.tensor([True]))",
    "torch.mean(torch.arange(3))",
    "F.softplus(torch.tensor([1.0, -30.0, 30.0]), beta=-1)",
    "torch.signbit(torch.relu(torch.tensor([-0.0])))",
    "torch.signbit(torch.clamp(torch.tensor([-0.0]), min=0.0))",
    "torch.signbit(torch.maximum(torch.tensor([-0.0]), torch.tensor([0.0])))",
    "torch.signbit(torch.maximum(torch.tensor([0.0]), torch.tensor([-0.0])))",
    "torch.signbit(F.hardswish(torch.tensor([-0.0, -3.0], dtype=torch.float64)))",
    "torch.amin(torch.tensor([1.0, float('nan')]), 0)",
    "torch.clamp(torch.tensor([float('nan')]), min=0.0, max=1.0)",
    "F.hardtanh(torch.tensor([float('nan')]))",
    "torch.clamp(torch.ones(3), min=2.0, max=1.0)",
    "F.linear(torch.ones(3, dtype=torch.float64), torch.ones(2, 3))",
    "torch.matmul(torch.ones(3), torch.ones(3, dtype=torch.float64))",
    "F.group_norm(torch.ones(2, 4), 2, torch.ones(4, dtype=torch.float64))",
    "F.conv2d(torch.ones(1, 1, 3, 3), torch.ones(1, 1, 2, 2, dtype=torch.float64))",
    "torch.sum(torch.ones(2, 3), dim=[1, 1])",
    "torch.pow(torch.tensor([2]), 0.5).dtype",
    "torch.pow(2, torch.tensor([2, 3])).dtype",
    "torch.pow(2.5, torch.tensor([2, 3])).dtype",
    "(torch.tensor([True]) * 2.5).dtype",
    "torch.logsumexp(torch.tensor([True, False]), 0)",
    "F.conv_transpose2d(torch.ones(1, 1, 3, 3), torch.ones(1, 1, 3, 3), stride=1, dilation=2, output_padding=1).shape",
]


def probe():
    """Prints PyTorch behaviours that Kiln's rules depend on."""
    for p in PROBES:
        try:
            r = repr(eval(p))
        except Exception as e:  # noqa: BLE001 - a refusal is the answer
            r = "ERROR %s: %s" % (type(e).__name__, str(e).split("\n")[0])
        print("PROBE %s -> %s" % (p, r))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    ap.add_argument("--out", default=os.path.join(root, "tests", "data",
                                                  "golden"))
    ap.add_argument("--examples", default=os.path.join(root, "examples"))
    ap.add_argument("--check", action="store_true",
                    help="parse and validate the cases only (no torch)")
    ap.add_argument("--only", default="",
                    help="comma-separated case names")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--canonicalize", metavar="DIR",
                    help="only rewrite the headers of DIR/*.safetensors in "
                         "canonical order (no torch; what a run does to "
                         "each file it writes)")
    args = ap.parse_args()

    if args.canonicalize:
        for f in sorted(os.listdir(args.canonicalize)):
            if f.endswith(".safetensors"):
                canonicalize_safetensors(os.path.join(args.canonicalize, f))
        return 0

    load_flagships(args.examples)
    check_cases()
    cases = CASES
    if args.only:
        want = set(args.only.split(","))
        cases = [c for c in CASES if c["name"] in want]
    if args.list or args.check:
        for c in cases:
            print("%-32s %s" % (c["name"], c["desc"]))
            if args.check:
                print("    " + ", ".join("%s: %s%s" % (k, v[0], v[1])
                                         for k, v in c["kiln"].items()))
        print("%d cases parse" % len(cases))
        return 0

    _import_torch()
    probe()
    os.makedirs(args.out, exist_ok=True)
    if not args.only:  # a full run replaces every generated file
        for f in os.listdir(args.out):
            if f.endswith((".kg", ".safetensors")) or f == "index.json":
                os.remove(os.path.join(args.out, f))
    index, failed = [], []
    for c in cases:
        try:
            index.append(run_case(c, args.out, torch.__version__))
            print("ok   %s" % c["name"])
        except Exception as e:  # a case PyTorch refuses is dropped, loudly
            failed.append((c["name"], repr(e)))
            print("FAIL %s: %r" % (c["name"], e))
            traceback.print_exc()
            for ext in (".kg", ".safetensors"):
                p = os.path.join(args.out, c["name"] + ext)
                if os.path.exists(p):
                    os.remove(p)
    index_path = os.path.join(args.out, "index.json" if not args.only
                              else "index.partial.json")
    with open(index_path, "w") as f:
        json.dump({"torch_version": str(torch.__version__),
                   "cases": index}, f, indent=1, sort_keys=True)
        f.write("\n")
    print("%d cases written, %d failed" % (len(index), len(failed)))
    for n, e in failed:
        print("  failed: %s: %s" % (n, e))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
