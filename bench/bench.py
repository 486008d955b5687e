#!/usr/bin/env python3
"""Kiln against PyTorch eager and torch.compile on the five flagship workloads.

Run on the GPU machine from the repository root, with a built `kiln`:
    python3 bench/bench.py --kiln build/frontend/kiln [--only l1_35,l2_62]
        [--matmul-precision highest|high|medium]

For each workload of WORKLOADS.md it builds the PyTorch module with a fixed
seed, saves its parameters (safetensors, under the .kg names) and its input
(.npy), times PyTorch eager and torch.compile (CUDA events, warm-up, median)
and then `kiln bench` on the same files in the same run, and compares the
outputs: relative error ||a - b|| / ||b|| against PyTorch's fp32 output and
against a float64 PyTorch run. Writes bench/RESULTS.md (device, date, table),
or bench/RESULTS-<mode>.md at a --matmul-precision other than highest.
--matmul-precision (PyTorch's names, default highest: strict fp32) is set on
both sides: torch.set_float32_matmul_precision for PyTorch's matmuls, eager
and torch.compile, and `kiln bench --matmul-precision` for Kiln's linear.
Convolutions keep PyTorch's default either way: TF32 in cuDNN.
"""
import argparse
import datetime
import json
import os
import pathlib
import subprocess
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from safetensors.torch import save_file

ROOT = pathlib.Path(__file__).resolve().parent.parent


class L1_35(nn.Module):
    def __init__(self):
        super().__init__()
        self.gn = nn.GroupNorm(8, 64)

    def forward(self, x):
        return self.gn(x)

    def params(self):
        return {"gamma": self.gn.weight, "beta": self.gn.bias}


class L2_19(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.ConvTranspose2d(64, 64, kernel_size=3, stride=1)
        self.gn = nn.GroupNorm(8, 64)

    def forward(self, x):
        return self.gn(F.gelu(self.conv(x)))

    def params(self):
        return {"w": self.conv.weight, "b": self.conv.bias,
                "gamma": self.gn.weight, "beta": self.gn.bias}


class L2_37(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(1024, 4096)
        self.bias = nn.Parameter(torch.randn(4096))
        self.gn = nn.GroupNorm(64, 4096)

    def forward(self, x):
        y = self.lin(x)
        return self.gn(torch.sigmoid(y) * y + self.bias)

    def params(self):
        return {"w": self.lin.weight, "b": self.lin.bias, "bias": self.bias,
                "gamma": self.gn.weight, "beta": self.gn.bias}


class L2_62(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8192, 8192)
        self.gn = nn.GroupNorm(512, 8192, eps=1e-5)

    def forward(self, x):
        x = F.leaky_relu(self.gn(self.lin(x)), negative_slope=0.01)
        return x + x

    def params(self):
        return {"w": self.lin.weight, "b": self.lin.bias,
                "gamma": self.gn.weight, "beta": self.gn.bias}


class L2_75(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8192, 8192)
        self.gn = nn.GroupNorm(512, 8192)
        self.bias = nn.Parameter(torch.randn(1, 8192, 1, 1))

    def forward(self, x):
        x = self.gn(self.lin(x))
        return torch.min(x, dim=1, keepdim=True)[0] + self.bias

    def params(self):
        return {"w": self.lin.weight, "b": self.lin.bias,
                "gamma": self.gn.weight, "beta": self.gn.bias,
                "bias": self.bias}


# torch.set_float32_matmul_precision's modes, which `kiln --matmul-precision`
# takes by the same names.
PRECISIONS = {
    "highest": "strict fp32",
    "high": "TF32",
    "medium": "bf16 allowed; Kiln runs TF32",
}

WORKLOADS = {
    "l1_35": (L1_35, [112, 64, 512, 512]),
    "l2_19": (L2_19, [128, 64, 256, 256]),
    "l2_37": (L2_37, [32768, 1024]),
    "l2_62": (L2_62, [1024, 8192]),
    "l2_75": (L2_75, [1024, 8192]),
}


def time_ms(fn, warmup, iters):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    return sorted(times)[len(times) // 2]


def rel(a, b):
    a = a.double()
    b = b.double()
    return ((a - b).norm() / b.norm()).item()


def run_one(name, args, work):
    cls, shape = WORKLOADS[name]
    torch.manual_seed(0)
    model = cls().cuda()
    x = torch.rand(*shape, device="cuda")
    params = {k: v.detach().contiguous().cpu() for k, v in model.params().items()}
    pfile = work / f"{name}.safetensors"
    xfile = work / f"{name}_x.npy"
    ofile = work / f"{name}_kiln.npy"
    save_file(params, str(pfile))
    np.save(xfile, x.cpu().numpy())

    with torch.no_grad():
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        ref32 = model(x)
        torch.cuda.synchronize()
        torch_peak = torch.cuda.max_memory_allocated() - base
        eager = time_ms(lambda: model(x), args.warmup, args.iters)
        compiled = torch.compile(model)
        compiled(x)
        comp = time_ms(lambda: compiled(x), args.warmup, args.iters)
        ref64 = model.double()(x.double()).cpu()
        model.float()
        ref32 = ref32.cpu()
    del x, compiled
    torch.cuda.empty_cache()

    jfile = work / f"{name}.json"
    cmd = [args.kiln, "bench", str(ROOT / "examples" / f"{name}.kg"),
           "--input", f"x={xfile}", "--params", str(pfile), "--output",
           f"out={ofile}", "--iters", str(args.iters), "--warmup",
           str(args.warmup), "--matmul-precision", args.matmul_precision,
           "--json", str(jfile)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    print(res.stdout, res.stderr, flush=True)
    if res.returncode != 0:
        return {"name": name, "error": res.stderr.strip().splitlines()[-1:]}
    k = json.loads(jfile.read_text())
    out = torch.from_numpy(np.load(ofile))
    row = {
        "name": name, "matmul_precision": args.matmul_precision,
        "eager_ms": eager, "compile_ms": comp,
        "kiln_ms": k["total_ms"], "kernels": k["kernels"],
        "err_vs_torch": rel(out, ref32), "kiln_err_vs_f64": rel(out, ref64),
        "torch_err_vs_f64": rel(ref32, ref64),
        "torch_peak_bytes": torch_peak,
        "kiln_bytes": k["intermediate_bytes"] + out.numel() * 4,
        "copy_gbps": k["copy_gbps"], "bytes": k["bytes"],
        "kiln_compile_ms": k["compile_ms"],
    }
    for p in (xfile, ofile):
        p.unlink()
    print(json.dumps({kk: v for kk, v in row.items() if kk != "kernels"}),
          flush=True)
    return row


def write_results(rows, path, precision):
    dev = torch.cuda.get_device_name()
    date = datetime.date.today().isoformat()
    what = PRECISIONS[precision]
    command = "python3 bench/bench.py"
    if precision != "highest":
        command += f" --matmul-precision {precision}"
    lines = [
        "# Kiln against PyTorch", "",
        f"Measured {date} on {dev}, PyTorch {torch.__version__}, by "
        f"`{command}` (CUDA events, warm-up, median). fp32 tensors; matmul "
        f"precision {precision} ({what}) on both sides: "
        f"torch.set_float32_matmul_precision('{precision}'), `kiln "
        f"--matmul-precision {precision}`; PyTorch's TF32 convolutions "
        "(cuDNN).", "",
        f"| workload ({precision}) | eager ms | torch.compile ms | Kiln ms | "
        "Kiln vs eager | "
        "Kiln vs compile | Kiln err vs torch | Kiln err vs f64 | torch err vs "
        "f64 | Kiln device bytes (interm. + out) | torch eager peak bytes |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['name']} | failed: {r['error']} |")
            continue
        lines.append(
            f"| {r['name']} | {r['eager_ms']:.3f} | {r['compile_ms']:.3f} | "
            f"{r['kiln_ms']:.3f} | {r['eager_ms'] / r['kiln_ms']:.2f}x | "
            f"{r['compile_ms'] / r['kiln_ms']:.2f}x | {r['err_vs_torch']:.2e} | "
            f"{r['kiln_err_vs_f64']:.2e} | {r['torch_err_vs_f64']:.2e} | "
            f"{r['kiln_bytes'] / 2**20:.0f} MiB | "
            f"{r['torch_peak_bytes'] / 2**20:.0f} MiB |")
    lines += ["", "Per kernel (Kiln):", ""]
    for r in rows:
        for k in r.get("kernels", []):
            lines.append(f"- {r['name']}: `{k['name']}` {k['ms']:.4f} ms, "
                         f"{k['gbps']:.0f} GB/s "
                         f"({100 * k['gbps'] / r['copy_gbps']:.0f}% of copy "
                         f"{r['copy_gbps']:.0f} GB/s); {k['strategy']}")
    path.write_text("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kiln", default=str(ROOT / "build/frontend/kiln"))
    ap.add_argument("--only", default="", help="comma-separated workloads")
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--matmul-precision", choices=list(PRECISIONS),
                    default="highest",
                    help="f32 matmul precision, PyTorch's names, for both "
                    "PyTorch and Kiln (default highest)")
    ap.add_argument("--out", default=None,
                    help="markdown results (default bench/RESULTS.md, or "
                    "bench/RESULTS-<mode>.md at another precision)")
    args = ap.parse_args()
    if args.out is None:
        suffix = ("" if args.matmul_precision == "highest"
                  else f"-{args.matmul_precision}")
        args.out = str(ROOT / "bench" / f"RESULTS{suffix}.md")
    # Before any model runs or compiles: torch.compile reads it when it
    # generates code.
    torch.set_float32_matmul_precision(args.matmul_precision)
    names = [n for n in WORKLOADS if not args.only or n in args.only.split(",")]
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as d:
        rows = [run_one(n, args, pathlib.Path(d)) for n in names]
    write_results(rows, pathlib.Path(args.out), args.matmul_precision)
    print(pathlib.Path(args.out).read_text())


if __name__ == "__main__":
    main()
