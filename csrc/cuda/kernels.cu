// CUDA counterparts of the CPU kernels (csrc/cpu), on the same packed formats (methods.kernels.reference).
//
// The file has two parts:
//  1. device kernels and host launchers on raw pointers; they need only cuda_runtime.h, so nvcc compiles
//     them anywhere (the CI compile check, tests/kernels/test_cuda_compile.py, does exactly that);
//  2. under ICML25_WITH_CUDA (set by methods.kernels.build when torch has CUDA), the torch wrappers
//     with argument checks, registered for the CUDA dispatch key of the icml25 ops.
// Straightforward kernels, written for correctness first: one warp per output row for the GEMV/GEMMs,
// one thread per 8-vector for the lattice ops, one block per (batch, head) for attention. The lattice
// code uses __fmul_rn / __fadd_rn where the reference's rounding matters (no FMA contraction), so the
// codes are bit-identical to the CPU ones.
#include <cuda_runtime.h>

#include <cstdint>

namespace icml25 {
namespace cuda {

constexpr int WARP = 32;

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = WARP / 2; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}

// ----------------------------------------------------------------------------- int4 and 2:4 + int4

constexpr int MT = 8;  // batch rows per pass (register accumulators)

__global__ void int4_linear_kernel(const float* __restrict__ x, const uint8_t* __restrict__ w, const float* __restrict__ s,
                                   const float* __restrict__ z, float* __restrict__ y, int64_t M, int64_t N, int64_t K,
                                   int64_t gs) {
  const int64_t n = blockIdx.x * (blockDim.x / WARP) + threadIdx.x / WARP;
  const int lane = threadIdx.x % WARP;
  if (n >= N) return;
  const int64_t K2 = (K + 1) / 2, G = (K + gs - 1) / gs;
  const uint8_t* wr = w + n * K2;
  for (int64_t m0 = 0; m0 < M; m0 += MT) {
    float acc[MT];
    for (int i = 0; i < MT; ++i) acc[i] = 0.f;
    for (int64_t j = lane; j < K2; j += WARP) {
      const int b = wr[j];
      for (int h = 0; h < 2; ++h) {
        const int64_t k = 2 * j + h;
        if (k >= K) break;
        const int64_t g = k / gs;
        const float wk = s[n * G + g] * (static_cast<float>((b >> (4 * h)) & 15) - z[n * G + g]);
        for (int i = 0; i < MT; ++i)
          if (m0 + i < M) acc[i] += wk * x[(m0 + i) * K + k];
      }
    }
    for (int i = 0; i < MT; ++i) {
      const float v = warp_sum(acc[i]);
      if (lane == 0 && m0 + i < M) y[(m0 + i) * N + n] = v;
    }
  }
}

__global__ void sparse24_kernel(const float* __restrict__ x, const uint8_t* __restrict__ v, const uint8_t* __restrict__ meta,
                                const float* __restrict__ s, float* __restrict__ y, int64_t M, int64_t N, int64_t K,
                                int64_t gs) {
  const int64_t n = blockIdx.x * (blockDim.x / WARP) + threadIdx.x / WARP;
  const int lane = threadIdx.x % WARP;
  if (n >= N) return;
  const int64_t K4 = (K + 3) / 4, KM = (K4 + 1) / 2, G = (K + gs - 1) / gs;
  for (int64_t m0 = 0; m0 < M; m0 += MT) {
    float acc[MT];
    for (int i = 0; i < MT; ++i) acc[i] = 0.f;
    for (int64_t j = lane; j < K4; j += WARP) {
      const int vb = v[n * K4 + j];
      const int nib = (meta[n * KM + j / 2] >> (4 * (j & 1))) & 15;
      for (int t = 0; t < 2; ++t) {
        const int64_t col = 4 * j + ((nib >> (2 * t)) & 3);
        const int q = ((vb >> (4 * t)) & 15) - 8;
        if (q == 0 || col >= K) continue;
        const float wk = s[n * G + col / gs] * static_cast<float>(q);
        for (int i = 0; i < MT; ++i)
          if (m0 + i < M) acc[i] += wk * x[(m0 + i) * K + col];
      }
    }
    for (int i = 0; i < MT; ++i) {
      const float r = warp_sum(acc[i]);
      if (lane == 0 && m0 + i < M) y[(m0 + i) * N + n] = r;
    }
  }
}

// ----------------------------------------------------------------------------- E8 / NestQuant

__device__ __forceinline__ void d8(const float* x, float* f) {
  float dmax = -1.f, dsel = 0.f, par = 0.f;
  int imax = 0;
  for (int i = 0; i < 8; ++i) {
    f[i] = rintf(x[i]);  // round half to even
    const float d = x[i] - f[i];
    if (fabsf(d) > dmax) { dmax = fabsf(d); dsel = d; imax = i; }
    par += f[i] - 2.f * floorf(f[i] * 0.5f);
  }
  if (par - 2.f * floorf(par * 0.5f) != 0.f) f[imax] += dsel >= 0.f ? 1.f : -1.f;
}

__device__ __forceinline__ float sqdist8(const float* a, const float* b) {
  float s = 0.f;
  for (int i = 0; i < 8; ++i) {
    const float d = a[i] - b[i];
    s = __fadd_rn(s, __fmul_rn(d, d));
  }
  return s;
}

__device__ __forceinline__ void e8(const float* x, float* p) {
  float xs[8], b[8];
  for (int i = 0; i < 8; ++i) xs[i] = x[i] - 0.5f;
  d8(x, p);
  d8(xs, b);
  for (int i = 0; i < 8; ++i) b[i] += 0.5f;
  if (sqdist8(x, p) > sqdist8(x, b))
    for (int i = 0; i < 8; ++i) p[i] = b[i];
}

// y - q Q_E8(y / q) with y = c G.
__device__ __forceinline__ void nq_decode(const float* c, float q, float* out) {
  float y[8], yq[8], p[8];
  const float h = 0.5f * c[7];
  y[0] = 2.f * c[0] - c[1] + h;
  for (int j = 1; j <= 5; ++j) y[j] = c[j] - c[j + 1] + h;
  y[6] = c[6] + h;
  y[7] = h;
  for (int i = 0; i < 8; ++i) yq[i] = __fdiv_rn(y[i], q);
  e8(yq, p);
  for (int i = 0; i < 8; ++i) out[i] = __fsub_rn(y[i], __fmul_rn(q, p[i]));
}

__device__ __forceinline__ void nq_coords(const float* t, int q, float* c) {
  double cc[8];
  const double t7 = t[7];
  cc[7] = 2.0 * t7;
  cc[6] = double(t[6]) - t7;
  for (int j = 5; j >= 1; --j) cc[j] = double(t[j]) - t7 + cc[j + 1];
  cc[0] = (double(t[0]) - t7 + cc[1]) * 0.5;
  for (int i = 0; i < 8; ++i) {
    long long r = __double2ll_rn(cc[i]) % q;
    c[i] = static_cast<float>(r < 0 ? r + q : r);
  }
}

__global__ void e8_nearest_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  float v[8], p[8];
  for (int d = 0; d < 8; ++d) v[d] = x[i * 8 + d];
  e8(v, p);
  for (int d = 0; d < 8; ++d) out[i * 8 + d] = p[d];
}

__global__ void nestquant_encode_kernel(const float* __restrict__ x, const float* __restrict__ betas, int nb, int q,
                                        uint8_t* __restrict__ codes, uint8_t* __restrict__ bidx, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  float v[8], xs[8], t[8], c[8], r[8], best[8], best_e = 0.f;
  int best_i = 0;
  for (int d = 0; d < 8; ++d) v[d] = x[i * 8 + d];
  for (int j = 0; j < nb; ++j) {
    const float beta = betas[j];
    for (int d = 0; d < 8; ++d) xs[d] = __fdiv_rn(v[d], beta);
    e8(xs, t);
    nq_coords(t, q, c);
    nq_decode(c, static_cast<float>(q), r);
    float e = 0.f;
    for (int d = 0; d < 8; ++d) {
      const float diff = __fsub_rn(v[d], __fmul_rn(beta, r[d]));
      e = __fadd_rn(e, __fmul_rn(diff, diff));
    }
    if (j == 0 || e < best_e) {
      best_e = e;
      best_i = j;
      for (int d = 0; d < 8; ++d) best[d] = c[d];
    }
  }
  bidx[i] = static_cast<uint8_t>(best_i);
  for (int d = 0; d < 8; ++d) codes[i * 8 + d] = static_cast<uint8_t>(best[d]);
}

__global__ void nestquant_decode_kernel(const uint8_t* __restrict__ codes, const uint8_t* __restrict__ bidx,
                                        const float* __restrict__ betas, int q, float* __restrict__ out, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  float c[8], r[8];
  for (int d = 0; d < 8; ++d) c[d] = codes[i * 8 + d];
  nq_decode(c, static_cast<float>(q), r);
  const float beta = betas[bidx[i]];
  for (int d = 0; d < 8; ++d) out[i * 8 + d] = __fmul_rn(beta, r[d]);
}

// One warp per weight row; each lane decodes its 8-blocks once and uses them for every batch row.
__global__ void nestquant_matmul_kernel(const float* __restrict__ x, const uint8_t* __restrict__ codes,
                                        const uint8_t* __restrict__ bidx, const float* __restrict__ betas, int q,
                                        float* __restrict__ y, int64_t M, int64_t N, int64_t K) {
  const int64_t n = blockIdx.x * (blockDim.x / WARP) + threadIdx.x / WARP;
  const int lane = threadIdx.x % WARP;
  if (n >= N) return;
  const int64_t KB = K / 8;
  for (int64_t m0 = 0; m0 < M; m0 += MT) {
    float acc[MT];
    for (int i = 0; i < MT; ++i) acc[i] = 0.f;
    for (int64_t b = lane; b < KB; b += WARP) {
      float c[8], r[8];
      for (int d = 0; d < 8; ++d) c[d] = codes[(n * KB + b) * 8 + d];
      nq_decode(c, static_cast<float>(q), r);
      const float beta = betas[bidx[n * KB + b]];
      for (int d = 0; d < 8; ++d) {
        const float w = __fmul_rn(beta, r[d]);
        for (int i = 0; i < MT; ++i)
          if (m0 + i < M) acc[i] += w * x[(m0 + i) * K + b * 8 + d];
      }
    }
    for (int i = 0; i < MT; ++i) {
      const float v = warp_sum(acc[i]);
      if (lane == 0 && m0 + i < M) y[(m0 + i) * N + n] = v;
    }
  }
}

// ----------------------------------------------------------------------------- decode attention

constexpr int ATT_THREADS = 256;

__device__ float block_reduce(float v, bool is_max, float* red) {
  const int lane = threadIdx.x % WARP, wid = threadIdx.x / WARP, nw = blockDim.x / WARP;
  for (int o = WARP / 2; o > 0; o /= 2) {
    const float u = __shfl_down_sync(0xffffffffu, v, o);
    v = is_max ? fmaxf(v, u) : v + u;
  }
  __syncthreads();
  if (lane == 0) red[wid] = v;
  __syncthreads();
  float r = red[0];
  for (int i = 1; i < nw; ++i) r = is_max ? fmaxf(r, red[i]) : r + red[i];
  return r;
}

// o = softmax(sc over [0, a) ∪ [b, T)) @ v; p is scratch of size T.
__device__ void softmax_av(const float* sc, float* p, const float* v, int64_t D, int64_t a, int64_t b, int64_t T,
                           float* o, float* red) {
  float mx = -INFINITY;
  for (int64_t t = threadIdx.x; t < T; t += blockDim.x)
    if (t < a || t >= b) mx = fmaxf(mx, sc[t]);
  mx = block_reduce(mx, true, red);
  float den = 0.f;
  for (int64_t t = threadIdx.x; t < T; t += blockDim.x) {
    const float e = (t < a || t >= b) ? expf(sc[t] - mx) : 0.f;
    p[t] = e;
    den += e;
  }
  den = block_reduce(den, false, red);
  __syncthreads();
  for (int64_t d = threadIdx.x; d < D; d += blockDim.x) {
    float acc = 0.f;
    for (int64_t t = 0; t < a; ++t) acc += p[t] * v[t * D + d];
    for (int64_t t = b; t < T; ++t) acc += p[t] * v[t * D + d];
    o[d] = den > 0.f ? acc / den : 0.f;
  }
  __syncthreads();
}

__device__ void scores(const float* q, const float* k, int64_t D, int64_t a, int64_t b, int64_t T, float scale, float* sc) {
  const int lane = threadIdx.x % WARP, wid = threadIdx.x / WARP, nw = blockDim.x / WARP;
  for (int64_t t = wid; t < T; t += nw) {
    if (!(t < a || t >= b)) continue;
    float s = 0.f;
    for (int64_t d = lane; d < D; d += WARP) s += q[d] * k[t * D + d];
    s = warp_sum(s);
    if (lane == 0) sc[t] = s * scale;
  }
  __syncthreads();
}

// scratch: [BH, 2, T] (scores, probabilities)
__global__ void decode_attention_kernel(const float* q, const float* k, const float* v, float* o, float* scratch, int64_t T,
                                        int64_t D, int64_t a, int64_t b, float scale) {
  __shared__ float red[ATT_THREADS / WARP];
  const int64_t h = blockIdx.x;
  float* sc = scratch + h * 2 * T;
  scores(q + h * D, k + h * T * D, D, a, b, T, scale, sc);
  softmax_av(sc, sc + T, v + h * T * D, D, a, b, T, o + h * D, red);
}

__global__ void spec_attention_kernel(const float* q, const float* k, const float* v, float* o, float* os, bool* acc,
                                      float* scratch, int64_t T, int64_t D, int64_t a, int64_t b, float lam, float scale) {
  __shared__ float red[ATT_THREADS / WARP];
  const int64_t h = blockIdx.x;
  float* sc = scratch + h * 2 * T;
  scores(q + h * D, k + h * T * D, D, T, T, T, scale, sc);
  softmax_av(sc, sc + T, v + h * T * D, D, T, T, T, o + h * D, red);
  softmax_av(sc, sc + T, v + h * T * D, D, a, b, T, os + h * D, red);
  float e = 0.f, nn = 0.f;
  for (int64_t d = threadIdx.x; d < D; d += blockDim.x) {
    const float df = o[h * D + d] - os[h * D + d];
    e += df * df;
    nn += o[h * D + d] * o[h * D + d];
  }
  e = block_reduce(e, false, red);
  nn = block_reduce(nn, false, red);
  if (threadIdx.x == 0) acc[h] = sqrtf(e) < lam * sqrtf(nn);
}

// ----------------------------------------------------------------------------- host launchers

constexpr int ROWS_PER_BLOCK = 4;  // warps per block for the row kernels

inline unsigned row_blocks(int64_t n) { return static_cast<unsigned>((n + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK); }
inline unsigned vec_blocks(int64_t n) { return static_cast<unsigned>((n + 255) / 256); }

void launch_int4_linear(const float* x, const uint8_t* w, const float* s, const float* z, float* y, int64_t M, int64_t N,
                        int64_t K, int64_t gs, cudaStream_t st) {
  if (M > 0 && N > 0) int4_linear_kernel<<<row_blocks(N), ROWS_PER_BLOCK * WARP, 0, st>>>(x, w, s, z, y, M, N, K, gs);
}

void launch_sparse24(const float* x, const uint8_t* v, const uint8_t* meta, const float* s, float* y, int64_t M, int64_t N,
                     int64_t K, int64_t gs, cudaStream_t st) {
  if (M > 0 && N > 0) sparse24_kernel<<<row_blocks(N), ROWS_PER_BLOCK * WARP, 0, st>>>(x, v, meta, s, y, M, N, K, gs);
}

void launch_e8_nearest(const float* x, float* out, int64_t n, cudaStream_t st) {
  if (n > 0) e8_nearest_kernel<<<vec_blocks(n), 256, 0, st>>>(x, out, n);
}

void launch_nestquant_encode(const float* x, const float* betas, int nb, int q, uint8_t* codes, uint8_t* bidx, int64_t n,
                             cudaStream_t st) {
  if (n > 0) nestquant_encode_kernel<<<vec_blocks(n), 256, 0, st>>>(x, betas, nb, q, codes, bidx, n);
}

void launch_nestquant_decode(const uint8_t* codes, const uint8_t* bidx, const float* betas, int q, float* out, int64_t n,
                             cudaStream_t st) {
  if (n > 0) nestquant_decode_kernel<<<vec_blocks(n), 256, 0, st>>>(codes, bidx, betas, q, out, n);
}

void launch_nestquant_matmul(const float* x, const uint8_t* codes, const uint8_t* bidx, const float* betas, int q, float* y,
                             int64_t M, int64_t N, int64_t K, cudaStream_t st) {
  if (M > 0 && N > 0)
    nestquant_matmul_kernel<<<row_blocks(N), ROWS_PER_BLOCK * WARP, 0, st>>>(x, codes, bidx, betas, q, y, M, N, K);
}

void launch_decode_attention(const float* q, const float* k, const float* v, float* o, float* scratch, int64_t BH, int64_t T,
                             int64_t D, int64_t a, int64_t b, float scale, cudaStream_t st) {
  if (BH > 0) decode_attention_kernel<<<static_cast<unsigned>(BH), ATT_THREADS, 0, st>>>(q, k, v, o, scratch, T, D, a, b, scale);
}

void launch_spec_attention(const float* q, const float* k, const float* v, float* o, float* os, bool* acc, float* scratch,
                           int64_t BH, int64_t T, int64_t D, int64_t a, int64_t b, float lam, float scale, cudaStream_t st) {
  if (BH > 0)
    spec_attention_kernel<<<static_cast<unsigned>(BH), ATT_THREADS, 0, st>>>(q, k, v, o, os, acc, scratch, T, D, a, b, lam,
                                                                            scale);
}

}  // namespace cuda
}  // namespace icml25

#ifdef ICML25_WITH_CUDA
// ----------------------------------------------------------------------------- torch bindings (CUDA key)
#include <ATen/ATen.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>
#include <torch/library.h>

namespace icml25 {
namespace cuda {

static void check(const at::Tensor& t, const char* name, at::ScalarType dtype, int64_t dim) {
  TORCH_CHECK(t.is_cuda(), name, ": expected a CUDA tensor, got device ", t.device());
  TORCH_CHECK(t.scalar_type() == dtype, name, ": expected dtype ", dtype, ", got ", t.scalar_type());
  TORCH_CHECK(t.dim() == dim, name, ": expected a ", dim, "-D tensor, got shape ", t.sizes());
  TORCH_CHECK(t.is_contiguous(), name, ": expected a contiguous tensor (call .contiguous())");
}

static void check_shape(const at::Tensor& t, const char* name, at::IntArrayRef want) {
  TORCH_CHECK(t.sizes() == want, name, ": expected shape ", want, ", got ", t.sizes());
}

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

static at::Tensor int4_linear(const at::Tensor& x, const at::Tensor& packed, const at::Tensor& scales, const at::Tensor& zeros,
                              int64_t gs, int64_t K) {
  check(x, "x", at::kFloat, 2);
  check(packed, "packed", at::kByte, 2);
  check(scales, "scales", at::kFloat, 2);
  check(zeros, "zeros", at::kFloat, 2);
  TORCH_CHECK(gs > 0, "group_size: must be positive, got ", gs);
  TORCH_CHECK(x.size(1) == K, "x: expected K = ", K, " columns, got ", x.size(1));
  const int64_t N = packed.size(0);
  check_shape(packed, "packed", {N, cdiv(K, 2)});
  check_shape(scales, "scales", {N, cdiv(K, gs)});
  check_shape(zeros, "zeros", {N, cdiv(K, gs)});
  auto y = at::empty({x.size(0), N}, x.options());
  launch_int4_linear(x.data_ptr<float>(), packed.data_ptr<uint8_t>(), scales.data_ptr<float>(), zeros.data_ptr<float>(),
                     y.data_ptr<float>(), x.size(0), N, K, gs, c10::cuda::getCurrentCUDAStream());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}

static at::Tensor sparse24_int4_linear(const at::Tensor& x, const at::Tensor& values, const at::Tensor& meta,
                                       const at::Tensor& scales, int64_t gs, int64_t K, const c10::optional<at::Tensor>& L,
                                       const c10::optional<at::Tensor>& R) {
  check(x, "x", at::kFloat, 2);
  check(values, "values", at::kByte, 2);
  check(meta, "meta", at::kByte, 2);
  check(scales, "scales", at::kFloat, 2);
  TORCH_CHECK(gs > 0, "group_size: must be positive, got ", gs);
  TORCH_CHECK(x.size(1) == K, "x: expected K = ", K, " columns, got ", x.size(1));
  const int64_t N = values.size(0), K4 = cdiv(K, 4);
  check_shape(values, "values", {N, K4});
  check_shape(meta, "meta", {N, cdiv(K4, 2)});
  check_shape(scales, "scales", {N, cdiv(K, gs)});
  TORCH_CHECK(L.has_value() == R.has_value(), "lora_l/lora_r: pass both or neither");
  auto y = at::empty({x.size(0), N}, x.options());
  launch_sparse24(x.data_ptr<float>(), values.data_ptr<uint8_t>(), meta.data_ptr<uint8_t>(), scales.data_ptr<float>(),
                  y.data_ptr<float>(), x.size(0), N, K, gs, c10::cuda::getCurrentCUDAStream());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  if (L.has_value()) {
    check(*L, "lora_l", at::kFloat, 2);
    check(*R, "lora_r", at::kFloat, 2);
    TORCH_CHECK(L->size(0) == N && R->size(1) == K && L->size(1) == R->size(0), "lora_l/lora_r: expected [N, r] and [r, K], got ",
                L->sizes(), " and ", R->sizes());
    y.addmm_(at::mm(x, R->t()), L->t());
  }
  return y;
}

static at::Tensor e8_nearest(const at::Tensor& x) {
  check(x, "x", at::kFloat, 2);
  TORCH_CHECK(x.size(1) == 8, "x: expected [n, 8], got ", x.sizes());
  auto out = at::empty_like(x);
  launch_e8_nearest(x.data_ptr<float>(), out.data_ptr<float>(), x.size(0), c10::cuda::getCurrentCUDAStream());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

static void check_betas(const at::Tensor& betas, int64_t q) {
  check(betas, "betas", at::kFloat, 1);
  TORCH_CHECK(betas.numel() >= 1 && betas.numel() <= 256, "betas: expected 1..256 scales, got ", betas.numel());
  TORCH_CHECK(q >= 2 && q <= 256, "q: nesting ratio must be in [2, 256], got ", q);
}

static std::tuple<at::Tensor, at::Tensor> nestquant_encode(const at::Tensor& x, int64_t q, const at::Tensor& betas) {
  check(x, "x", at::kFloat, 2);
  TORCH_CHECK(x.size(1) == 8, "x: expected [n, 8], got ", x.sizes());
  check_betas(betas, q);
  auto codes = at::empty({x.size(0), 8}, x.options().dtype(at::kByte));
  auto bidx = at::empty({x.size(0)}, x.options().dtype(at::kByte));
  launch_nestquant_encode(x.data_ptr<float>(), betas.data_ptr<float>(), static_cast<int>(betas.numel()), static_cast<int>(q),
                          codes.data_ptr<uint8_t>(), bidx.data_ptr<uint8_t>(), x.size(0), c10::cuda::getCurrentCUDAStream());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return {codes, bidx};
}

static at::Tensor nestquant_decode(const at::Tensor& codes, const at::Tensor& bidx, int64_t q, const at::Tensor& betas) {
  check(codes, "codes", at::kByte, 2);
  TORCH_CHECK(codes.size(1) == 8, "codes: expected [n, 8], got ", codes.sizes());
  check(bidx, "beta_idx", at::kByte, 1);
  check_shape(bidx, "beta_idx", {codes.size(0)});
  check_betas(betas, q);
  TORCH_CHECK(codes.size(0) == 0 || bidx.max().item<int64_t>() < betas.numel(), "beta_idx: index out of range for ",
              betas.numel(), " betas");
  auto out = at::empty({codes.size(0), 8}, codes.options().dtype(at::kFloat));
  launch_nestquant_decode(codes.data_ptr<uint8_t>(), bidx.data_ptr<uint8_t>(), betas.data_ptr<float>(), static_cast<int>(q),
                          out.data_ptr<float>(), codes.size(0), c10::cuda::getCurrentCUDAStream());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

static at::Tensor nestquant_matmul(const at::Tensor& x, const at::Tensor& codes, const at::Tensor& bidx, int64_t q,
                                   const at::Tensor& betas, int64_t N, int64_t K) {
  check(x, "x", at::kFloat, 2);
  check(codes, "codes", at::kByte, 3);
  check(bidx, "beta_idx", at::kByte, 2);
  check_betas(betas, q);
  TORCH_CHECK(K % 8 == 0, "K: must be a multiple of 8, got ", K);
  TORCH_CHECK(x.size(1) == K, "x: expected K = ", K, " columns, got ", x.size(1));
  check_shape(codes, "codes", {N, K / 8, 8});
  check_shape(bidx, "beta_idx", {N, K / 8});
  TORCH_CHECK(bidx.numel() == 0 || bidx.max().item<int64_t>() < betas.numel(), "beta_idx: index out of range for ",
              betas.numel(), " betas");
  auto y = at::empty({x.size(0), N}, x.options());
  launch_nestquant_matmul(x.data_ptr<float>(), codes.data_ptr<uint8_t>(), bidx.data_ptr<uint8_t>(), betas.data_ptr<float>(),
                          static_cast<int>(q), y.data_ptr<float>(), x.size(0), N, K, c10::cuda::getCurrentCUDAStream());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}

static void check_qkv(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, int64_t sink, int64_t window) {
  check(q, "q", at::kFloat, 3);
  check(k, "k", at::kFloat, 4);
  check(v, "v", at::kFloat, 4);
  TORCH_CHECK(k.size(0) == q.size(0) && k.size(1) == q.size(1) && k.size(3) == q.size(2), "k: expected [B, H, T, D] matching q ",
              q.sizes(), ", got ", k.sizes());
  check_shape(v, "v", k.sizes());
  TORCH_CHECK(sink >= 0 && window >= 0, "sink/window: must be >= 0, got ", sink, ", ", window);
}

static at::Tensor decode_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, int64_t sink, int64_t window,
                                   double scale) {
  check_qkv(q, k, v, sink, window);
  const int64_t BH = q.size(0) * q.size(1), T = k.size(2), D = k.size(3);
  const int64_t a = sink + window >= T ? T : sink, b = sink + window >= T ? T : T - window;
  auto o = at::empty_like(q);
  auto scratch = at::empty({BH, 2, T}, q.options());
  launch_decode_attention(q.data_ptr<float>(), k.data_ptr<float>(), v.data_ptr<float>(), o.data_ptr<float>(),
                          scratch.data_ptr<float>(), BH, T, D, a, b, static_cast<float>(scale),
                          c10::cuda::getCurrentCUDAStream());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return o;
}

static std::tuple<at::Tensor, at::Tensor, at::Tensor> spec_decode_attention(const at::Tensor& q, const at::Tensor& k,
                                                                            const at::Tensor& v, int64_t sink, int64_t window,
                                                                            double lam, double scale) {
  check_qkv(q, k, v, sink, window);
  const int64_t BH = q.size(0) * q.size(1), T = k.size(2), D = k.size(3);
  const int64_t a = sink + window >= T ? T : sink, b = sink + window >= T ? T : T - window;
  auto o = at::empty_like(q), os = at::empty_like(q);
  auto acc = at::empty({q.size(0), q.size(1)}, q.options().dtype(at::kBool));
  auto scratch = at::empty({BH, 2, T}, q.options());
  launch_spec_attention(q.data_ptr<float>(), k.data_ptr<float>(), v.data_ptr<float>(), o.data_ptr<float>(), os.data_ptr<float>(),
                        acc.data_ptr<bool>(), scratch.data_ptr<float>(), BH, T, D, a, b, static_cast<float>(lam),
                        static_cast<float>(scale), c10::cuda::getCurrentCUDAStream());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return {o, os, acc};
}

}  // namespace cuda
}  // namespace icml25

TORCH_LIBRARY_IMPL(icml25, CUDA, m) {
  m.impl("int4_linear", &icml25::cuda::int4_linear);
  m.impl("sparse24_int4_linear", &icml25::cuda::sparse24_int4_linear);
  m.impl("e8_nearest", &icml25::cuda::e8_nearest);
  m.impl("nestquant_encode", &icml25::cuda::nestquant_encode);
  m.impl("nestquant_decode", &icml25::cuda::nestquant_decode);
  m.impl("nestquant_matmul", &icml25::cuda::nestquant_matmul);
  m.impl("decode_attention", &icml25::cuda::decode_attention);
  m.impl("spec_decode_attention", &icml25::cuda::spec_decode_attention);
}
#endif  // ICML25_WITH_CUDA
