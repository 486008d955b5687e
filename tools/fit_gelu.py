#!/usr/bin/env python3
"""Fits the polynomial of kiln::geluErf (templates/kiln/ops.cuh).

gelu(x) = x * Phi(x). The normal tail e(a) = Phi(-a), a = |x|, is written as
2^-(1 + a * P(a)); P is smooth (P(0) = 2 / (sqrt(2 pi) ln 2)), so a short
polynomial fits it. An error dP moves e by about ln2 * a * e(a) * dP, so P is
fitted minimax under that weight (Lawson's iteratively reweighted least
squares) on [0, A]; beyond A the kernel takes e as 0.

Then Phi (1 - e for x >= 0, e below) is evaluated as the kernel does, in
float32 with fused multiply-adds (emulated in float64), over [-12, 12], and
its largest error against math.erfc is printed. ex2 is taken as exact here;
the GPU's ex2.approx adds up to 2 ulp of e.

Usage: fit_gelu.py [A [DEGREE]]   (defaults 6 and 7; needs numpy)
"""
import math
import sys

import numpy as np


def main():
    limit = float(sys.argv[1]) if len(sys.argv) > 1 else 6.0
    deg = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    n = 6000
    k = np.arange(n)
    a = limit * (1 - np.cos(np.pi * (k + 0.5) / n)) / 2  # dense at the ends
    e = np.array([0.5 * math.erfc(x / math.sqrt(2)) for x in a])
    target = (-np.log2(e) - 1) / a
    weight = math.log(2) * a * e
    basis = np.vander(a / limit, deg + 1, increasing=True)
    lw = np.full(n, 1.0 / n)
    for _ in range(200):
        w = weight * np.sqrt(lw)
        c, *_ = np.linalg.lstsq(basis * w[:, None], target * w, rcond=None)
        r = np.abs(weight * (basis @ c - target))
        lw = lw * r
        lw /= lw.sum()
    print(f"weighted max error of the fit (float64): {r.max():.3g}")

    f32 = np.float32
    coef = [f32(x) for x in c / limit ** np.arange(deg + 1)]

    def fma(x, y, z):
        return f32(np.float64(x) * np.float64(y) + np.float64(z))

    def phi(x):
        ax = f32(abs(x))
        p = coef[deg]
        for j in range(deg - 1, -1, -1):
            p = fma(p, ax, coef[j])
        ex = fma(ax, p, f32(1))
        tail = f32(2.0 ** -min(float(ex), 1000.0)) if ax < limit else f32(0)
        return f32(1) - tail if x >= 0 else tail

    worst, at = 0.0, 0.0
    for x in np.linspace(-12, 12, 240001, dtype=np.float32):
        err = abs(float(phi(x)) - 0.5 * math.erfc(-float(x) / math.sqrt(2)))
        if err > worst:
            worst, at = err, float(x)
    print(f"largest |Phi error| in float32: {worst:.3g} at x = {at:.6g}")
    print("coefficients, highest degree first (Horner):")
    for x in reversed(coef):
        print(f"  {float(x):.9e}f")


if __name__ == "__main__":
    main()
