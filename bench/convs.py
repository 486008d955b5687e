#!/usr/bin/env python3
"""Kiln against PyTorch eager, torch.compile and cuDNN's own kernel on CNN blocks.

Run on the GPU machine from the repository root, with a built `kiln`:
    python3 bench/convs.py --kiln build/frontend/kiln [--only c2d_3x3,ct2d]
        [--part K/N] [--matmul-precision high] [--dtype bf16] [--iters 20]
        [--append]
Without a GPU or PyTorch:
    python3 bench/convs.py --list
    python3 bench/convs.py --write-kg DIR   (then `kiln plan DIR/NAME.kg`)

Each block of GRAPHS (conv2d or conv_transpose2d with bias, then group_norm
and/or relu, silu or erf gelu) is written as a .kg graph and built as a
PyTorch module with a fixed seed; its parameters are saved as .safetensors
under the .kg names (w, b, gamma, beta) and its input, uniform [0, 1) fp32
NCHW, as .npy. In the same run the script times PyTorch eager and
torch.compile (default settings; CUDA events, warm-up, median) and `kiln
bench` on the same files, and compares Kiln's output and PyTorch's fp32
output with the module run in float64 on the GPU: ||a - ref|| / ||ref||.

cuDNN's own kernel: torch.profiler over --prof-runs eager runs of the
convolution alone (F.conv2d / F.conv_transpose2d with bias), once with x and
the weight in channels_last (NHWC) and once in NCHW. Kernels whose names
look like a layout transform or an elementwise op (PyTorch adds the bias in a
separate kernel) are set aside; the one left with the most time is "the
cuDNN kernel", its time per run given. Kiln's conv kernel is the kernel of
`kiln bench --json` whose name starts with "conv" (it may fuse the bias and
the activation, which cuDNN's does not); ratio = cuDNN ms / Kiln conv ms.

PyTorch's convolutions run at its defaults: cuDNN with TF32 allowed
(torch.backends.cudnn.allow_tf32 stays as it is) and cudnn.benchmark off
unless --cudnn-benchmark. --matmul-precision (default high, Kiln's TF32)
goes to `kiln bench` and to torch.set_float32_matmul_precision.
--dtype f16 or bf16 runs every tensor (the module, its input and the .kg)
in that dtype instead of fp32, the input and output as .safetensors; the
table then goes to bench/CONVS-<dtype>.md.

Prints one JSON line per graph on stdout as it goes (kiln's own output and
the final table go to stderr) and rewrites the Markdown table after every
graph: bench/CONVS.md, or bench/CONVS-<mode>.md at another precision, with
the rows also kept as JSON beside it (.json); --append keeps the rows of
graphs not run this time, so the sweep can be split over several commands
with --only or --part K/N (e.g. --part 1/3, then --part 2/3 --append, ...).
"""
import argparse
import copy
import dataclasses
import datetime
import gc
import json
import os
import pathlib
import re
import shlex
import subprocess
import sys
import tempfile
import time
import traceback

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

PRECISIONS = ("highest", "high", "medium")
ACTS = ("relu", "silu", "gelu")
REDUCES = ("min", "max", "sum", "mean", "logsumexp")
MAX_TENSOR_BYTES = 2 << 30  # every fp32 tensor stays within 2 GiB


@dataclasses.dataclass(frozen=True)
class Block:
    """conv2d or conv_transpose2d (+ bias) -> group_norm? -> + a residual
    input? -> activation? -> a reduction over the channels? (keepdim), on a
    square image."""
    op: str  # "conv2d" or "conv_transpose2d"
    cin: int
    cout: int
    k: int
    stride: int
    padding: int
    n: int  # batch
    hw: int  # input height = width
    act: str = ""  # "", or one of ACTS
    gn_groups: int = 0  # 0: no group_norm
    output_padding: int = 0  # conv_transpose2d only
    groups: int = 1
    reduce: str = ""  # "", or one of REDUCES: over dim 1, keepdim
    residual: bool = False  # + an input `res` of the output's shape

    @property
    def name(self):
        kind = "c2d" if self.op == "conv2d" else "ct2d"
        s = f"_s{self.stride}" if self.stride != 1 else ""
        gn = f"_gn{self.gn_groups}" if self.gn_groups else ""
        act = f"_{self.act}" if self.act else ""
        g = f"_g{self.groups}" if self.groups != 1 else ""
        red = f"_{self.reduce}" if self.reduce else ""
        res = "_res" if self.residual else ""
        return (f"{kind}_{self.k}x{self.k}{s}_{self.cin}to{self.cout}{g}"
                f"_b{self.n}_{self.hw}{gn}{res}{act}{red}")

    @property
    def out_hw(self):
        k, s, p = self.k, self.stride, self.padding
        if self.op == "conv2d":
            return (self.hw + 2 * p - (k - 1) - 1) // s + 1
        return (self.hw - 1) * s - 2 * p + (k - 1) + self.output_padding + 1

    @property
    def x_shape(self):
        return [self.n, self.cin, self.hw, self.hw]

    @property
    def w_shape(self):
        # PyTorch's layouts: conv2d [Cout, Cin / groups, k, k], transposed
        # [Cin, Cout / groups, k, k].
        if self.op == "conv2d":
            return [self.cout, self.cin // self.groups, self.k, self.k]
        return [self.cin, self.cout // self.groups, self.k, self.k]

    @property
    def out_shape(self):
        return [self.n, 1 if self.reduce else self.cout, self.out_hw,
                self.out_hw]

    @property
    def flops(self):
        """Multiply-adds x 2 of the convolution alone."""
        taps = (2 * self.k * self.k * self.cin * self.cout * self.n
                // self.groups)
        if self.op == "conv2d":
            return taps * self.out_hw ** 2
        return taps * self.hw ** 2  # each input pixel scatters k*k taps

    def conv_attrs(self):
        attrs = [f"stride={self.stride}", f"padding={self.padding}"]
        if self.output_padding:
            attrs.append(f"output_padding={self.output_padding}")
        if self.groups != 1:
            attrs.append(f"groups={self.groups}")
        return ", ".join(attrs)

    def summary(self):
        return (f"{self.op} k{self.k} s{self.stride} p{self.padding}"
                + (f" op{self.output_padding}" if self.output_padding else "")
                + (f" g{self.groups}" if self.groups != 1 else "")
                + f": x{self.x_shape} -> {self.out_shape}"
                + (" + res" if self.residual else ""))

    def kg(self, dtype="f32"):
        """The block as a .kg graph of `dtype` tensors, its parameters
        initialised as PyTorch does (the bench passes the module's own values
        with --params)."""
        fan_in = self.w_shape[1] * self.k * self.k
        bound = 1 / fan_in ** 0.5
        dims = ", ".join(map(str, self.x_shape))
        wdims = ", ".join(map(str, self.w_shape))
        chain = [self.op] + (["group_norm"] if self.gn_groups else []) + (
            ["+ res"] if self.residual else []) + (
            [self.act] if self.act else []) + (
            [f"{self.reduce} over the channels"] if self.reduce else [])
        lines = [
            f"# {' -> '.join(chain)}: x {self.x_shape} -> out "
            f"{self.out_shape} (generated by bench/convs.py)",
            f"graph {self.name}(x: f32[{dims}]"
            + (f", res: f32[{', '.join(map(str, self.out_shape))}]"
               if self.residual else "") + ") {",
            f"  param w: f32[{wdims}] = uniform({-bound!r}, {bound!r}, seed=1)",
            f"  param b: f32[{self.cout}] = uniform({-bound!r}, {bound!r}, "
            "seed=2)",
        ]
        if self.gn_groups:
            lines += [f"  param gamma: f32[{self.cout}] = ones",
                      f"  param beta: f32[{self.cout}] = zeros"]
        steps = [f"{self.op}(x, w, b, {self.conv_attrs()})"]
        if self.gn_groups:
            steps.append(f"group_norm({{}}, gamma, beta, "
                         f"groups={self.gn_groups}, eps=1e-5)")
        if self.residual:
            steps.append("add({}, res)")
        if self.act:
            steps.append(f"{self.act}({{}})")
        if self.reduce:
            steps.append(f"{self.reduce}({{}}, dim=1, keepdim=true)")
        names = ["y", "g", "s", "a", "r"][:len(steps) - 1] + ["out"]
        prev = None
        for v, step in zip(names, steps):
            lines.append(f"  {v} = {step.format(prev) if prev else step}")
            prev = v
        lines += ["  return out", "}"]
        return "\n".join(lines).replace("f32[", f"{dtype}[") + "\n"


def c2d(cin, cout, n, hw, act="", k=3, stride=1, padding=1, gn=0, groups=1,
        reduce="", residual=False):
    return Block("conv2d", cin, cout, k, stride, padding, n, hw, act, gn,
                 groups=groups, reduce=reduce, residual=residual)


def ct2d(cin, cout, n, hw, act="", k=3, padding=1, output_padding=0,
         reduce="", stride=2, residual=False):
    return Block("conv_transpose2d", cin, cout, k, stride, padding, n, hw,
                 act, 0, output_padding, reduce=reduce, residual=residual)


GRAPHS = [
    # 3x3 stride 1 padding 1: input channels 8..64, output 32..128.
    c2d(8, 32, 128, 256, "relu"),
    c2d(16, 64, 64, 256, "relu"),
    c2d(16, 32, 16, 512, "gelu"),
    c2d(32, 64, 32, 256, "silu"),
    c2d(32, 128, 32, 256, "relu"),
    c2d(64, 64, 32, 256, "gelu"),
    c2d(64, 128, 16, 256, "silu"),
    c2d(64, 32, 64, 128, "relu"),
    c2d(8, 64, 16, 512, "silu"),
    # conv -> GroupNorm(8 groups of 4 channels) -> relu.
    c2d(32, 32, 32, 256, "relu", gn=8),
    # Pointwise.
    c2d(64, 128, 32, 256, k=1, padding=0),
    # Downsampling.
    c2d(32, 64, 64, 256, "relu", stride=2),
    # Upsampling: kernel 3 padding 1 output_padding 1, and kernel 4 padding 1.
    ct2d(64, 32, 32, 128, "relu", output_padding=1),
    ct2d(32, 32, 64, 128, "relu", output_padding=1),
    ct2d(64, 64, 32, 128, "relu", k=4),
    ct2d(128, 64, 16, 128, "silu", k=4),
    ct2d(32, 16, 64, 256, "relu", k=4),
    # A 14 x 14 image (ResNet's third stage; rows of 56 bytes).
    c2d(64, 64, 512, 14, "relu"),
    # Grouped (ResNeXt-like: 4 groups of 32 channels) and depthwise (one
    # channel a group: the FFMA kernel).
    c2d(128, 128, 32, 128, "relu", groups=4),
    c2d(64, 64, 32, 256, "relu", groups=64),
    # A reduction over the channels after the convolution (keepdim).
    c2d(32, 64, 32, 256, reduce="min"),
    c2d(16, 32, 64, 256, "relu", reduce="logsumexp"),
    ct2d(32, 32, 64, 128, output_padding=1, reduce="mean"),
    # A residual input added before the activation (ResNet's basic block),
    # at 256 columns and at 130 (a stride-1 conv_transpose2d: rows that are
    # not whole 32-byte sectors, bench/NOTES.md v37).
    c2d(64, 64, 32, 256, "relu", residual=True),
    ct2d(64, 64, 32, 128, "relu", padding=0, stride=1, residual=True),
    # Wide channels (ResNet's later stages), whose weight streams through
    # the ring with the patch (bench/NOTES.md v39): 3 x 3 from 128 to 512
    # channels, 3 x 3 of stride 2 from 64, 4 x 4 of stride 2 from 128.
    c2d(128, 128, 32, 64, "relu"),
    c2d(256, 256, 32, 64, "relu"),
    c2d(512, 512, 32, 64, "relu"),
    c2d(64, 64, 32, 256, "relu", stride=2),
    c2d(128, 128, 32, 128, "relu", k=4, stride=2),
    # Wide transposed: 3 x 3 of stride 1 from 256 channels, and 4 x 4 of
    # stride 2 from 256 (streamed by phase; bench/NOTES.md v40).
    ct2d(256, 256, 16, 64, "relu", stride=1),
    ct2d(256, 128, 16, 64, "relu", k=4),
]
for _b in GRAPHS:
    assert _b.act in ("",) + ACTS and _b.reduce in ("",) + REDUCES, _b.name
    # res has the output's shape, which a reduction's keepdim would change.
    assert not (_b.residual and _b.reduce), _b.name
    for _s in (_b.x_shape, _b.out_shape):
        assert 4 * _s[0] * _s[1] * _s[2] * _s[3] <= MAX_TENSOR_BYTES, _b.name
assert len({b.name for b in GRAPHS}) == len(GRAPHS)


def select(only, part=None):
    """The graphs whose names contain one of `only`'s comma-separated
    substrings (all if empty), then chunk K of N of them (`part` "K/N")."""
    keys = [s for s in only.split(",") if s]
    blocks = [b for b in GRAPHS if not keys or any(k in b.name for k in keys)]
    if part:
        k, n = map(int, part.split("/"))
        if not 1 <= k <= n:
            raise ValueError(f"--part {part}: want K/N with 1 <= K <= N")
        blocks = blocks[(k - 1) * len(blocks) // n:k * len(blocks) // n]
    return blocks


# ----------------------------------------------------------------------------
# PyTorch side (imported lazily: --list and --write-kg need no torch).
# ----------------------------------------------------------------------------

def make_module(b):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    acts = {"relu": F.relu, "silu": F.silu, "gelu": F.gelu}  # gelu: erf

    class ConvBlock(nn.Module):
        def __init__(self):
            super().__init__()
            if b.op == "conv2d":
                self.conv = nn.Conv2d(b.cin, b.cout, b.k, stride=b.stride,
                                      padding=b.padding, groups=b.groups)
            else:
                self.conv = nn.ConvTranspose2d(
                    b.cin, b.cout, b.k, stride=b.stride, padding=b.padding,
                    output_padding=b.output_padding, groups=b.groups)
            self.gn = None
            if b.gn_groups:
                self.gn = nn.GroupNorm(b.gn_groups, b.cout, eps=1e-5)
                with torch.no_grad():  # not the trivial ones/zeros
                    self.gn.weight.uniform_(0.5, 1.5)
                    self.gn.bias.uniform_(-0.5, 0.5)

        def forward(self, x, res=None):
            y = self.conv(x)
            if self.gn is not None:
                y = self.gn(y)
            if b.residual:
                y = y + res
            y = acts[b.act](y) if b.act else y
            if b.reduce == "min" or b.reduce == "max":
                return getattr(torch, b.reduce)(y, dim=1, keepdim=True)[0]
            if b.reduce:
                return getattr(torch, b.reduce)(y, dim=1, keepdim=True)
            return y

        def params(self):
            p = {"w": self.conv.weight, "b": self.conv.bias}
            if self.gn is not None:
                p.update(gamma=self.gn.weight, beta=self.gn.bias)
            return p

    return ConvBlock()


def conv_only(b, x, w, bias):
    import torch.nn.functional as F
    if b.op == "conv2d":
        return F.conv2d(x, w, bias, stride=b.stride, padding=b.padding,
                        groups=b.groups)
    return F.conv_transpose2d(x, w, bias, stride=b.stride, padding=b.padding,
                              output_padding=b.output_padding,
                              groups=b.groups)


# Kernels that are not the convolution: cuDNN's layout transforms, PyTorch's
# elementwise kernels (the bias add), copies and fills.
NOT_CONV = re.compile(r"nchwToNhwc|nhwcToNchw|ToNhwc|ToNchw|transpose|"
                      r"elementwise|memcpy|memset|fill|copy|reorder",
                      re.IGNORECASE)


def cudnn_kernels(fn, runs, warmup):
    """Profiles `runs` calls of fn; returns the main kernel (the non-layout,
    non-elementwise kernel with the most time), its ms per run, and every
    kernel's ms per run."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU,
                             ProfilerActivity.CUDA]) as prof:
        for _ in range(runs):
            fn()
        torch.cuda.synchronize()
    per = {}  # name -> [us, ...]
    for e in prof.events():
        if not str(e.device_type).endswith("CUDA"):
            continue
        per.setdefault(e.name, []).append(e.time_range.elapsed_us())
    kernels = sorted(
        ({"name": n, "ms": sum(us) / runs / 1e3, "calls": len(us) / runs,
          "median_call_ms": sorted(us)[len(us) // 2] / 1e3,
          "layout_or_elementwise": bool(NOT_CONV.search(n))}
         for n, us in per.items()), key=lambda k: -k["ms"])
    conv = [k for k in kernels if not k["layout_or_elementwise"]] or kernels
    main = conv[0] if conv else {"name": "(no CUDA kernel seen)", "ms": None}
    return {"kernel": main["name"], "ms": main["ms"],
            "all_ms": sum(k["ms"] for k in kernels), "kernels": kernels}


def free_gpu():
    import torch
    import torch._dynamo
    torch._dynamo.reset()
    gc.collect()
    torch.cuda.empty_cache()


def first_line(text):
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return "(no message)"


def run_kiln(args, kgfile, pfile, xfile, ofile, jfile, resfile=None):
    cmd = [args.kiln, "bench", str(kgfile), "--input", f"x={xfile}",
           *(["--input", f"res={resfile}"] if resfile else []),
           "--params", str(pfile), "--output", f"out={ofile}",
           "--iters", str(args.iters), "--warmup", str(args.warmup),
           "--matmul-precision", args.matmul_precision, "--json", str(jfile)]
    try:
        res = subprocess.run(cmd, capture_output=True, text=True,
                             timeout=args.kiln_timeout)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {args.kiln_timeout} s"
    print(res.stdout, res.stderr, file=sys.stderr, flush=True)
    if res.returncode != 0:
        return None, (f"exit {res.returncode}: "
                      + first_line(res.stderr or res.stdout))
    return json.loads(jfile.read_text()), None


def run_one(b, args, work):
    import numpy as np
    import torch
    from safetensors.torch import save_file
    from bench import rel, time_ms

    from safetensors.torch import load_file

    name = b.name
    half = args.dtype != "f32"
    ext = ".safetensors" if half else ".npy"  # numpy has no bf16
    kgfile = work / f"{name}.kg"
    pfile = work / f"{name}.safetensors"
    xfile = work / f"{name}_x{ext}"
    resfile = work / f"{name}_res{ext}" if b.residual else None
    ofile = work / f"{name}_kiln{ext}"
    jfile = work / f"{name}.json"
    kgfile.write_text(b.kg(args.dtype))

    torch.manual_seed(0)
    dtype = {"f32": torch.float32, "f16": torch.float16,
             "bf16": torch.bfloat16}[args.dtype]
    model = make_module(b).cuda().to(dtype)
    x = torch.rand(*b.x_shape, device="cuda").to(dtype)
    # The module's inputs: x, and the residual where the block adds one.
    ins = (x,) + ((torch.rand(*b.out_shape, device="cuda").to(dtype),)
                  if b.residual else ())
    params = {k: v.detach().contiguous().cpu()
              for k, v in model.params().items()}
    save_file(params, str(pfile))
    for key, f, t in zip(("x", "res"), (xfile, resfile), ins):
        if half:
            save_file({key: t.cpu()}, str(f))
        else:
            np.save(f, t.cpu().numpy())

    row = {"name": name, "shape": b.summary(), "gflop": b.flops / 1e9,
           "matmul_precision": args.matmul_precision, "dtype": args.dtype}
    with torch.no_grad():
        ref32 = model(*ins)
        torch.cuda.synchronize()
        row["eager_ms"] = time_ms(lambda: model(*ins), args.warmup,
                                  args.iters)
        compiled = torch.compile(model)
        t0 = time.perf_counter()
        compiled(*ins)
        torch.cuda.synchronize()
        row["torch_compile_s"] = time.perf_counter() - t0
        row["compile_ms"] = time_ms(lambda: compiled(*ins), args.warmup,
                                    args.iters)
        del compiled

        w, bias = model.conv.weight, model.conv.bias
        for lay, mf in (("nhwc", torch.channels_last),
                        ("nchw", torch.contiguous_format)):
            xl, wl = x.to(memory_format=mf), w.to(memory_format=mf)
            c = cudnn_kernels(lambda: conv_only(b, xl, wl, bias),
                              args.prof_runs, args.warmup)
            del xl, wl
            row[f"cudnn_{lay}_kernel"] = c["kernel"]
            row[f"cudnn_{lay}_ms"] = c["ms"]
            row[f"cudnn_{lay}_all_ms"] = c["all_ms"]
            row[f"cudnn_{lay}_kernels"] = c["kernels"]

        ref64 = copy.deepcopy(model).double()(*(t.double() for t in ins))
        row["torch_err_vs_f64"] = rel(ref32, ref64)
        ref64, ref32 = ref64.cpu(), ref32.cpu()
    del x, ins, model, w, bias
    free_gpu()

    k, err = run_kiln(args, kgfile, pfile, xfile, ofile, jfile, resfile)
    if err is not None:
        row["error"] = err
    else:
        conv = [kk for kk in k["kernels"] if kk["name"].startswith("conv")]
        row.update({
            "kiln_ms": k["total_ms"],
            "kiln_compile_ms": k["compile_ms"],
            "kiln_kernels": [{"name": kk["name"], "ms": kk["ms"],
                              "gbps": kk["gbps"],
                              "strategy": kk.get("strategy", "")}
                             for kk in k["kernels"]],
            "kiln_conv_kernel": ", ".join(kk["name"] for kk in conv) or None,
            "kiln_conv_ms": sum(kk["ms"] for kk in conv) if conv else None,
        })
        row["speedup_vs_compile"] = row["compile_ms"] / row["kiln_ms"]
        for lay in ("nhwc", "nchw"):
            c = row[f"cudnn_{lay}_ms"]
            row[f"cudnn_{lay}_over_kiln_conv"] = (
                c / row["kiln_conv_ms"] if c and row["kiln_conv_ms"] else None)
        with torch.no_grad():
            out = (next(iter(load_file(str(ofile)).values())) if half else
                   torch.from_numpy(np.load(ofile))).cuda()
            r64 = ref64.cuda()
            row["kiln_err_vs_f64"] = rel(out, r64)
            del r64
            row["kiln_err_vs_torch"] = rel(out, ref32.cuda())
            del out
        free_gpu()
    for p in (xfile, resfile, ofile):
        if p is not None and p.exists():
            p.unlink()
    del ref32, ref64
    gc.collect()
    print(json.dumps({kk: v for kk, v in row.items()
                      if not kk.endswith("_kernels")}), flush=True)
    return row


# ----------------------------------------------------------------------------
# Results.
# ----------------------------------------------------------------------------

def fmt(v, spec, suffix=""):
    return "—" if v is None else f"{v:{spec}}{suffix}"


def md_cell(text, limit=None):
    text = str(text).replace("|", "\\|").replace("\n", " ")
    if limit and len(text) > limit:
        text = text[:limit - 1] + "…"
    return text


DTYPE_WORDS = {"f32": "fp32", "f16": "f16", "bf16": "bf16"}


def provenance(path, args, command, names, dev, date):
    """Who measured the rows: this command, or with --append the earlier
    table's account of its rows and then this command's (so a table
    refreshed row by row keeps every command that made it)."""
    import torch
    own = (f"Measured {date} on {dev}, PyTorch {torch.__version__}, cuDNN "
           f"{torch.backends.cudnn.version()}, by `{command}`.")
    marker = f" {DTYPE_WORDS[args.dtype]} NCHW tensors,"
    if not args.append or not path.exists():
        return own
    earlier = path.read_text().split("\n")
    if len(earlier) < 3 or marker not in earlier[2]:
        return own
    return (earlier[2][:earlier[2].index(marker)] +
            f" On {date} ({dev}, PyTorch {torch.__version__}, cuDNN "
            f"{torch.backends.cudnn.version()}), the rows of "
            f"{', '.join(names)} again: `{command}`.")


def write_results(rows, path, args, command, header):
    import torch
    p = args.matmul_precision
    lines = [
        "# Kiln against PyTorch and cuDNN on CNN blocks", "",
        f"{header} {DTYPE_WORDS[args.dtype]} NCHW "
        "tensors, inputs uniform [0, 1); PyTorch's default initialisation "
        "(GroupNorm's "
        "affine randomised). Kiln: `kiln bench --matmul-precision "
        f"{p}`; PyTorch: eager and torch.compile (default settings), cuDNN "
        f"convolutions with torch.backends.cudnn.allow_tf32="
        f"{torch.backends.cudnn.allow_tf32} (TF32), cudnn.benchmark="
        f"{torch.backends.cudnn.benchmark}, "
        f"torch.set_float32_matmul_precision('{p}'). Times: CUDA events, "
        f"median of {args.iters} runs after {args.warmup} warm-up.", "",
        "Kiln conv: its kernel named conv* (bias and activation may be fused "
        "in it). cuDNN: torch.profiler over "
        f"{args.prof_runs} eager runs of the convolution alone, x and weight "
        "channels_last (NHWC) or contiguous (NCHW); the kernel with the most "
        "time once layout transforms and elementwise kernels (the bias add) "
        "are set aside, ms per run. Ratio: cuDNN kernel ms / Kiln conv "
        "kernel ms (above 1: Kiln's kernel is faster). Errors: "
        "||a - ref|| / ||ref||, ref = the PyTorch module in float64 on the "
        "same input.", "",
        "| graph | shape | GFLOP | eager ms | compile ms | Kiln ms | Kiln vs "
        "compile | Kiln conv ms | cuDNN NHWC ms | cuDNN NCHW ms | NHWC / Kiln "
        "| NCHW / Kiln | Kiln err vs f64 | torch err vs f64 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        g = r.get
        if "error" in r:
            kiln = f"failed: {md_cell(r['error'], 160)}"
            rest = ["—"] * 2
        else:
            kiln = fmt(g("kiln_ms"), ".3f")
            rest = [fmt(g("speedup_vs_compile"), ".2f", "x"),
                    fmt(g("kiln_conv_ms"), ".3f")]
        cells = [r["name"], md_cell(r["shape"]), fmt(g("gflop"), ".1f"),
                 fmt(g("eager_ms"), ".3f"), fmt(g("compile_ms"), ".3f"),
                 kiln, *rest, fmt(g("cudnn_nhwc_ms"), ".3f"),
                 fmt(g("cudnn_nchw_ms"), ".3f"),
                 fmt(g("cudnn_nhwc_over_kiln_conv"), ".2f", "x"),
                 fmt(g("cudnn_nchw_over_kiln_conv"), ".2f", "x"),
                 fmt(g("kiln_err_vs_f64"), ".2e"),
                 fmt(g("torch_err_vs_f64"), ".2e")]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "## Kernels", "",
              "Kiln: each kernel of `kiln bench --json`, ms, GB/s (TFLOP/s of "
              "the convolution). cuDNN: every kernel of a run of the "
              "convolution alone, most time first, ms per run; * = layout "
              "transform or elementwise, set aside, so the first without * is "
              "the one in the table.", ""]
    for r in rows:
        lines.append(f"- **{r['name']}**")
        for kk in r.get("kiln_kernels", []):
            tf = ""
            if kk["name"].startswith("conv") and kk["ms"]:
                tf = f", {r['gflop'] / kk['ms']:.1f} TFLOP/s"
            lines.append(f"  - Kiln `{kk['name']}` {kk['ms']:.4f} ms, "
                         f"{kk['gbps']:.0f} GB/s{tf}")
        for f in ("nhwc", "nchw"):
            ks = r.get(f"cudnn_{f}_kernels", [])
            if not ks:
                continue
            parts = [f"`{md_cell(kk['name'], 90)}`"
                     f"{'*' if kk['layout_or_elementwise'] else ''} "
                     f"{kk['ms']:.4f}" for kk in ks]
            lines.append(f"  - cuDNN {f.upper()} ({r[f'cudnn_{f}_all_ms']:.4f} "
                         f"ms in all): " + "; ".join(parts))
    path.write_text("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kiln", default=str(ROOT / "build/frontend/kiln"))
    ap.add_argument("--only", default="",
                    help="comma-separated substrings of graph names")
    ap.add_argument("--part", metavar="K/N",
                    help="only chunk K of N (1-based) of the graphs selected, "
                    "to split the sweep over commands (with --append)")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--prof-runs", type=int, default=5,
                    help="profiled eager runs of each conv for cuDNN's kernel")
    ap.add_argument("--matmul-precision", choices=PRECISIONS, default="high",
                    help="PyTorch's names; for kiln bench and "
                    "torch.set_float32_matmul_precision (default high: TF32)")
    ap.add_argument("--dtype", choices=("f32", "f16", "bf16"), default="f32",
                    help="every tensor's dtype (default f32)")
    ap.add_argument("--cudnn-benchmark", action="store_true",
                    help="set torch.backends.cudnn.benchmark (default off)")
    ap.add_argument("--kiln-timeout", type=int, default=600,
                    help="seconds allowed to each kiln bench")
    ap.add_argument("--out", default=None,
                    help="markdown results (default bench/CONVS.md, or "
                    "bench/CONVS-<mode>.md at another precision); the rows "
                    "also go to the same name with .json")
    ap.add_argument("--append", action="store_true",
                    help="keep the rows of --out's .json for graphs not run")
    ap.add_argument("--list", action="store_true",
                    help="print the graphs and their shapes, then exit")
    ap.add_argument("--write-kg", metavar="DIR",
                    help="write each graph's .kg into DIR, then exit")
    args = ap.parse_args()

    try:
        blocks = select(args.only, args.part)
    except ValueError as e:
        ap.error(str(e))
    if not blocks:
        sys.exit(f"--only {args.only!r} --part {args.part} selects no graph; "
                 "see --list")
    if args.list:
        for b in blocks:
            mib = [4 * s[0] * s[1] * s[2] * s[3] / 2**20
                   for s in (b.x_shape, b.out_shape)]
            print(f"{b.name:36} {b.summary()}  w{b.w_shape}  "
                  f"{b.flops / 1e9:.1f} GFLOP  x {mib[0]:.0f} MiB, out "
                  f"{mib[1]:.0f} MiB")
        return
    if args.write_kg:
        d = pathlib.Path(args.write_kg)
        d.mkdir(parents=True, exist_ok=True)
        for b in blocks:
            (d / f"{b.name}.kg").write_text(b.kg(args.dtype))
            print(d / f"{b.name}.kg")
        return

    if args.out is None:
        suffix = "" if args.matmul_precision == "high" else (
            f"-{args.matmul_precision}")
        if args.dtype != "f32":
            suffix += f"-{args.dtype}"
        args.out = str(ROOT / "bench" / f"CONVS{suffix}.md")
    out = pathlib.Path(args.out)
    side = out.with_suffix(".json")
    command = shlex.join(["python3", "bench/convs.py"] + sys.argv[1:])

    import torch
    # Before any model runs or compiles: torch.compile reads it when it
    # generates code. cuDNN's allow_tf32 stays at PyTorch's default.
    torch.set_float32_matmul_precision(args.matmul_precision)
    if args.cudnn_benchmark:
        torch.backends.cudnn.benchmark = True

    header = provenance(out, args, command, [b.name for b in blocks],
                        torch.cuda.get_device_name(),
                        datetime.date.today().isoformat())
    done = {}
    if args.append and side.exists():
        done = {r["name"]: r for r in json.loads(side.read_text())}
    order = [b.name for b in GRAPHS]
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as d:
        for b in blocks:
            try:
                done[b.name] = run_one(b, args, pathlib.Path(d))
            except Exception as e:  # a PyTorch failure; keep going
                traceback.print_exc(file=sys.stderr)
                done[b.name] = {"name": b.name, "shape": b.summary(),
                                "error": f"script: {type(e).__name__}: "
                                f"{first_line(str(e))}"}
                print(json.dumps(done[b.name]), flush=True)
            if "kiln_ms" not in done[b.name]:
                free_gpu()  # after the traceback let go of the tensors
            rows = sorted(done.values(),
                          key=lambda r: (order.index(r["name"])
                                         if r["name"] in order else 1 << 30))
            side.write_text(json.dumps(rows, indent=1) + "\n")
            write_results(rows, out, args, command, header)
    print(out.read_text(), file=sys.stderr)


if __name__ == "__main__":
    main()
