#!/usr/bin/env python3
"""Writes .kg graphs that stress the fusion partitioner (issue 24).

  fusion_stress.py chain N      a chain of N elementwise ops on one input,
                                cycling add / mul / sigmoid (each add and mul
                                also reads the input x)
  fusion_stress.py siblings N   N siblings y_i = add(x, i), each an output

The graph goes to stdout; x is f32[1024, 1024] (pass --rows/--cols to
change it). Time NVRTC with the disk cache off, e.g.
  KILN_CACHE_DISABLE=1 kiln compile chain.kg --arch sm_90
"""
import argparse


def chain(n, shape):
    lines = [f"graph chain_{n}(x: f32[{shape}]) {{", "  p0 = add(x, 1.5)"]
    steps = ["mul(p{}, x)", "sigmoid(p{})", "add(p{}, x)"]
    for i in range(1, n):
        lines.append(f"  p{i} = " + steps[i % 3].format(i - 1))
    lines += [f"  return p{n - 1}", "}"]
    return "\n".join(lines) + "\n"


def siblings(n, shape):
    lines = [f"graph siblings_{n}(x: f32[{shape}]) {{"]
    lines += [f"  y{i} = add(x, {i})" for i in range(n)]
    lines += ["  return " + ", ".join(f"y{i}" for i in range(n)), "}"]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("kind", choices=["chain", "siblings"])
    ap.add_argument("n", type=int)
    ap.add_argument("--rows", type=int, default=1024)
    ap.add_argument("--cols", type=int, default=1024)
    a = ap.parse_args()
    shape = f"{a.rows}, {a.cols}"
    print((chain if a.kind == "chain" else siblings)(a.n, shape), end="")


if __name__ == "__main__":
    main()
