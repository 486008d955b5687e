#!/usr/bin/env python3
"""Kiln against PyTorch eager and torch.compile on f16 and bf16 graphs.

Run on the GPU machine from the repository root, with a built `kiln`:
    python3 bench/half.py --kiln build/frontend/kiln [--only gn_f16]

Workloads: L1_35's GroupNorm(8, 64) on x [N, 64, 512, 512], L2_37's tail
(swish, + bias, GroupNorm(64, 4096)) on x [32768, 4096], gelu + bias on
x [16384, 8192] and L2_19 (ConvTranspose2d(64, 64, 3) -> gelu ->
GroupNorm(8, 64)) on x [128, 64, 256, 256], each in f16 and in bf16, with
random parameters. As bench.py: same inputs and
parameters (.safetensors), CUDA events, warm-up, median, all in one run;
outputs compared with PyTorch eager in the same dtype and with a float64
PyTorch run. Prints one JSON line per workload and a Markdown table.
"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile

import torch
import torch.nn as nn
from safetensors.torch import load_file, save_file

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from bench import ROOT, rel, time_ms  # noqa: E402


class GroupNorm(nn.Module):
    def __init__(self, groups, channels):
        super().__init__()
        self.gn = nn.GroupNorm(groups, channels)
        nn.init.uniform_(self.gn.weight, 0.5, 1.5)
        nn.init.uniform_(self.gn.bias, -1, 1)

    def forward(self, x):
        return self.gn(x)

    def params(self):
        return {"gamma": self.gn.weight, "beta": self.gn.bias}


class SwishBiasGroupNorm(GroupNorm):
    def __init__(self):
        super().__init__(64, 4096)
        self.bias = nn.Parameter(torch.randn(4096))

    def forward(self, x):
        return self.gn(x * torch.sigmoid(x) + self.bias)

    def params(self):
        return {**super().params(), "bias": self.bias}


class GeluBias(nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(8192))

    def forward(self, x):
        return torch.nn.functional.gelu(x) + self.bias

    def params(self):
        return {"bias": self.bias}


class ConvTGeluGroupNorm(GroupNorm):
    def __init__(self):
        super().__init__(8, 64)
        self.conv = nn.ConvTranspose2d(64, 64, 3)

    def forward(self, x):
        return self.gn(torch.nn.functional.gelu(self.conv(x)))

    def params(self):
        return {**super().params(), "w": self.conv.weight,
                "b": self.conv.bias}


KG = {
    "gelu_bias": """graph gelu_bias(x: {t}[N, 8192]) {{
  param bias: {t}[8192]
  g = gelu(x)
  out = add(g, bias)
  return out
}}
""",
    "gn": """graph gn(x: {t}[N, 64, 512, 512]) {{
  param gamma: {t}[64]
  param beta: {t}[64]
  out = group_norm(x, gamma, beta, groups=8)
  return out
}}
""",
    "l2_19": """graph l2_19(x: {t}[N, 64, 256, 256]) {{
  param w: {t}[64, 64, 3, 3]
  param b: {t}[64]
  param gamma: {t}[64]
  param beta: {t}[64]
  y = conv_transpose2d(x, w, b)
  g = gelu(y)
  out = group_norm(g, gamma, beta, groups=8)
  return out
}}
""",
    "swish_gn": """graph swish_gn(x: {t}[N, 4096]) {{
  param gamma: {t}[4096]
  param beta: {t}[4096]
  param bias: {t}[4096]
  s = swish(x)
  b = add(s, bias)
  out = group_norm(b, gamma, beta, groups=64)
  return out
}}
""",
}
DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16}


def workloads(n):
    out = {}
    for t in DTYPES:
        out[f"gn_{t}"] = ("gn", t, lambda: GroupNorm(8, 64), [n, 64, 512, 512])
        out[f"swish_gn_{t}"] = ("swish_gn", t, SwishBiasGroupNorm,
                                [32768, 4096])
        out[f"gelu_bias_{t}"] = ("gelu_bias", t, GeluBias, [16384, 8192])
        out[f"l2_19_{t}"] = ("l2_19", t, ConvTGeluGroupNorm,
                             [128, 64, 256, 256])
    return out


def run_one(name, spec, args, work):
    kg_name, t, make, shape = spec
    dtype = DTYPES[t]
    torch.manual_seed(0)
    model = make().cuda().to(dtype)
    x = torch.rand(*shape, device="cuda", dtype=dtype)
    kg = work / f"{name}.kg"
    kg.write_text(KG[kg_name].format(t=t))
    pfile = work / f"{name}.safetensors"
    xfile = work / f"{name}_x.safetensors"
    ofile = work / f"{name}_kiln.safetensors"
    save_file({k: v.detach().contiguous().cpu()
               for k, v in model.params().items()}, str(pfile))
    save_file({"x": x.cpu()}, str(xfile))
    with torch.no_grad():
        ref = model(x)
        eager = time_ms(lambda: model(x), args.warmup, args.iters)
        compiled = torch.compile(model)
        compiled(x)
        comp = time_ms(lambda: compiled(x), args.warmup, args.iters)
        ref64 = model.double()(x.double()).cpu()
        ref = ref.cpu()
    del x, compiled, model
    torch.cuda.empty_cache()

    jfile = work / f"{name}.json"
    cmd = [args.kiln, "bench", str(kg), "--input", f"x={xfile}",
           "--params", str(pfile), "--output", f"out={ofile}", "--iters",
           str(args.iters), "--warmup", str(args.warmup), "--json",
           str(jfile)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    print(res.stdout, res.stderr, flush=True)
    if res.returncode != 0:
        return {"name": name, "error": res.stderr.strip().splitlines()[-1:]}
    k = json.loads(jfile.read_text())
    out = load_file(str(ofile))["out"]
    row = {
        "name": name, "shape": shape, "eager_ms": eager, "compile_ms": comp,
        "kiln_ms": k["total_ms"], "kiln_vs_eager": rel(out, ref),
        "kiln_err_vs_f64": rel(out, ref64),
        "eager_err_vs_f64": rel(ref, ref64),
        "copy_gbps": k["copy_gbps"], "bytes": k["bytes"],
        "kiln_compile_ms": k["compile_ms"],
        "kiln_kernels": [(kk["name"], kk["ms"]) for kk in k["kernels"]],
    }
    for p in (xfile, ofile):
        p.unlink()
    print(json.dumps(row), flush=True)
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kiln", required=True, help="path to the kiln binary")
    ap.add_argument("--only", default="", help="comma-separated names")
    ap.add_argument("--n", type=int, default=112,
                    help="batch of the GroupNorm workloads (default 112)")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    args = ap.parse_args()
    names = workloads(args.n)
    only = [s for s in args.only.split(",") if s]
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for name, spec in names.items():
            if not only or name in only:
                rows.append(run_one(name, spec, args, pathlib.Path(d)))
    print(f"\n{torch.cuda.get_device_name()}, torch {torch.__version__}\n")
    print("| workload | eager ms | torch.compile ms | Kiln ms | vs eager | "
          "vs compile | Kiln vs eager | Kiln err vs f64 | eager err vs f64 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "error" in r:
            print(f"| {r['name']} | error: {r['error']} |")
            continue
        print(f"| {r['name']} | {r['eager_ms']:.3f} | {r['compile_ms']:.3f} | "
              f"{r['kiln_ms']:.3f} | {r['eager_ms'] / r['kiln_ms']:.2f}x | "
              f"{r['compile_ms'] / r['kiln_ms']:.2f}x | "
              f"{r['kiln_vs_eager']:.2e} | {r['kiln_err_vs_f64']:.2e} | "
              f"{r['eager_err_vs_f64']:.2e} |")
    print()
    for r in rows:
        if "error" not in r:
            print(f"- {r['name']}: " + ", ".join(
                f"`{n}` {ms:.3f} ms" for n, ms in r["kiln_kernels"]))


if __name__ == "__main__":
    main()
