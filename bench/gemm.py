#!/usr/bin/env python3
"""Kiln's linear against cuBLAS (torch.nn.functional.linear), plain GEMM.

Run on the GPU machine from the repository root, with a built `kiln`:
    python3 bench/gemm.py --kiln build/frontend/kiln [--iters 20]
        [--out bench/GEMM.md]

For each shape y[M, N] = x[M, K] @ w[N, K]^T of SHAPES and each matmul
precision (PyTorch's names: highest, high, medium) it writes a one-op graph
(`y = linear(x, w)`), saves x (.npy, standard normal) and w (.safetensors,
uniform [-0.01, 0.01)), and times, on the same data in the same run:
`kiln bench --matmul-precision P` (its median of --iters runs, CUDA
events) and F.linear on CUDA tensors with torch.set_float32_matmul_precision
(P) (CUDA events, warm-up, median of --iters runs). Each result is compared
with F.linear in float64 on the same data: relative error ||y - ref|| /
||ref||. Kiln's result is the output `kiln bench --output` writes after
timing: the very kernel timed. Prints one JSON line per measurement and a
Markdown table (also written to --out).

Then, per shape, the same in bf16 storage (x and w rounded to bf16, saved
as .safetensors; `kiln bench` at its default precision, since bf16 products
are exact at every one; F.linear on bf16 tensors, cuBLAS's bf16 GEMM), the
error against float64 on the bf16 values. --dtypes picks f32, bf16 or both.
"""
import argparse
import datetime
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from bench import PRECISIONS, ROOT, rel, time_ms  # noqa: E402

# (M, N, K) and where the shape comes from.
SHAPES = [
    ((1024, 8192, 8192), "L2_62/75"),
    ((32768, 4096, 1024), "L2_37"),
    ((8192, 8192, 8192), "square"),
    ((64, 4096, 4096), "few rows: split-K"),
    ((256, 1024, 16384), "long K: split-K"),
]


def graph_text(m, n, k, dtype="f32"):
    return (f"# y[{m}, {n}] = x[{m}, {k}] @ w[{n}, {k}]^T (bench/gemm.py)\n"
            f"graph gemm_{m}x{n}x{k}(x: {dtype}[{m}, {k}]) {{\n"
            f"  param w: {dtype}[{n}, {k}] = uniform(-0.01, 0.01, seed=1)\n"
            "  y = linear(x, w)\n"
            "  return y\n"
            "}\n")


def tflops(m, n, k, ms):
    return 2.0 * m * n * k / (ms * 1e9)


def run_kiln(args, kg, xfile, wfile, precision, work):
    """`kiln bench` at `precision`: its JSON, and its output y (on the GPU),
    or an error row's text. x and y are .npy for f32, .safetensors (tensor
    x, y) for bf16."""
    jfile = work / f"{kg.stem}_{precision}.json"
    ext = xfile.suffix
    yfile = work / f"{kg.stem}_{precision}_y{ext}"
    cmd = [args.kiln, "bench", str(kg), "--input", f"x={xfile}", "--params",
           str(wfile), "--output", f"y={yfile}", "--iters", str(args.iters),
           "--warmup", str(args.warmup), "--matmul-precision", precision,
           "--json", str(jfile)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    print(res.stdout, res.stderr, flush=True)
    if res.returncode != 0:
        return None, None, " ".join(res.stderr.strip().splitlines()[-1:])
    k = json.loads(jfile.read_text())
    y = (load_file(str(yfile))["y"] if ext == ".safetensors" else
         torch.from_numpy(np.load(yfile))).cuda()
    yfile.unlink()
    return k, y, None


def run_bf16(shape, source, args, work):
    """The bf16-storage row of `shape`."""
    m, n, k = shape
    kg = work / f"gemm_{m}x{n}x{k}_bf16.kg"
    kg.write_text(graph_text(m, n, k, "bf16"))
    torch.manual_seed(0)
    x = torch.randn(m, k, device="cuda").bfloat16()
    w = torch.empty(n, k, device="cuda").uniform_(-0.01, 0.01).bfloat16()
    xfile = work / f"{kg.stem}_x.safetensors"
    wfile = work / f"{kg.stem}_w.safetensors"
    save_file({"x": x.cpu().contiguous()}, str(xfile))
    save_file({"w": w.cpu().contiguous()}, str(wfile))
    with torch.no_grad():
        ref = F.linear(x.double(), w.double())
        y = F.linear(x, w)
    row = {"shape": f"{m} x {n} x {k}", "source": source,
           "precision": "bf16 storage", "torch_err": rel(y.float(), ref)}
    del y
    with torch.no_grad():
        row["torch_ms"] = time_ms(lambda: F.linear(x, w), args.warmup,
                                  args.iters)
    row["torch_tflops"] = tflops(m, n, k, row["torch_ms"])
    kj, ky, error = run_kiln(args, kg, xfile, wfile, "highest", work)
    if error is not None:
        row["error"] = error
    else:
        row["kiln_ms"] = kj["total_ms"]
        row["kiln_tflops"] = tflops(m, n, k, kj["total_ms"])
        row["kiln_err"] = rel(ky.float(), ref)
        row["kiln_kernels"] = [kk["strategy"] for kk in kj["kernels"]]
        row["kiln_vs_cublas"] = row["kiln_tflops"] / row["torch_tflops"]
        del ky
    print(json.dumps(row), flush=True)
    for p in (xfile, wfile, kg):
        p.unlink()
    del x, w, ref
    torch.cuda.empty_cache()
    return [row]


def run_shape(shape, source, args, work):
    m, n, k = shape
    kg = work / f"gemm_{m}x{n}x{k}.kg"
    kg.write_text(graph_text(m, n, k))
    torch.manual_seed(0)
    x = torch.randn(m, k, device="cuda")
    w = torch.empty(n, k, device="cuda").uniform_(-0.01, 0.01)
    xfile = work / f"{kg.stem}_x.npy"
    wfile = work / f"{kg.stem}_w.safetensors"
    np.save(xfile, x.cpu().numpy())
    save_file({"w": w.cpu().contiguous()}, str(wfile))
    with torch.no_grad():
        ref = F.linear(x.double(), w.double())

    rows = []
    for precision in PRECISIONS:
        row = {"shape": f"{m} x {n} x {k}", "source": source,
               "precision": precision}
        torch.set_float32_matmul_precision(precision)
        with torch.no_grad():
            y = F.linear(x, w)
            row["torch_err"] = rel(y, ref)
            del y
            row["torch_ms"] = time_ms(lambda: F.linear(x, w), args.warmup,
                                      args.iters)
        row["torch_tflops"] = tflops(m, n, k, row["torch_ms"])
        kj, ky, error = run_kiln(args, kg, xfile, wfile, precision, work)
        if error is not None:
            row["error"] = error
        else:
            row["kiln_ms"] = kj["total_ms"]
            row["kiln_tflops"] = tflops(m, n, k, kj["total_ms"])
            row["kiln_err"] = rel(ky, ref)
            row["kiln_kernels"] = [kk["strategy"] for kk in kj["kernels"]]
            row["kiln_vs_cublas"] = row["kiln_tflops"] / row["torch_tflops"]
            del ky
        print(json.dumps(row), flush=True)
        rows.append(row)
    torch.set_float32_matmul_precision("highest")
    for p in (xfile, wfile, kg):
        p.unlink()
    del x, w, ref
    torch.cuda.empty_cache()
    return rows


def table(rows, args):
    dev = torch.cuda.get_device_name()
    date = datetime.date.today().isoformat()
    lines = [
        "# Kiln's linear against cuBLAS", "",
        f"Measured {date} on {dev}, PyTorch {torch.__version__}, by "
        f"`python3 bench/gemm.py --iters {args.iters}` (CUDA events, "
        "warm-up, median). y = x @ w^T in f32, x standard normal, w uniform "
        "[-0.01, 0.01) (rows `bf16 storage`: both rounded to bf16, "
        "cuBLAS's bf16 GEMM); cuBLAS through F.linear with "
        "torch.set_float32_matmul_precision, Kiln with `kiln bench "
        "--matmul-precision`; errors are ||y - ref|| / ||ref|| against "
        "F.linear in float64. Precisions: "
        + "; ".join(f"{p}: {what}" for p, what in PRECISIONS.items()) + ".",
        "",
        "| shape (M x N x K) | precision | Kiln ms | Kiln TFLOP/s | "
        "cuBLAS ms | cuBLAS TFLOP/s | Kiln / cuBLAS | Kiln rel err | "
        "torch rel err |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        shape = f"{r['shape']} ({r['source']})"
        if "error" in r:
            lines.append(
                f"| {shape} | {r['precision']} | failed: {r['error']} | | "
                f"{r['torch_ms']:.3f} | {r['torch_tflops']:.1f} | | | "
                f"{r['torch_err']:.2e} |")
            continue
        lines.append(
            f"| {shape} | {r['precision']} | {r['kiln_ms']:.3f} | "
            f"{r['kiln_tflops']:.1f} | {r['torch_ms']:.3f} | "
            f"{r['torch_tflops']:.1f} | {100 * r['kiln_vs_cublas']:.0f}% | "
            f"{r['kiln_err']:.2e} | {r['torch_err']:.2e} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kiln", default=str(ROOT / "build/frontend/kiln"))
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--out", default=None,
                    help="also write the Markdown table to this file")
    ap.add_argument("--dtypes", default="f32,bf16",
                    help="storage dtypes to time: f32, bf16 or both")
    args = ap.parse_args()
    dtypes = args.dtypes.split(",")
    rows = []
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as d:
        for shape, source in SHAPES:
            if "f32" in dtypes:
                rows += run_shape(shape, source, args, pathlib.Path(d))
            if "bf16" in dtypes:
                rows += run_bf16(shape, source, args, pathlib.Path(d))
    text = table(rows, args)
    if args.out:
        pathlib.Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
