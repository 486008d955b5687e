#!/usr/bin/env python3
"""Compile-only audit of the convolution kernels: ptxas's warnings and spills.

Needs no GPU (NVRTC compiles for sm_90a here too). Run from the repository
root with a built `kiln` (cuobjdump or nvdisasm on PATH add SASS counts):
    python3 bench/audit_convs.py --kiln build/frontend/kiln
        [--precision high,highest] [--dtype f32,bf16] [--only convT_k4]
        [--out audit.csv]
    python3 bench/audit_convs.py --list      (the graphs, nothing compiled)

Each graph of the grid (conv2d and conv_transpose2d; input channels 8 to 128,
output channels 8 to 128; kernel 1, 3 of stride 1 and 2, 4 of stride 2, and
for conv_transpose2d 3 of stride 2 with output_padding 1; a relu after, or
nothing; batch 8, 64 x 64 images) is compiled by `kiln compile` into a cache
of its own, with ptxas's report on (KILN_NVRTC_OPTIONS=--ptxas-options=-v).
From its output the script takes ptxas's performance warnings (C75xx:
wgmmas serialised, waits added) and each kernel's spill stores and loads in
bytes; where cuobjdump or nvdisasm is on PATH, from `kiln cache show` each
conv kernel's SASS too, whose STL and LDL instructions count the spilling
instructions; from `kiln plan` the kernel's schedule. The no-activation forms and
the bf16 graphs take channels 16 to 128 only. One compile at a time (0.3 to
2 s each; about 35 minutes for all 1458).

Prints one line per kernel that has a warning or a spill, and a summary;
--out writes every kernel as CSV. bench/NOTES.md v34 and v36 tell what an
audit found (C7515 on strided conv_transpose2d of 16 input channels).
"""
import argparse
import csv
import itertools
import os
import re
import shutil
import subprocess
import sys
import tempfile

CINS = [8, 16, 24, 32, 48, 64, 128]
COUTS = [8, 16, 32, 48, 64, 96, 128]
NARROW = [16, 32, 64, 128]  # channels of the no-activation and bf16 graphs
# (kernel, stride, padding, output_padding)
SHAPES = [(3, 1, 1, 0), (3, 2, 1, 0), (1, 1, 0, 0), (4, 2, 1, 0)]
TRANSPOSED_ONLY = [(3, 2, 1, 1)]


def grid(precisions, dtypes):
    """Every (name, kg text, precision) of the audit."""
    for dtype, precision in itertools.product(dtypes, precisions):
        if dtype != "f32" and precision != "high":
            continue  # halves multiply in their type at every precision
        for op in ("conv2d", "conv_transpose2d"):
            shapes = SHAPES + (TRANSPOSED_ONLY if op != "conv2d" else [])
            for epilogue in ("relu", "none"):
                wide = dtype == "f32" and epilogue == "relu"
                for (k, s, p, op_), cin, cout in itertools.product(
                        shapes, CINS if wide else NARROW,
                        COUTS if wide else NARROW):
                    yield (graph_name(op, k, s, p, op_, cin, cout, epilogue,
                                      dtype),
                           graph_kg(op, k, s, p, op_, cin, cout, epilogue,
                                    dtype),
                           precision)


def graph_name(op, k, s, p, op_, cin, cout, epilogue, dtype):
    kind = "c2d" if op == "conv2d" else "ct2d"
    pad = f"op{op_}" if op_ else ""
    return f"{kind}_k{k}s{s}p{p}{pad}_{cin}to{cout}_{epilogue}_{dtype}"


def graph_kg(op, k, s, p, op_, cin, cout, epilogue, dtype):
    w = [cout, cin, k, k] if op == "conv2d" else [cin, cout, k, k]
    attrs = f"stride={s}, padding={p}" + (
        f", output_padding={op_}" if op_ else "")
    tail = ("  out = relu(y)\n  return out\n" if epilogue == "relu"
            else "  return y\n")
    return (f"graph g(x: {dtype}[8, {cin}, 64, 64]) {{\n"
            f"  param w: {dtype}[{', '.join(map(str, w))}] = "
            "uniform(-0.1, 0.1, seed=1)\n"
            f"  param b: {dtype}[{cout}] = uniform(-0.1, 0.1, seed=2)\n"
            f"  y = {op}(x, w, b, {attrs})\n{tail}}}\n")


def run(cmd, cache=None, nvrtc_options=None):
    env = dict(os.environ)
    if cache:
        env["KILN_CACHE_DIR"] = cache
    if nvrtc_options:
        env["KILN_NVRTC_OPTIONS"] = nvrtc_options
    r = subprocess.run(cmd, env=env, capture_output=True, text=True,
                       timeout=600)
    return r.returncode, r.stdout + r.stderr


def spills(sass):
    """The STL and LDL instructions of a SASS listing (predicated too)."""
    ops = re.findall(r"^\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9]*)",
                     sass, re.M)
    return ops.count("STL"), ops.count("LDL")


def spill_bytes(out, kernel):
    """ptxas's spill stores and loads of `kernel` (bytes), from its -v
    report in `kiln compile`'s output; ("", "") where it gave none."""
    m = re.search(r"Compiling entry function '" + re.escape(kernel) +
                  r"'.*?(\d+) bytes spill stores, (\d+) bytes spill loads",
                  out, re.S)
    return (int(m.group(1)), int(m.group(2))) if m else ("", "")


def audit(kiln, name, kg, precision, workdir, sass_tool):
    """One row per kernel of the graph: its warnings, spills, schedule."""
    path = os.path.join(workdir, name + ".kg")
    with open(path, "w") as f:
        f.write(kg)
    cache = tempfile.mkdtemp(dir=workdir)
    try:
        rc, out = run([kiln, "compile", path, "--matmul-precision",
                       precision], cache, "--ptxas-options=-v")
        if rc != 0:
            last = out.strip().splitlines()[-1:] or ["(no output)"]
            return [dict(graph=name, precision=precision, kernel="",
                         warnings="", spill_stores="", spill_loads="",
                         stl="", ldl="", schedule="", error=last[0])]
        _, plan = run([kiln, "plan", path, "--matmul-precision", precision])
        schedules = dict(re.findall(r"kernel \d+: (\S+)\n(?:.*\n)*?\s*"
                                    r"schedule (.*)", plan))
        _, listing = run([kiln, "cache", "list"], cache)
        rows = []
        for key, kernel in re.findall(r"^([0-9a-f]{12})\s+(\S+)", listing,
                                      re.M):
            warnings = sorted(set(re.findall(
                r"\((C75\d\d)\)[^\n]*'" + re.escape(kernel) + "'", out)))
            stores, loads = spill_bytes(out, kernel)
            row = dict(graph=name, precision=precision, kernel=kernel,
                       warnings=" ".join(warnings), spill_stores=stores,
                       spill_loads=loads, stl="", ldl="",
                       schedule=schedules.get(kernel, ""))
            if kernel.startswith("conv") and sass_tool:
                _, shown = run([kiln, "cache", "show", key], cache)
                sass = shown.split("== SASS ==", 1)[-1]
                row["stl"], row["ldl"] = spills(sass)
            rows.append(row)
        return rows
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def spilled(row):
    """Whether ptxas or the SASS shows a spill."""
    return bool(row.get("spill_stores") or row.get("spill_loads")
                or row.get("stl") or row.get("ldl"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kiln", default="build/frontend/kiln")
    ap.add_argument("--precision", default="high,highest",
                    help="comma-separated: high, highest")
    ap.add_argument("--dtype", default="f32,bf16",
                    help="comma-separated: f32, f16, bf16")
    ap.add_argument("--only", default="",
                    help="graphs whose names contain this")
    ap.add_argument("--out", help="every kernel's row as CSV")
    ap.add_argument("--list", action="store_true",
                    help="print the graphs' names and stop")
    args = ap.parse_args()
    todo = [g for g in grid(args.precision.split(","), args.dtype.split(","))
            if args.only in g[0]]
    if args.list:
        for name, _, precision in todo:
            print(name, precision)
        return
    if not todo:
        ap.error(f"--only {args.only!r} selects no graph; see --list")
    sass_tool = shutil.which("cuobjdump") or shutil.which("nvdisasm")
    if not sass_tool:
        print("no cuobjdump or nvdisasm on PATH: spills from ptxas's report "
              "alone (bytes), no SASS counts", file=sys.stderr)
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        for i, (name, kg, precision) in enumerate(todo, 1):
            for row in audit(args.kiln, name, kg, precision, workdir,
                             sass_tool):
                rows.append(row)
                if row.get("error") or row["warnings"] or spilled(row):
                    print(f"{name} {precision} {row['kernel']} "
                          f"{row.get('error') or ''}{row['warnings']} "
                          f"spills {row['spill_stores']} / "
                          f"{row['spill_loads']} bytes, STL {row['stl']} "
                          f"LDL {row['ldl']}  {row['schedule']}", flush=True)
            if i % 50 == 0:
                print(f"({i} of {len(todo)} graphs)", file=sys.stderr,
                      flush=True)
    flagged = [r for r in rows if r["warnings"] or spilled(r)]
    print(f"{len(todo)} graphs, {len(rows)} kernels: "
          f"{sum(1 for r in rows if r['warnings'])} with a C75xx warning, "
          f"{sum(1 for r in rows if spilled(r))} spilling, "
          f"{sum(1 for r in rows if r.get('error'))} failed to compile; "
          f"{len(flagged)} flagged")
    if args.out:
        with open(args.out, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=["graph", "precision", "kernel",
                                              "warnings", "spill_stores",
                                              "spill_loads", "stl", "ldl",
                                              "schedule", "error"])
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
