// 2:4 sparse + int4 GEMM/GEMV (SLiM's format), optionally + a low-rank term: y = x W^T + (x R^T) L^T.
// Layout (see methods.kernels.reference): per aligned group j of 4 columns two slots; values[n, j] holds the
// two offset-8 nibbles, meta holds 2-bit positions, slot s at bits 2s..2s+1 of the row's meta bit stream.
// The vector path takes 8 groups (32 columns, 16 slots) at a time: 16 weights from 8 value bytes, 16
// gather indices from one 32-bit meta word, and a two-register permute of the 32 x values.
#pragma once
#include "amx.h"
#include "common.h"
#include "vnni.h"

namespace icml25 {

struct Sp24Args {
  const float* x;      // [M, K]
  const uint8_t* v;    // [N, K4]
  const uint8_t* meta; // [N, KM]
  const float* s;      // [N, G]
  float* y;            // [M, N]
  int64_t M, N, K, K4, KM, G, gs;
};

// Scalar slots of groups [j0, j1) of row n, per-slot scale lookup (any group size).
template <int MT>
inline void sp24_scalar(const Sp24Args& a, int64_t n, int64_t m0, int64_t j0, int64_t j1, float* tot) {
  sp24_each_slot(a.v + n * a.K4, a.meta + n * a.KM, a.s + n * a.G, a.K, a.gs, j0, j1, [&](int64_t col, float w) {
    for (int m = 0; m < MT; ++m) tot[m] += w * a.x[(m0 + m) * a.K + col];
  });
}

template <int MT>
// Scale groups [g0, g1) of row n (the vector path), plus the scalar remainder in the block that ends the row.
inline void sp24_row(const Sp24Args& a, int64_t n, int64_t m0, int64_t g0, int64_t g1) {
  float tot[MT];
  for (int m = 0; m < MT; ++m) tot[m] = 0.f;
  int64_t jdone = 0;  // groups of 4 handled by the vector path
#ifdef ICML25_AVX512
  if (a.gs % 32 == 0 && a.K >= 32) {
    const uint8_t* v = a.v + n * a.K4;
    const uint8_t* mt = a.meta + n * a.KM;
    const float* s = a.s + n * a.G;
    const __m512i shm = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i base = _mm512_setr_epi32(0, 0, 4, 4, 8, 8, 12, 12, 16, 16, 20, 20, 24, 24, 28, 28);
    const __m512i m3 = _mm512_set1_epi32(3);
    const __m512 iota8 = _mm512_setr_ps(-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7);
#ifdef __AVX512VBMI__
    // byte 4i of lane i <- bits 4i..4i+7 of the 8 value bytes (slot i's nibble in the low 4 bits)
    const __m512i ctrl = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60);
#else
    const __m512i shv = _mm512_setr_epi32(0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4);
#endif
    __m512 acc[MT], acc1[MT], acc2[MT], acc3[MT];
    for (int m = 0; m < MT; ++m) acc[m] = acc1[m] = acc2[m] = acc3[m] = _mm512_setzero_ps();
    const int64_t kvec = (a.K / 32) * 32;
    for (int64_t g = g0; g < g1 && g * a.gs < kvec; ++g) {
      const int64_t k1 = std::min(kvec, (g + 1) * a.gs);
      const __m512 lut = _mm512_mul_ps(iota8, _mm512_set1_ps(s[g]));  // s * q for the 16 codes u = q + 8
      auto chunk = [&](int64_t k, __m512* ac) __attribute__((always_inline)) {
        uint64_t vb;
        std::memcpy(&vb, v + (k >> 2), 8);
#ifdef __AVX512VBMI__
        const __m512i u = _mm512_multishift_epi64_epi8(ctrl, _mm512_set1_epi64(static_cast<long long>(vb)));
#else
        const __m128i b8 = _mm_cvtsi64_si128(static_cast<long long>(vb));
        const __m512i u = _mm512_srlv_epi32(_mm512_cvtepu8_epi32(_mm_unpacklo_epi8(b8, b8)), shv);
#endif
        const __m512 w = _mm512_permutexvar_ps(u, lut);
        uint32_t word;
        std::memcpy(&word, mt + (k >> 3), 4);
        // (word >> 2i) & 3 | 4 * (i / 2): the slot's column inside the 32 columns (ternary logic: (a & b) | c)
        const __m512i idx = _mm512_ternarylogic_epi32(_mm512_srlv_epi32(_mm512_set1_epi32(static_cast<int>(word)), shm), m3, base, 0xEA);
        for (int m = 0; m < MT; ++m) {
          const float* xr = a.x + (m0 + m) * a.K + k;
          const __m512 xg = _mm512_permutex2var_ps(_mm512_loadu_ps(xr), idx, _mm512_loadu_ps(xr + 16));
          ac[m] = _mm512_fmadd_ps(w, xg, ac[m]);
        }
      };
      int64_t k = g * a.gs;
      // independent accumulator chains (FMA latency): four chunks in flight for M <= 2, two for M <= 4
      if constexpr (MT <= 2)
        for (; k + 128 <= k1; k += 128) {
          chunk(k, acc);
          chunk(k + 32, acc1);
          chunk(k + 64, acc2);
          chunk(k + 96, acc3);
        }
      if constexpr (MT <= 4)
        for (; k + 64 <= k1; k += 64) {
          chunk(k, acc);
          chunk(k + 32, acc1);
        }
      for (; k < k1; k += 32) chunk(k, acc);
    }
    for (int m = 0; m < MT; ++m)
      tot[m] = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(acc[m], acc1[m]), _mm512_add_ps(acc2[m], acc3[m])));
    jdone = kvec / 4;
  }
#endif
  if (jdone > 0) {
    if (g1 == a.G) sp24_scalar<MT>(a, n, m0, jdone, a.K4, tot);
  } else if (g0 == 0) {
    sp24_scalar<MT>(a, n, m0, 0, a.K4, tot);  // no vector path: the whole row once
  }
  for (int m = 0; m < MT; ++m) a.y[(m0 + m) * a.N + n] += tot[m];
}

inline at::Tensor sparse24_int4_linear_cpu(const at::Tensor& x, const at::Tensor& values, const at::Tensor& meta,
                                           const at::Tensor& scales, int64_t group_size, int64_t K,
                                           const c10::optional<at::Tensor>& lora_l,
                                           const c10::optional<at::Tensor>& lora_r) {
  check_arg(x, "x", at::kFloat, 2);
  check_arg(values, "values", at::kByte, 2);
  check_arg(meta, "meta", at::kByte, 2);
  check_arg(scales, "scales", at::kFloat, 2);
  TORCH_CHECK(group_size > 0, "group_size: must be positive, got ", group_size);
  TORCH_CHECK(x.size(1) == K, "x: expected K = ", K, " columns, got ", x.size(1));
  const int64_t M = x.size(0), N = values.size(0), K4 = ceil_div(K, 4), KM = ceil_div(K4, 2), G = ceil_div(K, group_size);
  check_shape(values, "values", {N, K4});
  check_shape(meta, "meta", {N, KM});
  check_shape(scales, "scales", {N, G});
  TORCH_CHECK(lora_l.has_value() == lora_r.has_value(), "lora_l/lora_r: pass both or neither");
  auto y = at::zeros({M, N}, x.options());
  bool done = false;
#ifdef ICML25_AVX512
  if (M > 0 && N > 0 && amx_taken(PlanOp::Sparse24, N, K, group_size, M)) {
    sparse24_linear_amx(x.data_ptr<float>(), values.data_ptr<uint8_t>(), meta.data_ptr<uint8_t>(), scales.data_ptr<float>(),
                        y.data_ptr<float>(), M, N, K, K4, KM, G, group_size);
    done = true;
  }
#endif
#if defined(ICML25_VNNI) && defined(__AVX512VBMI__)
  if (!done && M > 0 && N > 0 && group_size % 64 == 0 && K >= group_size && vnni_enabled(true)) {
    sparse24_linear_vnni(x.data_ptr<float>(), values.data_ptr<uint8_t>(), meta.data_ptr<uint8_t>(), scales.data_ptr<float>(),
                         y.data_ptr<float>(), M, N, K, K4, KM, G, group_size);
    done = true;
  }
#endif
  if (M > 0 && N > 0 && !done) {
    Sp24Args a{x.data_ptr<float>(), values.data_ptr<uint8_t>(), meta.data_ptr<uint8_t>(), scales.data_ptr<float>(),
               y.data_ptr<float>(), M, N, K, K4, KM, G, group_size};
    // cache blocking over ~512 columns, as in int4_linear_cpu
    const int64_t gb = M < 4 ? G : std::max<int64_t>(1, 512 / group_size);  // M < 4: x fits L1 anyway
    at::parallel_for(0, N, 64, [&](int64_t n0, int64_t n1) {
      for (int64_t g0 = 0; g0 < G; g0 += gb) {
        const int64_t g1 = std::min(G, g0 + gb);
        int64_t m = 0;
        for (; m + 8 <= M; m += 8)
          for (int64_t n = n0; n < n1; ++n) sp24_row<8>(a, n, m, g0, g1);
        for (; m + 4 <= M; m += 4)
          for (int64_t n = n0; n < n1; ++n) sp24_row<4>(a, n, m, g0, g1);
        for (; m < M; ++m)
          for (int64_t n = n0; n < n1; ++n) sp24_row<1>(a, n, m, g0, g1);
      }
    });
  }
  if (lora_l.has_value()) {
    const auto& L = *lora_l;
    const auto& R = *lora_r;
    check_arg(L, "lora_l", at::kFloat, 2);
    check_arg(R, "lora_r", at::kFloat, 2);
    TORCH_CHECK(L.size(0) == N && R.size(1) == K && L.size(1) == R.size(0), "lora_l/lora_r: expected [N, r] = [", N,
                ", r] and [r, K] = [r, ", K, "], got ", L.sizes(), " and ", R.sizes());
    y.addmm_(at::mm(x, R.t()), L.t());
  }
  return y;
}

}  // namespace icml25
