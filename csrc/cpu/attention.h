// Decode-time attention for one query per head: over all keys, or over the first `sink` and the last
// `window` keys (ALSpec's speculative output), and the fused speculative op that computes both from one
// pass of scores and verifies ||o - o_spec|| < lam ||o|| per (batch, head).
#pragma once
#include "common.h"

#include <vector>

namespace icml25 {

inline float dot(const float* a, const float* b, int64_t d) {
  float s = 0.f;
#pragma omp simd reduction(+ : s)
  for (int64_t i = 0; i < d; ++i) s += a[i] * b[i];
  return s;
}

// o = softmax(scores[idx]) @ v[idx] for the key ranges [0, a) and [b, T); scores precomputed in sc.
inline void softmax_av(const float* sc, const float* v, int64_t D, int64_t a, int64_t b, int64_t T, float* o) {
  float mx = -INFINITY;
  for (int64_t t = 0; t < a; ++t) mx = std::max(mx, sc[t]);
  for (int64_t t = b; t < T; ++t) mx = std::max(mx, sc[t]);
  for (int64_t i = 0; i < D; ++i) o[i] = 0.f;
  float den = 0.f;
  auto add = [&](int64_t t) {
    const float p = std::exp(sc[t] - mx);
    den += p;
    const float* vr = v + t * D;
#pragma omp simd
    for (int64_t i = 0; i < D; ++i) o[i] += p * vr[i];
  };
  for (int64_t t = 0; t < a; ++t) add(t);
  for (int64_t t = b; t < T; ++t) add(t);
  const float inv = den > 0.f ? 1.f / den : 0.f;
  for (int64_t i = 0; i < D; ++i) o[i] *= inv;
}

inline void check_qkv(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, int64_t sink, int64_t window) {
  check_arg(q, "q", at::kFloat, 3);
  check_arg(k, "k", at::kFloat, 4);
  check_arg(v, "v", at::kFloat, 4);
  TORCH_CHECK(k.size(0) == q.size(0) && k.size(1) == q.size(1) && k.size(3) == q.size(2),
              "k: expected [B, H, T, D] matching q ", q.sizes(), ", got ", k.sizes());
  check_shape(v, "v", k.sizes());
  TORCH_CHECK(sink >= 0 && window >= 0, "sink/window: must be >= 0, got ", sink, ", ", window);
}

// Key ranges [0, a) and [b, T) of the sink + window selection (all keys when sink + window >= T).
inline void sel_range(int64_t T, int64_t sink, int64_t window, int64_t& a, int64_t& b) {
  if (sink + window >= T) { a = T; b = T; } else { a = sink; b = T - window; }
}

inline at::Tensor decode_attention_cpu(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, int64_t sink,
                                       int64_t window, double scale) {
  check_qkv(q, k, v, sink, window);
  const int64_t BH = q.size(0) * q.size(1), T = k.size(2), D = k.size(3);
  int64_t a, b;
  sel_range(T, sink, window, a, b);
  auto o = at::empty_like(q);
  const float* qp = q.data_ptr<float>();
  const float* kp = k.data_ptr<float>();
  const float* vp = v.data_ptr<float>();
  float* op = o.data_ptr<float>();
  at::parallel_for(0, BH, 1, [&](int64_t h0, int64_t h1) {
    std::vector<float> sc(T);
    for (int64_t h = h0; h < h1; ++h) {
      const float* kh = kp + h * T * D;
      for (int64_t t = 0; t < a; ++t) sc[t] = dot(qp + h * D, kh + t * D, D) * static_cast<float>(scale);
      for (int64_t t = b; t < T; ++t) sc[t] = dot(qp + h * D, kh + t * D, D) * static_cast<float>(scale);
      softmax_av(sc.data(), vp + h * T * D, D, a, b, T, op + h * D);
    }
  });
  return o;
}

inline std::tuple<at::Tensor, at::Tensor, at::Tensor> spec_decode_attention_cpu(const at::Tensor& q, const at::Tensor& k,
                                                                                const at::Tensor& v, int64_t sink,
                                                                                int64_t window, double lam, double scale) {
  check_qkv(q, k, v, sink, window);
  const int64_t B = q.size(0), H = q.size(1), T = k.size(2), D = k.size(3);
  int64_t a, b;
  sel_range(T, sink, window, a, b);
  auto o = at::empty_like(q), os = at::empty_like(q);
  auto acc = at::empty({B, H}, q.options().dtype(at::kBool));
  const float* qp = q.data_ptr<float>();
  const float* kp = k.data_ptr<float>();
  const float* vp = v.data_ptr<float>();
  float* op = o.data_ptr<float>();
  float* osp = os.data_ptr<float>();
  bool* ap = acc.data_ptr<bool>();
  at::parallel_for(0, B * H, 1, [&](int64_t h0, int64_t h1) {
    std::vector<float> sc(T);
    for (int64_t h = h0; h < h1; ++h) {
      const float* kh = kp + h * T * D;
      for (int64_t t = 0; t < T; ++t) sc[t] = dot(qp + h * D, kh + t * D, D) * static_cast<float>(scale);
      softmax_av(sc.data(), vp + h * T * D, D, T, T, T, op + h * D);
      softmax_av(sc.data(), vp + h * T * D, D, a, b, T, osp + h * D);
      float e = 0.f, n = 0.f;
      for (int64_t i = 0; i < D; ++i) {
        const float d = op[h * D + i] - osp[h * D + i];
        e += d * d;
        n += op[h * D + i] * op[h * D + i];
      }
      ap[h] = std::sqrt(e) < static_cast<float>(lam) * std::sqrt(n);
    }
  });
  return {o, os, acc};
}

}  // namespace icml25
