#!/usr/bin/env python3
"""One NaN or inf in one sample of each flagship's input, Kiln against PyTorch.

Run on the GPU machine from the repository root, with a built `kiln`:
    python3 bench/nan_leak.py --kiln build/frontend/kiln
        [--matmul-precision high] [--only l2_19,l1_35]

For each workload of bench.py (at a smaller batch) and each of NaN and +inf,
it sets one element of sample 1 of x, runs `kiln run` on it, and compares the
output with the PyTorch module run in float64 on the same data: the places
that are NaN and those that are infinite must be the same (a group_norm
makes every value of the sample's affected groups NaN, and no other
sample's), and it prints the relative error over the values finite in both.
It exits 1 if any place differs. (A GroupNorm team carried a NaN mean from
one slice into the next: bench/NOTES.md v42.)
"""
import argparse
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
import torch
from safetensors.torch import save_file

from bench import PRECISIONS, ROOT, WORKLOADS

SHAPES = {"l1_35": [16, 64, 512, 512], "l2_19": [8, 64, 256, 256],
          "l2_37": [4096, 1024], "l2_62": [256, 8192], "l2_75": [256, 8192]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kiln", default=str(ROOT / "build/frontend/kiln"))
    ap.add_argument("--matmul-precision", choices=list(PRECISIONS),
                    default="highest")
    ap.add_argument("--only", default="", help="comma-separated workloads")
    args = ap.parse_args()
    only = [w for w in args.only.split(",") if w]
    work = pathlib.Path(tempfile.mkdtemp())
    bad_places = 0
    for name, (cls, _) in WORKLOADS.items():
        if only and name not in only:
            continue
        for bad in (float("nan"), float("inf")):
            torch.manual_seed(0)
            model = cls().cuda()
            x = torch.rand(*SHAPES[name], device="cuda")
            x[1].view(-1)[12345 % x[1].numel()] = bad
            save_file({k: v.detach().contiguous().cpu()
                       for k, v in model.params().items()},
                      str(work / "p.safetensors"))
            np.save(work / "x.npy", x.cpu().numpy())
            res = subprocess.run(
                [args.kiln, "run", str(ROOT / "examples" / f"{name}.kg"),
                 "--input", f"x={work / 'x.npy'}", "--params",
                 str(work / "p.safetensors"), "--output",
                 f"out={work / 'o.npy'}", "--matmul-precision",
                 args.matmul_precision], capture_output=True, text=True)
            if res.returncode:
                print(f"{name}: kiln failed\n{res.stderr}", flush=True)
                bad_places += 1
                continue
            out = torch.from_numpy(np.load(work / "o.npy")).double()
            with torch.no_grad():
                ref = model.double()(x.double()).cpu()
            nan = int((torch.isnan(out) != torch.isnan(ref)).sum())
            inf = int((torch.isinf(out) != torch.isinf(ref)).sum())
            fin = torch.isfinite(out) & torch.isfinite(ref)
            err = ((out[fin] - ref[fin]).norm() / ref[fin].norm()).item()
            bad_places += nan + inf
            print(f"{name} {args.matmul_precision} {bad}: NaN Kiln "
                  f"{int(torch.isnan(out).sum())}, PyTorch "
                  f"{int(torch.isnan(ref).sum())}, places differing: NaN "
                  f"{nan}, inf {inf}; error on the rest {err:.2e}",
                  flush=True)
    sys.exit(1 if bad_places else 0)


if __name__ == "__main__":
    main()
