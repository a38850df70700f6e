// int4 weight-only GEMM/GEMV: y[m, n] = sum_k x[m, k] * s[n, g(k)] * (u[n, k] - z[n, g(k)]).
// Layout (see methods.kernels.reference): packed[n, j] = u[n, 2j] | u[n, 2j + 1] << 4.
// x is de-interleaved once per call into even / odd columns so that the 16 low nibbles of 16 bytes
// multiply 16 contiguous even columns and the high nibbles 16 contiguous odd columns. The zero point is
// subtracted per weight: each group's 16 dequantized values s * (u - z) form a lookup table indexed by
// the nibble (vpermps), so a weight is exactly the reference's dequantized value (and a zero weight is 0).
#pragma once
#include "amx.h"
#include "common.h"
#include "vnni.h"

namespace icml25 {

struct Int4Args {
  const float* xe;      // [M, K2] x[:, 0::2]
  const float* xo;      // [M, K2] x[:, 1::2] (0 past K)
  const float* x;       // [M, K]
  const uint8_t* w;     // [N, K2]
  const float* s;       // [N, G]
  const float* z;       // [N, G]
  float* y;             // [M, N]
  int64_t M, N, K, K2, G, gs;
};

inline int nib(const uint8_t* row, int64_t k) { return (row[k >> 1] >> ((k & 1) * 4)) & 15; }

// Rows [m0, m0 + MT) of x against weight row n.
template <int MT>
inline void int4_row(const Int4Args& a, int64_t n, int64_t m0, int64_t g0, int64_t g1) {
  const uint8_t* w = a.w + n * a.K2;
  const float* s = a.s + n * a.G;
  const float* z = a.z + n * a.G;
  float tot[MT];
  for (int m = 0; m < MT; ++m) tot[m] = 0.f;
#ifdef ICML25_AVX512
  __m512 acc[MT], acch[MT], acc2[MT], acc2h[MT];
  for (int m = 0; m < MT; ++m) acc[m] = acch[m] = acc2[m] = acc2h[m] = _mm512_setzero_ps();
  const __m512 iota = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
#endif
  for (int64_t g = g0; g < g1; ++g) {
    const int64_t k0 = g * a.gs, k1 = std::min(a.K, k0 + a.gs);
    int64_t k = k0;
    float part[MT];
    for (int m = 0; m < MT; ++m) part[m] = 0.f;
#ifdef ICML25_AVX512
    if ((a.gs & 1) == 0 && k + 32 <= k1) {
      // the group's 16 possible weights s * (u - z), looked up by the nibble (vpermps uses the low 4 bits)
      const __m512 lut = _mm512_mul_ps(_mm512_sub_ps(iota, _mm512_set1_ps(z[g])), _mm512_set1_ps(s[g]));
      // independent accumulator chains (FMA latency): low / high nibbles, and two chunks in flight for M <= 2
      auto chunk = [&](int64_t kk, __m512* al, __m512* ah) __attribute__((always_inline)) {
        const __m512i b = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + (kk >> 1))));
        const __m512 wl = _mm512_permutexvar_ps(b, lut);
        const __m512 wh = _mm512_permutexvar_ps(_mm512_srli_epi32(b, 4), lut);
        for (int m = 0; m < MT; ++m) {
          const int64_t off = (m0 + m) * a.K2 + (kk >> 1);
          al[m] = _mm512_fmadd_ps(wl, _mm512_loadu_ps(a.xe + off), al[m]);
          ah[m] = _mm512_fmadd_ps(wh, _mm512_loadu_ps(a.xo + off), ah[m]);
        }
      };
      if constexpr (MT <= 2)
        for (; k + 64 <= k1; k += 64) {
          chunk(k, acc, acch);
          chunk(k + 32, acc2, acc2h);
        }
      for (; k + 32 <= k1; k += 32) chunk(k, acc, acch);
    }
#endif
    for (; k < k1; ++k) {
      const float wk = s[g] * (static_cast<float>(nib(w, k)) - z[g]);
      for (int m = 0; m < MT; ++m) part[m] += wk * a.x[(m0 + m) * a.K + k];
    }
    for (int m = 0; m < MT; ++m) tot[m] += part[m];
  }
  for (int m = 0; m < MT; ++m) {
#ifdef ICML25_AVX512
    tot[m] += _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(acc[m], acch[m]), _mm512_add_ps(acc2[m], acc2h[m])));
#endif
    a.y[(m0 + m) * a.N + n] += tot[m];
  }
}

inline at::Tensor int4_linear_cpu(const at::Tensor& x, const at::Tensor& packed, const at::Tensor& scales,
                                  const at::Tensor& zeros, int64_t group_size, int64_t K) {
  check_arg(x, "x", at::kFloat, 2);
  check_arg(packed, "packed", at::kByte, 2);
  check_arg(scales, "scales", at::kFloat, 2);
  check_arg(zeros, "zeros", at::kFloat, 2);
  TORCH_CHECK(group_size > 0, "group_size: must be positive, got ", group_size);
  TORCH_CHECK(x.size(1) == K, "x: expected K = ", K, " columns, got ", x.size(1));
  const int64_t M = x.size(0), N = packed.size(0), K2 = ceil_div(K, 2), G = ceil_div(K, group_size);
  check_shape(packed, "packed", {N, K2});
  check_shape(scales, "scales", {N, G});
  check_shape(zeros, "zeros", {N, G});
  auto y = at::zeros({M, N}, x.options());
  if (M == 0 || N == 0) return y;
#ifdef ICML25_AVX512
  if (amx_taken(PlanOp::Int4, N, K, group_size, M)) {
    int4_linear_amx(x.data_ptr<float>(), packed.data_ptr<uint8_t>(), scales.data_ptr<float>(), zeros.data_ptr<float>(),
                    y.data_ptr<float>(), M, N, K, K2, G, group_size);
    return y;
  }
#endif
#ifdef ICML25_VNNI
  if (group_size % 64 == 0 && K >= group_size && vnni_enabled(false)) {
    int4_linear_vnni(x.data_ptr<float>(), packed.data_ptr<uint8_t>(), scales.data_ptr<float>(), zeros.data_ptr<float>(),
                     y.data_ptr<float>(), M, N, K, K2, G, group_size);
    return y;
  }
#endif
  // de-interleave x
  auto xp = at::constant_pad_nd(x, {0, 2 * K2 - K}).view({M, K2, 2});
  auto xe = xp.select(2, 0).contiguous(), xo = xp.select(2, 1).contiguous();
  Int4Args a{xe.data_ptr<float>(), xo.data_ptr<float>(), x.data_ptr<float>(),
             packed.data_ptr<uint8_t>(), scales.data_ptr<float>(), zeros.data_ptr<float>(), y.data_ptr<float>(),
             M, N, K, K2, G, group_size};
  // Cache blocking: a slice of ~512 columns of x (per tile of 8 batch rows: 16 KB) stays in L1 while a
  // block of weight rows streams past it; partial sums accumulate in y.
  const int64_t gb = M < 4 ? G : std::max<int64_t>(1, 512 / group_size);  // M < 4: x fits L1 anyway
  at::parallel_for(0, N, 64, [&](int64_t n0, int64_t n1) {
    for (int64_t g0 = 0; g0 < G; g0 += gb) {
      const int64_t g1 = std::min(G, g0 + gb);
      int64_t m = 0;
      for (; m + 8 <= M; m += 8)
        for (int64_t n = n0; n < n1; ++n) int4_row<8>(a, n, m, g0, g1);
      for (; m + 4 <= M; m += 4)
        for (int64_t n = n0; n < n1; ++n) int4_row<4>(a, n, m, g0, g1);
      for (; m < M; ++m)
        for (int64_t n = n0; n < n1; ++n) int4_row<1>(a, n, m, g0, g1);
    }
  });
  return y;
}

}  // namespace icml25
