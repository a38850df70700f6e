// E8 nearest point (Conway & Sloane), NestQuant nested-lattice encode / decode and the matrix product
// with a NestQuant-coded weight decoded on the fly.
// The vectors are processed in blocks of L = 16, transposed to coordinate-major (SoA) so that every
// step is a lane-wise loop the compiler vectorises; the arithmetic follows the reference op by op
// (round half to even, first index of the largest rounding error, D8 on a tie, squares summed in
// coordinate order, x / beta as a division) so that the results are bit-identical.
// Generator (rows): 2e0; e_r - e_{r-1} (r = 1..6); (1/2, ..., 1/2). With c the coordinates:
//   t0 = 2c0 - c1 + c7/2, t_j = c_j - c_{j+1} + c7/2 (j = 1..5), t6 = c6 + c7/2, t7 = c7/2,
// and back: c7 = 2 t7, c6 = t6 - t7, c_j = t_j - t7 + c_{j+1} (j = 5..1), c0 = (t0 - t7 + c1) / 2.
#pragma once
#include "common.h"

namespace icml25 {

constexpr int L = 16;

#ifdef ICML25_AVX512
// One zmm per coordinate: lane l of row i is coordinate i of vector l.
ICML25_INLINE void d8_vec(const __m512 (&x)[8], __m512 (&f)[8]) {
  const int rne = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC, down = _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC;
  const __m512 half = _mm512_set1_ps(0.5f), two = _mm512_set1_ps(2.f), one = _mm512_set1_ps(1.f);
  __m512 dmax = _mm512_set1_ps(-1.f), dsel = _mm512_setzero_ps(), par = _mm512_setzero_ps();
  __m512i imax = _mm512_setzero_si512();
  for (int i = 0; i < 8; ++i) {
    f[i] = _mm512_roundscale_ps(x[i], rne);
    const __m512 d = _mm512_sub_ps(x[i], f[i]);
    const __m512 ad = _mm512_abs_ps(d);
    const __mmask16 gt = _mm512_cmp_ps_mask(ad, dmax, _CMP_GT_OQ);  // strict: the first index wins ties
    dmax = _mm512_mask_mov_ps(dmax, gt, ad);
    dsel = _mm512_mask_mov_ps(dsel, gt, d);
    imax = _mm512_mask_mov_epi32(imax, gt, _mm512_set1_epi32(i));
    par = _mm512_add_ps(par, _mm512_sub_ps(f[i], _mm512_mul_ps(two, _mm512_roundscale_ps(_mm512_mul_ps(f[i], half), down))));
  }
  const __m512 podd = _mm512_sub_ps(par, _mm512_mul_ps(two, _mm512_roundscale_ps(_mm512_mul_ps(par, half), down)));
  const __mmask16 odd = _mm512_cmp_ps_mask(podd, _mm512_setzero_ps(), _CMP_NEQ_UQ);
  const __m512 step = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(dsel, _mm512_setzero_ps(), _CMP_GE_OQ), _mm512_set1_ps(-1.f), one);
  for (int i = 0; i < 8; ++i) {
    const __mmask16 m = odd & _mm512_cmpeq_epi32_mask(imax, _mm512_set1_epi32(i));
    f[i] = _mm512_mask_add_ps(f[i], m, f[i], step);
  }
}

ICML25_INLINE void e8_vec(const __m512 (&x)[8], __m512 (&p)[8]) {
  const __m512 half = _mm512_set1_ps(0.5f);
  __m512 xs[8], b[8];
  for (int i = 0; i < 8; ++i) xs[i] = _mm512_sub_ps(x[i], half);
  d8_vec(x, p);
  d8_vec(xs, b);
  __m512 da = _mm512_setzero_ps(), db = _mm512_setzero_ps();
  for (int i = 0; i < 8; ++i) {
    b[i] = _mm512_add_ps(b[i], half);
    const __m512 ea = _mm512_sub_ps(x[i], p[i]), eb = _mm512_sub_ps(x[i], b[i]);
    da = _mm512_add_ps(da, _mm512_mul_ps(ea, ea));  // no FMA: the reference's rounding
    db = _mm512_add_ps(db, _mm512_mul_ps(eb, eb));
  }
  const __mmask16 use_b = _mm512_cmp_ps_mask(da, db, _CMP_GT_OQ);  // D8 on a tie
  for (int i = 0; i < 8; ++i) p[i] = _mm512_mask_mov_ps(p[i], use_b, b[i]);
}

ICML25_INLINE void d8_block(const float (&x)[8][L], float (&f)[8][L]) {
  __m512 xv[8], fv[8];
  for (int i = 0; i < 8; ++i) xv[i] = _mm512_loadu_ps(x[i]);
  d8_vec(xv, fv);
  for (int i = 0; i < 8; ++i) _mm512_storeu_ps(f[i], fv[i]);
}

ICML25_INLINE void e8_block(const float (&x)[8][L], float (&p)[8][L]) {
  __m512 xv[8], pv[8];
  for (int i = 0; i < 8; ++i) xv[i] = _mm512_loadu_ps(x[i]);
  e8_vec(xv, pv);
  for (int i = 0; i < 8; ++i) _mm512_storeu_ps(p[i], pv[i]);
}
#else
// f = nearest D8 point of x (both [8][L]).
ICML25_INLINE void d8_block(const float (&x)[8][L], float (&f)[8][L]) {
  float dmax[L], dsel[L], par[L];
  int imax[L];
  for (int l = 0; l < L; ++l) { dmax[l] = -1.f; dsel[l] = 0.f; par[l] = 0.f; imax[l] = 0; }
  for (int i = 0; i < 8; ++i) {
#pragma omp simd
    for (int l = 0; l < L; ++l) {
      const float fi = __builtin_roundevenf(x[i][l]);
      const float d = x[i][l] - fi;
      const float ad = std::fabs(d);
      const bool gt = ad > dmax[l];
      dmax[l] = gt ? ad : dmax[l];
      dsel[l] = gt ? d : dsel[l];
      imax[l] = gt ? i : imax[l];
      par[l] += fi - 2.f * std::floor(fi * 0.5f);
      f[i][l] = fi;
    }
  }
  for (int i = 0; i < 8; ++i) {
#pragma omp simd
    for (int l = 0; l < L; ++l) {
      const bool odd = (par[l] - 2.f * std::floor(par[l] * 0.5f)) != 0.f;
      const float step = dsel[l] >= 0.f ? 1.f : -1.f;
      f[i][l] += (odd && imax[l] == i) ? step : 0.f;
    }
  }
}

// p = nearest E8 point of x.
ICML25_INLINE void e8_block(const float (&x)[8][L], float (&p)[8][L]) {
  float xs[8][L], b[8][L], da[L], db[L];
  for (int i = 0; i < 8; ++i)
    for (int l = 0; l < L; ++l) xs[i][l] = x[i][l] - 0.5f;
  d8_block(x, p);
  d8_block(xs, b);
  for (int l = 0; l < L; ++l) { da[l] = 0.f; db[l] = 0.f; }
  for (int i = 0; i < 8; ++i) {
#pragma omp simd
    for (int l = 0; l < L; ++l) {
      b[i][l] = b[i][l] + 0.5f;
      const float ea = x[i][l] - p[i][l], eb = x[i][l] - b[i][l];
      // the reference starts from d0*d0 (not 0 + d0*d0): identical since 0 + a == a
      da[l] = da[l] + ea * ea;
      db[l] = db[l] + eb * eb;
    }
  }
  for (int i = 0; i < 8; ++i)
#pragma omp simd
    for (int l = 0; l < L; ++l) p[i][l] = da[l] <= db[l] ? p[i][l] : b[i][l];
}

#endif

// Coset representative in the Voronoi region of qE8 of the code c: y - q Q_E8(y / q), y = c G.
ICML25_INLINE void nq_decode_block(const float (&c)[8][L], float q, float (&out)[8][L]) {
  float y[8][L], yq[8][L], p[8][L];
  for (int l = 0; l < L; ++l) {
    const float h = 0.5f * c[7][l];
    y[0][l] = 2.f * c[0][l] - c[1][l] + h;
    for (int j = 1; j <= 5; ++j) y[j][l] = c[j][l] - c[j + 1][l] + h;
    y[6][l] = c[6][l] + h;
    y[7][l] = h;
  }
  for (int i = 0; i < 8; ++i)
    for (int l = 0; l < L; ++l) yq[i][l] = y[i][l] / q;
  e8_block(yq, p);
  for (int i = 0; i < 8; ++i)
    for (int l = 0; l < L; ++l) out[i][l] = y[i][l] - q * p[i][l];
}

// Codes (c G^{-1} mod q) of the E8 points t (in double: exact for any float32 t of an encodable size).
ICML25_INLINE void nq_coords_block(const float (&t)[8][L], int q, float (&c)[8][L]) {
#ifdef ICML25_AVX512
  // float path, exact while |c| < 2^23 (then c / q rounds to the right side of every integer)
  __m512 big = _mm512_setzero_ps();
  for (int i = 0; i < 8; ++i) big = _mm512_max_ps(big, _mm512_abs_ps(_mm512_loadu_ps(t[i])));
  if (_mm512_reduce_max_ps(big) < 262144.f) {
    const __m512 t7 = _mm512_loadu_ps(t[7]), qv = _mm512_set1_ps(static_cast<float>(q));
    __m512 cc[8];
    cc[7] = _mm512_add_ps(t7, t7);
    cc[6] = _mm512_sub_ps(_mm512_loadu_ps(t[6]), t7);
    for (int j = 5; j >= 1; --j) cc[j] = _mm512_add_ps(_mm512_sub_ps(_mm512_loadu_ps(t[j]), t7), cc[j + 1]);
    cc[0] = _mm512_mul_ps(_mm512_add_ps(_mm512_sub_ps(_mm512_loadu_ps(t[0]), t7), cc[1]), _mm512_set1_ps(0.5f));
    for (int i = 0; i < 8; ++i) {
      const __m512 fl = _mm512_roundscale_ps(_mm512_div_ps(cc[i], qv), _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
      _mm512_storeu_ps(c[i], _mm512_sub_ps(cc[i], _mm512_mul_ps(qv, fl)));
    }
    return;
  }
#endif
  for (int l = 0; l < L; ++l) {
    double cc[8];
    const double t7 = t[7][l];
    cc[7] = 2.0 * t7;
    cc[6] = double(t[6][l]) - t7;
    for (int j = 5; j >= 1; --j) cc[j] = double(t[j][l]) - t7 + cc[j + 1];
    cc[0] = (double(t[0][l]) - t7 + cc[1]) * 0.5;
    for (int i = 0; i < 8; ++i) {
      int64_t r = static_cast<int64_t>(std::llrint(cc[i])) % q;
      c[i][l] = static_cast<float>(r < 0 ? r + q : r);
    }
  }
}

ICML25_INLINE void load_block(const float* x, int64_t i0, int64_t n, float (&b)[8][L]) {
  for (int l = 0; l < L; ++l) {
    const bool ok = i0 + l < n;
    for (int i = 0; i < 8; ++i) b[i][l] = ok ? x[(i0 + l) * 8 + i] : 0.f;
  }
}

inline at::Tensor e8_nearest_cpu(const at::Tensor& x) {
  check_arg(x, "x", at::kFloat, 2);
  TORCH_CHECK(x.size(1) == 8, "x: expected [n, 8], got ", x.sizes());
  const int64_t n = x.size(0);
  auto out = at::empty_like(x);
  const float* xp = x.data_ptr<float>();
  float* op = out.data_ptr<float>();
  at::parallel_for(0, ceil_div(n, L), 64, [&](int64_t b0, int64_t b1) {
    float xb[8][L], pb[8][L];
    for (int64_t b = b0; b < b1; ++b) {
      load_block(xp, b * L, n, xb);
      e8_block(xb, pb);
      for (int l = 0; l < L && b * L + l < n; ++l)
        for (int i = 0; i < 8; ++i) op[(b * L + l) * 8 + i] = pb[i][l];
    }
  });
  return out;
}

inline void check_betas(const at::Tensor& betas, int64_t q) {
  check_arg(betas, "betas", at::kFloat, 1);
  TORCH_CHECK(betas.numel() >= 1 && betas.numel() <= 256, "betas: expected 1..256 scales, got ", betas.numel());
  TORCH_CHECK(q >= 2 && q <= 256, "q: nesting ratio must be in [2, 256] (uint8 codes), got ", q);
}

inline std::tuple<at::Tensor, at::Tensor> nestquant_encode_cpu(const at::Tensor& x, int64_t q, const at::Tensor& betas) {
  check_arg(x, "x", at::kFloat, 2);
  TORCH_CHECK(x.size(1) == 8, "x: expected [n, 8], got ", x.sizes());
  check_betas(betas, q);
  const int64_t n = x.size(0), nb = betas.numel();
  auto codes = at::empty({n, 8}, x.options().dtype(at::kByte));
  auto bidx = at::empty({n}, x.options().dtype(at::kByte));
  const float* xp = x.data_ptr<float>();
  const float* bp = betas.data_ptr<float>();
  uint8_t* cp = codes.data_ptr<uint8_t>();
  uint8_t* ip = bidx.data_ptr<uint8_t>();
  const float qf = static_cast<float>(q);
  at::parallel_for(0, ceil_div(n, L), 16, [&](int64_t b0, int64_t b1) {
    float xb[8][L], xs[8][L], t[8][L], c[8][L], r[8][L], best_c[8][L], best_e[L];
    int best_i[L];
    for (int64_t b = b0; b < b1; ++b) {
      load_block(xp, b * L, n, xb);
      for (int64_t j = 0; j < nb; ++j) {
        const float beta = bp[j];
        for (int i = 0; i < 8; ++i)
          for (int l = 0; l < L; ++l) xs[i][l] = xb[i][l] / beta;
        e8_block(xs, t);
        nq_coords_block(t, static_cast<int>(q), c);
        nq_decode_block(c, qf, r);
        float e[L];
        for (int l = 0; l < L; ++l) e[l] = 0.f;
        for (int i = 0; i < 8; ++i)
          for (int l = 0; l < L; ++l) {
            const float d = xb[i][l] - beta * r[i][l];
            e[l] = e[l] + d * d;
          }
        for (int l = 0; l < L; ++l) {
          const bool better = j == 0 || e[l] < best_e[l];
          if (better) {
            best_e[l] = e[l];
            best_i[l] = static_cast<int>(j);
            for (int i = 0; i < 8; ++i) best_c[i][l] = c[i][l];
          }
        }
      }
      for (int l = 0; l < L && b * L + l < n; ++l) {
        ip[b * L + l] = static_cast<uint8_t>(best_i[l]);
        for (int i = 0; i < 8; ++i) cp[(b * L + l) * 8 + i] = static_cast<uint8_t>(best_c[i][l]);
      }
    }
  });
  return {codes, bidx};
}

// Decode blocks [i0, i0 + L) of (codes [n, 8], beta_idx [n]) into out (row-major [n, 8]).
ICML25_INLINE void nq_decode_rows(const uint8_t* cp, const uint8_t* ip, const float* bp, int64_t nb, float qf, int64_t i0,
                           int64_t n, float* out) {
  float c[8][L], r[8][L];
  for (int l = 0; l < L; ++l) {
    const bool ok = i0 + l < n;
    for (int i = 0; i < 8; ++i) c[i][l] = ok ? static_cast<float>(cp[(i0 + l) * 8 + i]) : 0.f;
  }
  nq_decode_block(c, qf, r);
  for (int l = 0; l < L && i0 + l < n; ++l) {
    const float beta = bp[ip[i0 + l]];  // indices checked by the caller (check_beta_idx)
    for (int i = 0; i < 8; ++i) out[(i0 + l) * 8 + i] = beta * r[i][l];
  }
}

inline void check_beta_idx(const at::Tensor& beta_idx, const at::Tensor& betas) {
  if (beta_idx.numel() == 0) return;
  const int64_t mx = beta_idx.max().item<int64_t>();
  TORCH_CHECK(mx < betas.numel(), "beta_idx: index ", mx, " out of range for ", betas.numel(), " betas");
}

inline at::Tensor nestquant_decode_cpu(const at::Tensor& codes, const at::Tensor& beta_idx, int64_t q, const at::Tensor& betas) {
  check_arg(codes, "codes", at::kByte, 2);
  TORCH_CHECK(codes.size(1) == 8, "codes: expected [n, 8], got ", codes.sizes());
  check_arg(beta_idx, "beta_idx", at::kByte, 1);
  check_shape(beta_idx, "beta_idx", {codes.size(0)});
  check_betas(betas, q);
  check_beta_idx(beta_idx, betas);
  const int64_t n = codes.size(0);
  auto out = at::empty({n, 8}, codes.options().dtype(at::kFloat));
  at::parallel_for(0, ceil_div(n, L), 64, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b)
      nq_decode_rows(codes.data_ptr<uint8_t>(), beta_idx.data_ptr<uint8_t>(), betas.data_ptr<float>(), betas.numel(),
                     static_cast<float>(q), b * L, n, out.data_ptr<float>());
  });
  return out;
}

// y = x @ decode(W)^T; each weight row is decoded once into a thread-local buffer and used by all M rows.
inline at::Tensor nestquant_matmul_cpu(const at::Tensor& x, const at::Tensor& codes, const at::Tensor& beta_idx, int64_t q,
                                       const at::Tensor& betas, int64_t N, int64_t K) {
  check_arg(x, "x", at::kFloat, 2);
  check_arg(codes, "codes", at::kByte, 3);
  check_arg(beta_idx, "beta_idx", at::kByte, 2);
  check_betas(betas, q);
  TORCH_CHECK(K % 8 == 0, "K: must be a multiple of 8, got ", K);
  TORCH_CHECK(x.size(1) == K, "x: expected K = ", K, " columns, got ", x.size(1));
  check_shape(codes, "codes", {N, K / 8, 8});
  check_shape(beta_idx, "beta_idx", {N, K / 8});
  check_beta_idx(beta_idx, betas);
  const int64_t M = x.size(0), KB = K / 8;
  auto y = at::empty({M, N}, x.options());
  const float* xp = x.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  at::parallel_for(0, N, 8, [&](int64_t n0, int64_t n1) {
    std::vector<float> w(K);
    for (int64_t n = n0; n < n1; ++n) {
      const uint8_t* cp = codes.data_ptr<uint8_t>() + n * K;
      const uint8_t* ip = beta_idx.data_ptr<uint8_t>() + n * KB;
      for (int64_t b = 0; b < KB; b += L)
        nq_decode_rows(cp, ip, betas.data_ptr<float>(), betas.numel(), static_cast<float>(q), b, KB, w.data());
      for (int64_t m = 0; m < M; ++m) {
        const float* xr = xp + m * K;
        float acc = 0.f;
#pragma omp simd reduction(+ : acc)
        for (int64_t k = 0; k < K; ++k) acc += xr[k] * w[k];
        yp[m * N + n] = acc;
      }
    }
  });
  return y;
}

}  // namespace icml25
