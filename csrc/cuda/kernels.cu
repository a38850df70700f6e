// CUDA counterparts of the CPU kernels (csrc/cpu), on the same packed formats (methods.kernels.reference).
//
// The file has two parts:
//  1. device kernels and host launchers on raw pointers; they need only cuda_runtime.h, so nvcc compiles
//     them anywhere (the CI compile check, tests/kernels/test_cuda_compile.py, does exactly that);
//  2. under ICML25_WITH_CUDA (set by methods.kernels.build when torch has CUDA), the torch wrappers
//     with argument checks, registered for the CUDA dispatch key of the icml25 ops.
// The int4 and 2:4+int4 products have a bandwidth path for decode (below, "decode GEMV"): R weight rows per
// block, 16- or 8-byte loads, batch rows in registers. Everything else is written for correctness first:
// one warp per output row for the general GEMV/GEMMs (the fallback for shapes the fast path does not take),
// one thread per 8-vector for the lattice ops, one block per (batch, head) for attention. The lattice
// code uses __fmul_rn / __fadd_rn where the reference's rounding matters (no FMA contraction), so the
// codes are bit-identical to the CPU ones.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdlib>
#include <type_traits>

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

// ----------------------------------------------------------------------------- decode GEMV (bandwidth path)
//
// Taken when K and the group size are multiples of 32 and the weights and x are 16-byte aligned. The unit
// of work is 32 columns of one weight row: 16 bytes of int4, or 8 value bytes + 4 metadata bytes of 2:4.
// A unit lies inside one scale group, so the int4 unit's sum is factored as s·(Σ q·x − z·Σ x) and the 2:4
// unit's as s·Σ q·x. Nibbles become floats exactly through the bit pattern 2^23 + b (a byte permute, then
// one subtraction), avoiding the slower integer-to-float conversion. Each x vector loaded serves the R
// weight rows a thread holds, and each decoded weight serves every batch row of the pass (up to 8).
//  * batch 1 (gemv_b1_*): a block of 128 threads owns R rows; its threads stride over the rows' units (a
//    warp reads 512 contiguous bytes of an int4 row), the next units are loaded before the current ones
//    are used, and one block reduction writes the R outputs. x (16 KB at K = 4096) stays in L1/L2.
//  * batches 2-8 (gemv_sk_*): x is 8x larger, and the batch-1 layout, which reads x from L1 per block of
//    rows, reached 0.03 of the read bandwidth on an H200 at batch 8. Split-K instead: a block owns a chunk
//    of SK_COLS columns and 32-128 rows (sk_rows), stages x's chunk in shared memory once (swizzled so
//    that a warp's 16-byte reads hit distinct banks), and each warp covers the chunk for R rows at a
//    time, a unit per lane, its next rows' loads in flight. Partial sums go to a workspace [chunks, M, N],
//    summed in a fixed order by a second kernel (no atomics: the result is the same on every run).
//    fp32 FMAs, 8 per weight at batch 8, bound this path; int4 passes of 8 rows go to tensor cores instead
//    (gemv_tc_int4 below: 1.27-1.37x this path on an H200, 0.80-0.89x torch's int4 kernel).

constexpr int VEC_THREADS = 128;
constexpr int VEC_MB = 8;       // batch rows per pass; larger batches take several passes
constexpr int SK_COLS = 1024;   // split-K chunk: 32 units, one per lane
constexpr int SK_SLOTS = SK_COLS / 4;  // float4 slots of one batch row's chunk
// Weight rows per thread in the batch-1 kernel: 4, or 2 at 8 batch rows (registers).
template <int MB>
constexpr int vec_rows() { return MB == VEC_MB ? 2 : 4; }

// Byte i of `bytes` (< 256) as a float minus `off` (exact: 2^23 + b is representable, as is 2^23 + off).
__device__ __forceinline__ float byte_f(uint32_t bytes, int i, float off) {
  return __int_as_float(static_cast<int>(__byte_perm(bytes, 0x4B00u, 0x5440u + i))) - (8388608.f + off);
}

__device__ __forceinline__ float pick(const float4& v, uint32_t p) {
  return (p & 2) ? ((p & 1) ? v.w : v.z) : ((p & 1) ? v.y : v.x);
}

__device__ __forceinline__ uint32_t word(const uint4& v, int i) { return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w; }

// One int4 unit of R rows: d[r][m] += Σ q·x (and X[m] += Σ x if SUM_X); xv(m, i) is float4 i (of 8) of the unit's x.
template <int R, int MB, bool SUM_X, class XV>
__device__ __forceinline__ void int4_unit(const uint4 (&wv)[R], XV xv, float (&d)[R][MB], float (&X)[MB]) {
#pragma unroll
  for (int wi = 0; wi < 4; ++wi) {  // 8 columns per 32-bit word: low nibbles are the even columns
    float4 xa[MB], xb[MB];
#pragma unroll
    for (int m = 0; m < MB; ++m) {
      xa[m] = xv(m, 2 * wi);
      xb[m] = xv(m, 2 * wi + 1);
      if (SUM_X) X[m] += (xa[m].x + xa[m].y) + (xa[m].z + xa[m].w) + (xb[m].x + xb[m].y) + (xb[m].z + xb[m].w);
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const uint32_t wd = word(wv[r], wi), lo = wd & 0x0F0F0F0Fu, hi = (wd >> 4) & 0x0F0F0F0Fu;
      const float q0 = byte_f(lo, 0, 0.f), q1 = byte_f(hi, 0, 0.f), q2 = byte_f(lo, 1, 0.f), q3 = byte_f(hi, 1, 0.f);
      const float q4 = byte_f(lo, 2, 0.f), q5 = byte_f(hi, 2, 0.f), q6 = byte_f(lo, 3, 0.f), q7 = byte_f(hi, 3, 0.f);
#pragma unroll
      for (int m = 0; m < MB; ++m) {
        float t = d[r][m];
        t = fmaf(q0, xa[m].x, t);
        t = fmaf(q1, xa[m].y, t);
        t = fmaf(q2, xa[m].z, t);
        t = fmaf(q3, xa[m].w, t);
        t = fmaf(q4, xb[m].x, t);
        t = fmaf(q5, xb[m].y, t);
        t = fmaf(q6, xb[m].z, t);
        d[r][m] = fmaf(q7, xb[m].w, t);
      }
    }
  }
}

// One 2:4 unit of R rows: 8 groups of 4 columns, each a value byte (two kept nibbles, q + 8) and a
// metadata nibble (the two kept positions, 2 bits each, in the order of the value nibbles). d += Σ q·x.
template <int R, int MB, class XV>
__device__ __forceinline__ void sparse24_unit(const uint2 (&v)[R], const uint32_t (&mt)[R], XV xv, float (&d)[R][MB]) {
#pragma unroll(MB == VEC_MB ? 2 : 8)
  for (int j = 0; j < 8; ++j) {
    float4 xg[MB];
#pragma unroll
    for (int m = 0; m < MB; ++m) xg[m] = xv(m, j);
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const uint32_t vw = j < 4 ? v[r].x : v[r].y;
      const float qa = byte_f(vw & 0x0F0F0F0Fu, j & 3, 8.f), qb = byte_f((vw >> 4) & 0x0F0F0F0Fu, j & 3, 8.f);
      const uint32_t nib = mt[r] >> (4 * j), pa = nib & 3, pb = (nib >> 2) & 3;
#pragma unroll
      for (int m = 0; m < MB; ++m) d[r][m] = fmaf(qb, pick(xg[m], pb), fmaf(qa, pick(xg[m], pa), d[r][m]));
    }
  }
}

template <int R, int MB>
__device__ __forceinline__ void zero(float (&a)[R][MB]) {
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int m = 0; m < MB; ++m) a[r][m] = 0.f;
}

// x's float4 slot i of the unit starting at column c0, batch row m (zero past M).
template <int MB>
struct GlobalX {
  const float* x;
  int64_t M, K, c0;
  __device__ __forceinline__ float4 operator()(int m, int i) const {
    return m < M ? __ldg(reinterpret_cast<const float4*>(x + m * K + c0) + i) : make_float4(0.f, 0.f, 0.f, 0.f);
  }
};

// Sum acc over the block's threads; thread r*MB+m writes y[m, n0 + r].
template <int R, int MB>
__device__ __forceinline__ void block_store(float (&acc)[R][MB], float* __restrict__ y, int64_t M, int64_t N, int64_t n0) {
  __shared__ float red[VEC_THREADS / WARP][R * MB];
  const int lane = threadIdx.x % WARP, wid = threadIdx.x / WARP;
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int m = 0; m < MB; ++m) {
      const float v = warp_sum(acc[r][m]);
      if (lane == 0) red[wid][r * MB + m] = v;
    }
  __syncthreads();
  if (threadIdx.x < R * MB) {
    const int r = threadIdx.x / MB, m = threadIdx.x % MB;
    if (n0 + r < N && m < M) {
      float v = 0.f;
      for (int i = 0; i < VEC_THREADS / WARP; ++i) v += red[i][threadIdx.x];
      y[m * N + n0 + r] = v;
    }
  }
}

template <int R, int MB>
__global__ void __launch_bounds__(VEC_THREADS)
    gemv_b1_int4(const float* __restrict__ x, const uint8_t* __restrict__ w, const float* __restrict__ s,
                 const float* __restrict__ z, float* __restrict__ y, int64_t M, int64_t N, int64_t K, int64_t gs) {
  const int64_t n0 = static_cast<int64_t>(blockIdx.x) * R, U = K / 32, G = (K + gs - 1) / gs;
  const uint4* rows[R];
#pragma unroll
  for (int r = 0; r < R; ++r) rows[r] = reinterpret_cast<const uint4*>(w + (n0 + r < N ? n0 + r : n0) * (K / 2));
  float acc[R][MB];
  zero(acc);
  uint4 cur[R];
  const uint4 zero4 = make_uint4(0, 0, 0, 0);
  int64_t u = threadIdx.x;
#pragma unroll
  for (int r = 0; r < R; ++r) cur[r] = (u < U && n0 + r < N) ? __ldcs(rows[r] + u) : zero4;
  for (; u < U; u += VEC_THREADS) {
    uint4 nxt[R];
#pragma unroll
    for (int r = 0; r < R; ++r) nxt[r] = (u + VEC_THREADS < U && n0 + r < N) ? __ldcs(rows[r] + u + VEC_THREADS) : zero4;
    float d[R][MB], X[MB];
    zero(d);
#pragma unroll
    for (int m = 0; m < MB; ++m) X[m] = 0.f;
    int4_unit<R, MB, true>(cur, GlobalX<MB>{x, M, K, u * 32}, d, X);
    const int64_t g = u * 32 / gs;
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int64_t n = n0 + r < N ? n0 + r : n0;
      const float sr = s[n * G + g], zr = z[n * G + g];
#pragma unroll
      for (int m = 0; m < MB; ++m) acc[r][m] = fmaf(sr, fmaf(-zr, X[m], d[r][m]), acc[r][m]);
      cur[r] = nxt[r];
    }
  }
  block_store<R, MB>(acc, y, M, N, n0);
}

template <int R, int MB>
__global__ void __launch_bounds__(VEC_THREADS)
    gemv_b1_sparse24(const float* __restrict__ x, const uint8_t* __restrict__ v, const uint8_t* __restrict__ meta,
                     const float* __restrict__ s, float* __restrict__ y, int64_t M, int64_t N, int64_t K, int64_t gs) {
  const int64_t n0 = static_cast<int64_t>(blockIdx.x) * R, U = K / 32, G = (K + gs - 1) / gs;
  const uint2* vrows[R];
  const uint32_t* mrows[R];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int64_t n = n0 + r < N ? n0 + r : n0;
    vrows[r] = reinterpret_cast<const uint2*>(v + n * (K / 4));
    mrows[r] = reinterpret_cast<const uint32_t*>(meta + n * (K / 8));
  }
  float acc[R][MB];
  zero(acc);
  uint2 cv[R];
  uint32_t cm[R];
  const uint2 empty = make_uint2(0x88888888u, 0x88888888u);  // q = 0 everywhere
  int64_t u = threadIdx.x;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const bool ok = u < U && n0 + r < N;
    cv[r] = ok ? __ldcs(vrows[r] + u) : empty;
    cm[r] = ok ? __ldcs(mrows[r] + u) : 0u;
  }
  for (; u < U; u += VEC_THREADS) {
    uint2 nv[R];
    uint32_t nm[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const bool ok = u + VEC_THREADS < U && n0 + r < N;
      nv[r] = ok ? __ldcs(vrows[r] + u + VEC_THREADS) : empty;
      nm[r] = ok ? __ldcs(mrows[r] + u + VEC_THREADS) : 0u;
    }
    float d[R][MB];
    zero(d);
    sparse24_unit<R, MB>(cv, cm, GlobalX<MB>{x, M, K, u * 32}, d);
    const int64_t g = u * 32 / gs;
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const float sr = s[(n0 + r < N ? n0 + r : n0) * G + g];
#pragma unroll
      for (int m = 0; m < MB; ++m) acc[r][m] = fmaf(sr, d[r][m], acc[r][m]);
      cv[r] = nv[r];
      cm[r] = nm[r];
    }
  }
  block_store<R, MB>(acc, y, M, N, n0);
}

// Swizzled float4 slot: the 8 lanes of a 16-byte shared-memory read phase ask for slots 8i + j (i the
// lane, j fixed), which would share 4 banks; XOR-ing the low 3 bits with i spreads them over all 32.
__device__ __forceinline__ int swz(int slot) { return slot ^ ((slot >> 3) & 7); }

// Stage x[m, k0 : k0 + kc] (m < MB; zero past M and past kc) into xs as swizzled float4 slots.
template <int MB>
__device__ __forceinline__ void stage_x(const float* __restrict__ x, int64_t M, int64_t K, int64_t k0, int kc, float4* xs) {
  for (int i = threadIdx.x; i < MB * SK_SLOTS; i += blockDim.x) {
    const int m = i / SK_SLOTS, c = i % SK_SLOTS;
    xs[m * SK_SLOTS + swz(c)] = (m < M && 4 * c < kc) ? __ldg(reinterpret_cast<const float4*>(x + m * K + k0) + c)
                                                      : make_float4(0.f, 0.f, 0.f, 0.f);
  }
  __syncthreads();
}

template <int MB>
struct SharedX {
  const float4* xs;
  int slot0;  // first slot of the lane's unit
  __device__ __forceinline__ float4 operator()(int m, int i) const { return xs[m * SK_SLOTS + swz(slot0 + i)]; }
};

// Sum each of V = R*MB values over the warp's lanes by halving exchanges (31 shuffles at V = 32 instead of
// 5 per value): lane l ends with the total of value l / (32 / V), stored by the lanes with l % (32 / V) == 0
// to part[m, n0 + r] (value r*MB + m; batch rows from M and weight rows from `end` on skipped).
template <int R, int MB>
__device__ __forceinline__ void warp_store(float (&acc)[R][MB], float* __restrict__ part, int64_t M, int64_t N, int64_t n0,
                                           int64_t end) {
  constexpr int V = R * MB;
  static_assert(V <= WARP && (V & (V - 1)) == 0, "R*MB must be a power of two up to 32");
  float v[V];
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int m = 0; m < MB; ++m) v[r * MB + m] = acc[r][m];
  const int lane = threadIdx.x % WARP;
#pragma unroll
  for (int step = 0; step < 5; ++step) {
    const int off = 16 >> step, h = (V >> step) / 2;  // h values are kept after this exchange
    if (h >= 1) {
      const bool up = lane & off;
#pragma unroll
      for (int i = 0; i < h; ++i) {
        const float send = up ? v[i] : v[i + h], keep = up ? v[i + h] : v[i];
        v[i] = keep + __shfl_xor_sync(0xffffffffu, send, off);
      }
    } else {
      v[0] += __shfl_xor_sync(0xffffffffu, v[0], off);
    }
  }
  constexpr int per = WARP / V;
  const int idx = lane / per, r = idx / MB, m = idx % MB;
  if (lane % per == 0 && m < M && n0 + r < end) part[m * N + n0 + r] = v[0];
}

// Split-K: block (row block, chunk) writes part[chunk, m, n] (chunk stride M*N) for `rows` rows. Each warp
// takes R rows at a time; the first rows' loads are issued before x is staged, and the next rows' loads
// before the current ones are used.
struct SkGeom {
  int64_t k0, u, g, first, end;
  int kc, lane;
  bool active;
  __device__ SkGeom(int64_t N, int64_t K, int64_t gs, int rows) {
    k0 = static_cast<int64_t>(blockIdx.y) * SK_COLS;
    kc = static_cast<int>(K - k0 < SK_COLS ? K - k0 : SK_COLS);
    lane = threadIdx.x % WARP;
    active = 32 * lane < kc;
    u = k0 / 32 + lane;
    g = u * 32 / gs;
    first = static_cast<int64_t>(blockIdx.x) * rows;
    end = first + rows < N ? first + rows : N;
  }
};

template <int R, int MB>
__global__ void __launch_bounds__(VEC_THREADS)
    gemv_sk_int4(const float* __restrict__ x, const uint8_t* __restrict__ w, const float* __restrict__ s,
                 const float* __restrict__ z, float* __restrict__ part, int64_t M, int64_t N, int64_t K, int64_t gs,
                 int rows) {
  __shared__ float4 xs[MB * SK_SLOTS];
  const SkGeom t(N, K, gs, rows);
  const int64_t G = (K + gs - 1) / gs, step = (VEC_THREADS / WARP) * R;
  auto load = [&](int64_t n0, uint4(&wv)[R]) {
#pragma unroll
    for (int r = 0; r < R; ++r)
      wv[r] = t.active && n0 + r < t.end ? __ldcs(reinterpret_cast<const uint4*>(w + (n0 + r) * (K / 2)) + t.u)
                                         : make_uint4(0, 0, 0, 0);
  };
  int64_t n0 = t.first + (threadIdx.x / WARP) * R;
  uint4 cur[R];
  load(n0, cur);
  stage_x<MB>(x, M, K, t.k0, t.kc, xs);
  const SharedX<MB> xv{xs, 8 * t.lane};
  float X[MB];
#pragma unroll
  for (int m = 0; m < MB; ++m) {
    X[m] = 0.f;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const float4 q = xv(m, i);
      X[m] += (q.x + q.y) + (q.z + q.w);
    }
  }
  float* out = part + static_cast<int64_t>(blockIdx.y) * M * N;
  for (; n0 < t.end; n0 += step) {
    uint4 nxt[R];
    load(n0 + step, nxt);
    float acc[R][MB];
    zero(acc);
    int4_unit<R, MB, false>(cur, xv, acc, X);
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const bool ok = t.active && n0 + r < t.end;
      const float sr = ok ? s[(n0 + r) * G + t.g] : 0.f, zr = ok ? z[(n0 + r) * G + t.g] : 0.f;
#pragma unroll
      for (int m = 0; m < MB; ++m) acc[r][m] = sr * fmaf(-zr, X[m], acc[r][m]);
      cur[r] = nxt[r];
    }
    warp_store<R, MB>(acc, out, M, N, n0, t.end);
  }
}

template <int R, int MB>
__global__ void __launch_bounds__(VEC_THREADS)
    gemv_sk_sparse24(const float* __restrict__ x, const uint8_t* __restrict__ v, const uint8_t* __restrict__ meta,
                     const float* __restrict__ s, float* __restrict__ part, int64_t M, int64_t N, int64_t K, int64_t gs,
                     int rows) {
  __shared__ float4 xs[MB * SK_SLOTS];
  const SkGeom t(N, K, gs, rows);
  const int64_t G = (K + gs - 1) / gs, step = (VEC_THREADS / WARP) * R;
  auto load = [&](int64_t n0, uint2(&vv)[R], uint32_t(&mm)[R]) {
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const bool ok = t.active && n0 + r < t.end;
      vv[r] = ok ? __ldcs(reinterpret_cast<const uint2*>(v + (n0 + r) * (K / 4)) + t.u) : make_uint2(0x88888888u, 0x88888888u);
      mm[r] = ok ? __ldcs(reinterpret_cast<const uint32_t*>(meta + (n0 + r) * (K / 8)) + t.u) : 0u;
    }
  };
  int64_t n0 = t.first + (threadIdx.x / WARP) * R;
  uint2 cv[R];
  uint32_t cm[R];
  load(n0, cv, cm);
  stage_x<MB>(x, M, K, t.k0, t.kc, xs);
  const SharedX<MB> xv{xs, 8 * t.lane};
  float* out = part + static_cast<int64_t>(blockIdx.y) * M * N;
  for (; n0 < t.end; n0 += step) {
    uint2 nv[R];
    uint32_t nm[R];
    load(n0 + step, nv, nm);
    float acc[R][MB];
    zero(acc);
    sparse24_unit<R, MB>(cv, cm, xv, acc);
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const float sr = t.active && n0 + r < t.end ? s[(n0 + r) * G + t.g] : 0.f;
#pragma unroll
      for (int m = 0; m < MB; ++m) acc[r][m] *= sr;
      cv[r] = nv[r];
      cm[r] = nm[r];
    }
    warp_store<R, MB>(acc, out, M, N, n0, t.end);
  }
}

// ---- int4, batches 2-8 on tensor cores (sm_80 and later; gemv_tc_int4)
//
// The split-K FMA path above spends 8 fp32 FMAs per weight at batch 8. Here one mma.sync m16n8k16 (bf16 in,
// fp32 accumulate) multiplies 16 weight rows by 16 columns of all 8 batch rows. The codes q (0..15) are exact in
// bf16; x is split into three bf16 parts (hi + mid + lo carries x's 24-bit significand), so three mmas give the
// fp32 product up to rounding of the sums, as the FMA path does. A warp owns 16 rows (lanes hold rows g and g+8,
// g = lane / 4); within a 128-column scale group, lane t = lane % 4 reads 16 bytes of each of its rows (columns
// 32t .. 32t + 31), and mma (w, j) of the group takes columns 32t + 8w + 4j + 0..3 as its k slots 2t, 2t+1, 2t+8,
// 2t+9 — the same columns for the x operand (B), so the sum over k is the group's sum whatever the order. Each
// group's fragment is scaled as s·(Σ q·x − z·Σ x) with Σ x staged per group. A block owns TC_ROWS rows and a chunk
// of TC_COLS columns; x's chunk is staged once in shared memory, already split and in fragment order (each lane
// reads 8 contiguous bytes: no bank conflicts). Partial sums per chunk, then sum_chunks as for split-K.

constexpr int TC_COLS = 512;                       // columns per block (4 scale groups of 128)
constexpr int TC_ROWS = (VEC_THREADS / WARP) * 16;  // 64 rows per block
constexpr int TC_GROUPS = TC_COLS / 128;

// Two floats as bf16x2 (round to nearest even): lo in the low half.
__device__ __forceinline__ uint32_t bf16x2(float lo, float hi) {
  uint32_t r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

__device__ __forceinline__ float bf_lo(uint32_t v) { return __uint_as_float(v << 16); }
__device__ __forceinline__ float bf_hi(uint32_t v) { return __uint_as_float(v & 0xFFFF0000u); }

// A code byte (low nibble: the even column) as bf16x2 (q_lo, q_hi): (128 + q) * 1 - 128, exact.
__device__ __forceinline__ uint32_t code_pair(uint32_t word, int byte) {
  const uint32_t b = (word >> (8 * byte)) & 0xFFu;
  const uint32_t v = (b & 0x0Fu) | ((b & 0xF0u) << 12) | 0x43004300u;
  uint32_t r;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(v), "r"(0x3F803F80u), "r"(0xC300C300u));
#else
  r = v;
  __trap();
#endif
  return r;
}

__device__ __forceinline__ void mma_bf16(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0,
                                         uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#else
  __trap();
#endif
}

__global__ void __launch_bounds__(VEC_THREADS)
    gemv_tc_int4(const float* __restrict__ x, const uint8_t* __restrict__ w, const float* __restrict__ s,
                 const float* __restrict__ z, float* __restrict__ part, int64_t M, int64_t N, int64_t K, int64_t gs) {
  // x's chunk: [split][group][mma (w, j)][lane] of uint2 = bf16 x[n][col0 .. col0 + 3], n = lane / 4, t = lane % 4,
  // col0 = 128 group + 32 t + 8 w + 4 j; and Σ x per (group, n)
  __shared__ uint2 xb[3][TC_GROUPS][8][WARP];
  __shared__ float xsum[TC_GROUPS][8];
  const int64_t k0 = static_cast<int64_t>(blockIdx.y) * TC_COLS, G = (K + gs - 1) / gs;
  const int ng = static_cast<int>((K - k0 < TC_COLS ? K - k0 : TC_COLS) / 128);
  const int lane = threadIdx.x % WARP, gid = lane / 4, t = lane % 4;
  const int64_t r0 = static_cast<int64_t>(blockIdx.x) * TC_ROWS + (threadIdx.x / WARP) * 16 + gid, r1 = r0 + 8;
  // this lane's codes of the chunk, loaded before x is staged
  uint4 c0[TC_GROUPS], c1[TC_GROUPS];
#pragma unroll
  for (int gg = 0; gg < TC_GROUPS; ++gg) {
    const int64_t off = (k0 + 128 * gg) / 2 + 16 * t;
    c0[gg] = gg < ng && r0 < N ? __ldcs(reinterpret_cast<const uint4*>(w + r0 * (K / 2) + off)) : make_uint4(0, 0, 0, 0);
    c1[gg] = gg < ng && r1 < N ? __ldcs(reinterpret_cast<const uint4*>(w + r1 * (K / 2) + off)) : make_uint4(0, 0, 0, 0);
  }
  for (int e = threadIdx.x; e < TC_GROUPS * 8 * WARP; e += VEC_THREADS) {
    const int gg = e / (8 * WARP), wj = (e / WARP) % 8, l = e % WARP, n = l / 4;
    const int64_t col = k0 + 128 * gg + 32 * (l % 4) + 8 * (wj / 2) + 4 * (wj % 2);
    float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
    if (gg < ng && n < M) v = __ldg(reinterpret_cast<const float4*>(x + n * K + col));
    float r[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int p = 0; p < 3; ++p) {
      const uint32_t a = bf16x2(r[0], r[1]), b = bf16x2(r[2], r[3]);
      xb[p][gg][wj][l] = make_uint2(a, b);
      r[0] -= bf_lo(a);
      r[1] -= bf_hi(a);
      r[2] -= bf_lo(b);
      r[3] -= bf_hi(b);
    }
  }
  if (threadIdx.x < TC_GROUPS * 8) {
    const int gg = threadIdx.x / 8, n = threadIdx.x % 8;
    float v = 0.f;
    if (gg < ng && n < M)
      for (int c = 0; c < 128; c += 4) {
        const float4 q = __ldg(reinterpret_cast<const float4*>(x + n * K + k0 + 128 * gg + c));
        v += (q.x + q.y) + (q.z + q.w);
      }
    xsum[gg][n] = v;
  }
  __syncthreads();
  float acc[4] = {0.f, 0.f, 0.f, 0.f};  // (r0, 2t), (r0, 2t + 1), (r1, 2t), (r1, 2t + 1)
#pragma unroll
  for (int gg = 0; gg < TC_GROUPS; ++gg) {
    if (gg >= ng) break;
    // six independent accumulators (split p, half j): a chain of dependent mmas waits out each one's latency
    float cc[3][2][4];
#pragma unroll
    for (int p = 0; p < 3; ++p)
#pragma unroll
      for (int j = 0; j < 2; ++j)
#pragma unroll
        for (int i = 0; i < 4; ++i) cc[p][j][i] = 0.f;
#pragma unroll
    for (int wi = 0; wi < 4; ++wi) {
      const uint32_t u0 = word(c0[gg], wi), u1 = word(c1[gg], wi);
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        const uint32_t a0 = code_pair(u0, 2 * j), a1 = code_pair(u1, 2 * j);
        const uint32_t a2 = code_pair(u0, 2 * j + 1), a3 = code_pair(u1, 2 * j + 1);
#pragma unroll
        for (int p = 0; p < 3; ++p) {
          const uint2 b = xb[p][gg][2 * wi + j][lane];
          mma_bf16(cc[p][j], a0, a1, a2, a3, b.x, b.y);
        }
      }
    }
    float c[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) c[i] = (cc[0][0][i] + cc[0][1][i]) + ((cc[1][0][i] + cc[1][1][i]) + (cc[2][0][i] + cc[2][1][i]));
    const int64_t g = (k0 + 128 * gg) / gs;
    const float s0 = r0 < N ? s[r0 * G + g] : 0.f, z0 = r0 < N ? z[r0 * G + g] : 0.f;
    const float s1 = r1 < N ? s[r1 * G + g] : 0.f, z1 = r1 < N ? z[r1 * G + g] : 0.f;
    const float xa = xsum[gg][2 * t], xb1 = xsum[gg][2 * t + 1];
    acc[0] = fmaf(s0, fmaf(-z0, xa, c[0]), acc[0]);
    acc[1] = fmaf(s0, fmaf(-z0, xb1, c[1]), acc[1]);
    acc[2] = fmaf(s1, fmaf(-z1, xa, c[2]), acc[2]);
    acc[3] = fmaf(s1, fmaf(-z1, xb1, c[3]), acc[3]);
  }
  float* out = part + static_cast<int64_t>(blockIdx.y) * M * N;
  const int64_t n0 = 2 * t, n1 = 2 * t + 1;
  if (r0 < N && n0 < M) out[n0 * N + r0] = acc[0];
  if (r0 < N && n1 < M) out[n1 * N + r0] = acc[1];
  if (r1 < N && n0 < M) out[n0 * N + r1] = acc[2];
  if (r1 < N && n1 < M) out[n1 * N + r1] = acc[3];
}

// y[m, n] = Σ_c part[c, m, n] in chunk order.
__global__ void sum_chunks(const float* __restrict__ part, float* __restrict__ y, int64_t M, int64_t N, int64_t chunks) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= M * N) return;
  float v = 0.f;
  for (int64_t c = 0; c < chunks; ++c) v += part[c * M * N + i];
  y[i] = v;
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

inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// The decode-GEMV path's condition: whole 32-column units inside scale groups, aligned vector loads.
// ICML25_CUDA_GEMV=0 forces the general kernels (read at every call, for benchmarks' before/after).
inline bool gemv_path(const float* x, const void* w, int64_t K, int64_t gs) {
  const char* off = std::getenv("ICML25_CUDA_GEMV");
  return K % 32 == 0 && gs % 32 == 0 && aligned16(x) && aligned16(w) && !(off && off[0] == '0');
}

inline int64_t sk_chunks(int64_t K) { return (K + SK_COLS - 1) / SK_COLS; }

// The int4 tensor-core path: whole 128-column scale groups, a GPU of compute capability 8.0 or later; passes of
// 8 batch rows by default (ICML25_CUDA_TC=1: of 2-8 rows too; =0: never; read at every call), the rest on the
// split-K FMA path.
inline bool tc_small_batches() {
  const char* env = std::getenv("ICML25_CUDA_TC");
  return env && env[0] == '1';
}

inline bool tc_path(int64_t K, int64_t gs) {
  const char* env = std::getenv("ICML25_CUDA_TC");
  if (K % 128 != 0 || gs % 128 != 0 || (env && env[0] == '0')) return false;
  int dev = 0, major = 0;
  return cudaGetDevice(&dev) == cudaSuccess && cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess &&
         major >= 8;
}

// Floats of workspace the split-K pass needs (batches of 2 or more rows); 0 where it is not taken.
int64_t gemv_workspace(int64_t M, int64_t N, int64_t K, int64_t gs) {
  const int64_t chunks = (K + TC_COLS - 1) / TC_COLS;  // the more of the two paths' chunk counts
  return M > 1 && K % 32 == 0 && gs % 32 == 0 ? chunks * (M < VEC_MB ? M : VEC_MB) * N : 0;
}

// Batch chunks of at most VEC_MB rows; f(MB constant, row offset, rows) launches one chunk.
template <class F>
void by_batch_chunks(int64_t M, F f) {
  for (int64_t m0 = 0; m0 < M; m0 += VEC_MB) {
    const int64_t mb = M - m0 < VEC_MB ? M - m0 : VEC_MB;
    if (mb == 1) f(std::integral_constant<int, 1>(), m0, mb);
    else if (mb == 2) f(std::integral_constant<int, 2>(), m0, mb);
    else if (mb <= 4) f(std::integral_constant<int, 4>(), m0, mb);
    else f(std::integral_constant<int, VEC_MB>(), m0, mb);
  }
}

inline unsigned blocks_of(int64_t n, int64_t per) { return static_cast<unsigned>((n + per - 1) / per); }

// Weight rows per split-K block: the largest of 128, 64, 32 that still gives two blocks per multiprocessor
// (an H200 measured 128 best for the 11008-row and 11008-column Llama shapes, 32-64 for 4096 x 4096);
// ICML25_CUDA_SK_ROWS overrides it (read at every call; benchmarks' --explore).
inline int sk_rows(int64_t N, int64_t K) {
  const char* e = std::getenv("ICML25_CUDA_SK_ROWS");
  if (e && std::atoi(e) > 0) return std::atoi(e);
  int dev = 0, sms = 132;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
    sms = 132;
  int rows = 128;
  while (rows > 32 && static_cast<int64_t>(blocks_of(N, rows)) * sk_chunks(K) < 2 * sms) rows /= 2;
  return rows;
}

// One batch chunk of the decode-GEMV path: the batch-1 kernel at one row (or without a workspace), else
// split-K into `work` and the ordered chunk sum into y.
template <int MB, class B1, class SK>
void gemv_chunk(int64_t rows, int64_t N, int64_t K, float* y, float* work, cudaStream_t st, B1 b1, SK sk) {
  constexpr int R = vec_rows<MB>();
  if constexpr (MB == 1) {
    b1(std::integral_constant<int, R>(), dim3(blocks_of(N, R)));
  } else {
    if (work == nullptr) return b1(std::integral_constant<int, R>(), dim3(blocks_of(N, R)));
    const int per = sk_rows(N, K);
    const dim3 grid(blocks_of(N, per), static_cast<unsigned>(sk_chunks(K)));
    const char* r2 = std::getenv("ICML25_CUDA_SK_R");  // experiment: 2 weight rows per warp pass instead of 4
    if (r2 && r2[0] == '2') sk(std::integral_constant<int, 2>(), grid, per);
    else sk(std::integral_constant<int, 4>(), grid, per);
    sum_chunks<<<blocks_of(rows * N, 256), 256, 0, st>>>(work, y, rows, N, sk_chunks(K));
  }
}

void launch_int4_linear(const float* x, const uint8_t* w, const float* s, const float* z, float* y, int64_t M, int64_t N,
                        int64_t K, int64_t gs, float* work, cudaStream_t st) {
  if (M <= 0 || N <= 0) return;
  if (!gemv_path(x, w, K, gs)) {
    int4_linear_kernel<<<row_blocks(N), ROWS_PER_BLOCK * WARP, 0, st>>>(x, w, s, z, y, M, N, K, gs);
    return;
  }
  const bool tc = work != nullptr && tc_path(K, gs);
  by_batch_chunks(M, [&](auto mb, int64_t m0, int64_t rows) {
    constexpr int MB = decltype(mb)::value;
    const float* xc = x + m0 * K;
    float* yc = y + m0 * N;
    if (MB > 1 && tc && (MB == VEC_MB || tc_small_batches())) {
      const int64_t chunks = K / TC_COLS + (K % TC_COLS != 0);
      gemv_tc_int4<<<dim3(blocks_of(N, TC_ROWS), static_cast<unsigned>(chunks)), VEC_THREADS, 0, st>>>(xc, w, s, z, work, rows,
                                                                                                   N, K, gs);
      sum_chunks<<<blocks_of(rows * N, 256), 256, 0, st>>>(work, yc, rows, N, chunks);
      return;
    }
    gemv_chunk<MB>(
        rows, N, K, yc, work, st,
        [&](auto r, dim3 grid) { gemv_b1_int4<decltype(r)::value, MB><<<grid, VEC_THREADS, 0, st>>>(xc, w, s, z, yc, rows, N, K, gs); },
        [&](auto r, dim3 grid, int per) {
          gemv_sk_int4<decltype(r)::value, MB><<<grid, VEC_THREADS, 0, st>>>(xc, w, s, z, work, rows, N, K, gs, per);
        });
  });
}

void launch_sparse24(const float* x, const uint8_t* v, const uint8_t* meta, const float* s, float* y, int64_t M, int64_t N,
                     int64_t K, int64_t gs, float* work, cudaStream_t st) {
  if (M <= 0 || N <= 0) return;
  if (!gemv_path(x, v, K, gs) || !aligned16(meta)) {
    sparse24_kernel<<<row_blocks(N), ROWS_PER_BLOCK * WARP, 0, st>>>(x, v, meta, s, y, M, N, K, gs);
    return;
  }
  by_batch_chunks(M, [&](auto mb, int64_t m0, int64_t rows) {
    constexpr int MB = decltype(mb)::value;
    const float* xc = x + m0 * K;
    float* yc = y + m0 * N;
    gemv_chunk<MB>(
        rows, N, K, yc, work, st,
        [&](auto r, dim3 grid) {
          gemv_b1_sparse24<decltype(r)::value, MB><<<grid, VEC_THREADS, 0, st>>>(xc, v, meta, s, yc, rows, N, K, gs);
        },
        [&](auto r, dim3 grid, int per) {
          gemv_sk_sparse24<decltype(r)::value, MB><<<grid, VEC_THREADS, 0, st>>>(xc, v, meta, s, work, rows, N, K, gs, per);
        });
  });
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
#include <c10/cuda/CUDAGuard.h>
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
  const c10::cuda::CUDAGuard guard(x.device());
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
  auto work = at::empty({gemv_workspace(x.size(0), N, K, gs)}, x.options());
  launch_int4_linear(x.data_ptr<float>(), packed.data_ptr<uint8_t>(), scales.data_ptr<float>(), zeros.data_ptr<float>(),
                     y.data_ptr<float>(), x.size(0), N, K, gs, work.numel() ? work.data_ptr<float>() : nullptr,
                     c10::cuda::getCurrentCUDAStream());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}

static at::Tensor sparse24_int4_linear(const at::Tensor& x, const at::Tensor& values, const at::Tensor& meta,
                                       const at::Tensor& scales, int64_t gs, int64_t K, const c10::optional<at::Tensor>& L,
                                       const c10::optional<at::Tensor>& R) {
  check(x, "x", at::kFloat, 2);
  const c10::cuda::CUDAGuard guard(x.device());
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
  auto work = at::empty({gemv_workspace(x.size(0), N, K, gs)}, x.options());
  launch_sparse24(x.data_ptr<float>(), values.data_ptr<uint8_t>(), meta.data_ptr<uint8_t>(), scales.data_ptr<float>(),
                  y.data_ptr<float>(), x.size(0), N, K, gs, work.numel() ? work.data_ptr<float>() : nullptr,
                  c10::cuda::getCurrentCUDAStream());
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
  const c10::cuda::CUDAGuard guard(x.device());
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
  const c10::cuda::CUDAGuard guard(x.device());
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
  const c10::cuda::CUDAGuard guard(codes.device());
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
  const c10::cuda::CUDAGuard guard(x.device());
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
  const c10::cuda::CUDAGuard guard(q.device());
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
  const c10::cuda::CUDAGuard guard(q.device());
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
