// CPU emulation of gnTeam's statistics (float moments per thread, warp
// butterfly, double across warps and the team's 2 blocks) for one team's
// slices: x, x * big, x, x, x. RETRIES: re-sums about the mean allowed
// (1 before v43; 2 since). Build: g++ -O2 -DRETRIES=2 gn_team_emu.cpp;
// run: ./a.out 1e15. bench/NOTES.md v42.
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>
const int TB = 2, TH = 512, VEC = 4;
const long L = 32768, CH = L / TB;
const double invLen = 1.0 / double(L);
const float eps = 1e-5f;
struct St {
  float meanHi, meanLo, rstd, lowShift;
};
static float finiteShift(double m, bool fixed) {
  return !fixed || std::isfinite(m) ? (float)m : 0.f;
}
// moments about c of a slice, per thread float, warp butterfly, block double,
// team double
static void combine(const std::vector<float> &v, float c, double st[2]) {
  double acc[2] = {0, 0};
  for (int b = 0; b < TB; ++b) {
    float s1[TH], s2[TH];
    for (int t = 0; t < TH; ++t) {
      float a = 0, q = 0;
      for (long e = b * CH + t * VEC; e < (b + 1) * CH; e += TH * VEC)
        for (int l = 0; l < VEC; ++l) {
          float d = v[e + l] - c;
          a += d;
          q = std::fmaf(d, d, q);
        }
      s1[t] = a;
      s2[t] = q;
    }
    double tt[2] = {0, 0};
    for (int w = 0; w < TH / 32; ++w) {
      float x1[32], x2[32];
      for (int i = 0; i < 32; ++i)
        x1[i] = s1[w * 32 + i], x2[i] = s2[w * 32 + i];
      for (int o = 16; o > 0; o /= 2) {
        float y1[32], y2[32];
        for (int i = 0; i < 32; ++i)
          y1[i] = x1[i] + x1[i ^ o], y2[i] = x2[i] + x2[i ^ o];
        for (int i = 0; i < 32; ++i)
          x1[i] = y1[i], x2[i] = y2[i];
      }
      tt[0] += x1[0];
      tt[1] += x2[0];
    }
    acc[0] += tt[0];
    acc[1] += tt[1];
  }
  const double dm = acc[0] * invLen;
  st[0] = c + dm;
  st[1] = acc[1] - acc[0] * dm;
}
int main(int argc, char **argv) {
  const bool fixed = true; // HEAD has finiteShift
  double big = argc > 1 ? atof(argv[1]) : 1e15;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  // a team's slices in order: normal, huge (x * big), normal, normal, normal
  int kinds[] = {0, 1, 0, 0, 0};
  float c = 0;
  for (int s = 0; s < 5; ++s) {
    std::vector<float> v(L);
    for (long i = 0; i < L; ++i)
      v[i] = (float)u(rng) * (kinds[s] ? (float)big : 1.f);
    double st[2];
    for (int tries = 0;; ++tries) {
      combine(v, c, st);
      double dm = st[0] - c, m2 = st[1];
      if (tries == RETRIES || (dm * dm * double(L) <= m2 && m2 < 1e300))
        break;
      c = finiteShift(st[0], fixed);
    }
    double var = st[1] * invLen;
    var = var > 0 ? var : 0;
    St g;
    g.meanHi = (float)st[0];
    g.meanLo = (float)(st[0] - g.meanHi);
    g.rstd = 1.f / std::sqrt((float)var + eps);
    g.lowShift = -g.meanLo * g.rstd;
    // reference in double
    double m = 0;
    for (float x : v)
      m += x;
    m /= L;
    double q = 0;
    for (float x : v)
      q += (x - m) * (x - m);
    q /= L;
    double rs = 1 / std::sqrt(q + 1e-5), num = 0, den = 0;
    for (float x : v) {
      double y = std::fmaf(x - g.meanHi, g.rstd, g.lowShift), r = (x - m) * rs;
      num += (y - r) * (y - r);
      den += r * r;
    }
    printf("slice %d (%s): shift in %.6g, mean %.6g (ref %.6g), var %.6g (ref "
           "%.6g), rel err %.3g\n",
           s, kinds[s] ? "x*big" : "x", (double)c, st[0], m, var, q,
           std::sqrt(num / den));
    c = finiteShift(g.meanHi, fixed);
  }
}
