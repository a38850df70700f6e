// Shared helpers of the CPU kernels: argument checks (TORCH_CHECK naming the argument) and threading.
#pragma once
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <algorithm>

#if defined(__AVX512F__)
#include <immintrin.h>
#define ICML25_AVX512 1
#endif

#define ICML25_INLINE inline __attribute__((always_inline))

namespace icml25 {

// A tensor argument must be on the CPU, of the given dtype and dimension, and contiguous.
inline void check_arg(const at::Tensor& t, const char* name, at::ScalarType dtype, int64_t dim) {
  TORCH_CHECK(t.device().is_cpu(), name, ": expected a CPU tensor, got device ", t.device());
  TORCH_CHECK(t.scalar_type() == dtype, name, ": expected dtype ", dtype, ", got ", t.scalar_type());
  TORCH_CHECK(t.dim() == dim, name, ": expected a ", dim, "-D tensor, got shape ", t.sizes());
  TORCH_CHECK(t.is_contiguous(), name, ": expected a contiguous tensor (call .contiguous())");
}

inline void check_shape(const at::Tensor& t, const char* name, at::IntArrayRef want) {
  TORCH_CHECK(t.sizes() == want, name, ": expected shape ", want, ", got ", t.sizes());
}

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Squared norm of an 8-vector summed left to right without FMA (the reference's order).
inline float sqnorm8(const float* d) {
  float s = d[0] * d[0];
  for (int i = 1; i < 8; ++i) s = s + d[i] * d[i];
  return s;
}

}  // namespace icml25
