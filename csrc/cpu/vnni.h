// AVX-512 VNNI paths of the int4 and 2:4+int4 linear ops (vpdpwssd: int16 x int16 -> int32 dot products; vpdpbusd:
// u8 x s8 -> int32, for the int4 decode row).
//
// Activations are quantized per (row m, scale group g) to int16: q = round(x / a), a = max|x| / 32767 over the
// group, so |x - a q| <= a / 2: at most 1.5e-5 of the group's largest activation (bf16, as torch's int4 kernel
// takes activations, rounds each value by up to 2^-9 of itself, ~130x more at the largest one). The weight
// integers (int4 nibbles, or the 2:4 format's signed
// codes) are exact in int16, so each group's dot product sum_k u_k q_k is exact in int32, and one float FMA
// per (row, group) applies s[n, g] * a[m, g]; the zero point enters as s z sum_k a q_k. Only whole scale
// groups with group_size % 64 == 0 take this path; the columns of a last partial group run the scalar fp32
// loop on x itself.
//
// Structure (measured on the 2-core AMD EPYC development VM, benchmarks/decode_bandwidth.py):
// - int4, one activation row (decode), group_size % 128 == 0: int4_b1_rows, 4 weight rows per pass, vpdpbusd on the
//   weight nibbles as bytes against the int16 activations split into their high and low bytes (same exact integer
//   result), so that a weight line needs no widening. On this CPU a zmm dot product (vpdpwssd, vpdpbusd), permute
//   (vpermt2w/b) or multishift issues once per cycle, all on one pipe (measured: 12 of them, alone or mixed, take 12
//   cycles), and every other zmm operation beside them costs another 1/3-1/2 cycle (6 dot products + 6 ands, shifts
//   or widenings: 8-9 cycles). The batch-1 int4 product is compute-bound there: 4 dot products per 64-byte line are
//   the floor at int16 precision, and this path drops the 2 widenings per line: on one thread, DRAM-streamed,
//   0.86-0.89 of the read bandwidth against 0.77-0.81 for the int16 pass of 4 rows below and 0.63-0.65 for one row
//   per pass, in the same run.
// - small batches (int4 below 8 rows and other group sizes, 2:4 below 12): a register-blocked pass takes NR weight
//   rows (their nibbles or slots decoded once per pass) against a tile of up to 4 activation rows (each activation
//   load shared by the NR rows), whole rows at a time; a software prefetch NR + 1 weight rows ahead overlaps the
//   weights' DRAM traffic with the arithmetic. One activation row against several weight rows prefetches into L2
//   only, so that the streamed weight lines do not evict the activations from L1.
// - batches: k-major, the batch along the vector lanes, in chunks of up to 32 rows: int4 from 8 rows (i4k_*: a GEMM
//   micro-kernel, each activation vector reused by 4-8 weight rows), 2:4 from 12 rows (s24k_*: no gather).
// As the gather (vpermt2w) shares the dot products' pipe, it costs as much as the second dot product dense int4 does
// instead: only the k-major 2:4 path skips the zeros' work. Tried and dropped, for being no faster here: int4 weights
// decoded into an int16 buffer for tiles of 2 weight rows x 4 activation rows, 6- and 8-row activation tiles, 2:4
// slots decoded once per row for all tiles, a dense int16 expansion of the 2:4 rows, k-major 2:4 chunks of 8 lanes
// (ymm), blocks of scale groups (above), for one activation row software prefetches at other distances or into L1,
// and for 2:4 one prefetch per cache line instead of one per 64 columns.
//
// Dispatch: compiled where the compiler targets AVX512-BW + VNNI (the 2:4 path also VBMI's multishift),
// taken when the running CPU reports them (__builtin_cpu_supports) and ICML25_CPU_VNNI is not "0"; the
// fp32 paths in int4.h / sparse24.h are the fallback. The thresholds and tilings above are the default choice,
// measured here; a plan (plan.h), tuned on the running CPU by methods.kernels.tuning, may replace them per shape and
// batch range. Where the CPU has AMX-INT8, int4 batches go to amx.h first (int4.h dispatches).
#pragma once
#include "common.h"
#include "plan.h"

#include <cstdlib>
#include <type_traits>
#include <vector>


#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__)
#define ICML25_VNNI 1
#endif

namespace icml25 {

// Whether the VNNI paths may run: compiled in, supported by this CPU, and not switched off by ICML25_CPU_VNNI=0.
inline bool vnni_enabled(bool need_vbmi) {
#ifdef ICML25_VNNI
  const char* e = std::getenv("ICML25_CPU_VNNI");
  if (e != nullptr && e[0] == '0') return false;
  static const bool cpu = __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vnni");
#ifdef __AVX512VBMI__
  static const bool vbmi = __builtin_cpu_supports("avx512vbmi");
#else
  const bool vbmi = false;
#endif
  return cpu && (!need_vbmi || vbmi);
#else
  (void)need_vbmi;
  return false;
#endif
}

// The kept slots of the groups of 4 [j0, j1) of one 2:4 row (values v, positions mt, scales s of the row), scalar:
// f(column, weight) for each nonzero slot inside K, its scale looked up by its column (any group size).
template <class F>
inline void sp24_each_slot(const uint8_t* v, const uint8_t* mt, const float* s, int64_t K, int64_t gs, int64_t j0,
                           int64_t j1, const F& f) {
  for (int64_t j = j0; j < j1; ++j) {
    const int nibm = (mt[j >> 1] >> ((j & 1) * 4)) & 15;
    for (int t = 0; t < 2; ++t) {
      const int64_t col = 4 * j + ((nibm >> (2 * t)) & 3);
      const int q = ((v[j] >> (4 * t)) & 15) - 8;
      if (q == 0 || col >= K) continue;
      f(col, s[col / gs] * static_cast<float>(q));
    }
  }
}

#ifdef ICML25_VNNI

// int16 activations of the first GF whole groups, scale a [M, GF] and sum_k a q_k over the group [M, GF], in one of
// three layouts (row stride ld, padded by one cache line so that rows do not alias at 4 KiB):
// - Natural: q [M, GF * gs] int16 in column order (the 2:4 gather);
// - Nibble64: int16, per chunk of 64 columns the 32 even columns then the 32 odd ones, so that a packed int4 byte's
//   low nibbles meet the first half and its high nibbles the second (vpdpwssd);
// - Bytes128 (one row, gs % 128 == 0): each q = 256 h + l split into its signed high byte h and unsigned low byte l,
//   per chunk of 128 columns 256 bytes: h of the 64 even columns, h of the 64 odd ones, then l of the same
//   (vpdpbusd: 64 weights of a 64-byte line per instruction, exact as q is).
enum class ActLayout { Natural, Nibble64, Bytes128 };

struct QAct {
  at::Tensor qbuf;  // owns q: torch's CPU allocator aligns to 64 bytes, so every row of q starts a cache line
  int16_t* q = nullptr;
  uint8_t* qb = nullptr;  // Bytes128
  std::vector<float> a, sum;
  int64_t GF = 0, KQ = 0, ld = 0;  // ld: row stride of q, in int16 elements
};

// One group of gs (a multiple of 16) activations: q = round(x / a) in [-32767, 32767] (nearest even, as
// std::nearbyint), a = max|x| / 32767; returns a and sets qsum = sum_k q_k.
inline float quantize_group(const float* xg, int64_t gs, int16_t* q, int64_t& qsum) {
  __m512 mx = _mm512_setzero_ps();
  for (int64_t k = 0; k < gs; k += 16) mx = _mm512_max_ps(mx, _mm512_abs_ps(_mm512_loadu_ps(xg + k)));
  const float amax = _mm512_reduce_max_ps(mx);
  const __m512 inv = _mm512_set1_ps(amax > 0.f ? 32767.f / amax : 0.f);
  const __m512i lo = _mm512_set1_epi32(-32767), hi = _mm512_set1_epi32(32767);
  __m512i s = _mm512_setzero_si512();
  for (int64_t k = 0; k < gs; k += 16) {
    const __m512i v = _mm512_min_epi32(hi, _mm512_max_epi32(lo, _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(xg + k), inv))));
    s = _mm512_add_epi64(s, _mm512_cvtepi32_epi64(_mm512_castsi512_si256(v)));
    s = _mm512_add_epi64(s, _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(v, 1)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + k), _mm512_cvtepi32_epi16(v));
  }
  qsum = _mm512_reduce_add_epi64(s);
  return amax / 32767.f;
}

// The same quantization of one group, scalar, for the layouts that scatter q (the k-major chunks below, the AMX
// tiles of amx.h): q_k = round(x_k / a) clamped to [-32767, 32767] (nearest even), a = max|x| / 32767; store(k, q_k)
// places each q; returns a and sets qsum = sum_k q_k. One definition, so the paths cannot drift apart.
template <class Store>
inline float quantize_group_scalar(const float* xg, int64_t gs, Store&& store, int64_t& qsum) {
  float amax = 0.f;
  for (int64_t k = 0; k < gs; ++k) amax = std::max(amax, std::fabs(xg[k]));
  const float inv = amax > 0.f ? 32767.f / amax : 0.f;
  qsum = 0;
  for (int64_t k = 0; k < gs; ++k) {
    const int16_t q = static_cast<int16_t>(std::max(-32767.f, std::min(32767.f, std::nearbyint(xg[k] * inv))));
    store(k, q);
    qsum += q;
  }
  return amax / 32767.f;
}

inline QAct quantize_act(const float* x, int64_t M, int64_t K, int64_t gs, int64_t GF, ActLayout layout) {
  QAct r;
  r.GF = GF;
  r.KQ = GF * gs;
  const int64_t ld = r.ld = r.KQ + 32;
  r.qbuf = at::empty({M * ld}, at::kShort);
  r.q = r.qbuf.data_ptr<int16_t>();
  r.qb = reinterpret_cast<uint8_t*>(r.q);
  r.a.resize(M * GF);
  r.sum.resize(M * GF);
  alignas(64) int16_t ev[32], od[32];
  for (int i = 0; i < 32; ++i) ev[i] = static_cast<int16_t>(2 * i), od[i] = static_cast<int16_t>(2 * i + 1);
  const __m512i ie = _mm512_load_si512(ev), io = _mm512_load_si512(od);  // even / odd words of a pair of vectors
  // in one thread up to ~64K activations (decode batches): a fork / join costs more than the work there
  at::parallel_for(0, M * GF, std::max<int64_t>(16, 65536 / gs), [&](int64_t i0, int64_t i1) {
    std::vector<int16_t> tmp(layout == ActLayout::Natural ? 0 : gs);
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t m = i / GF, g = i % GF;
      int16_t* qg = r.q + m * ld + g * gs;
      int64_t qs = 0;
      const float a = quantize_group(x + m * K + g * gs, gs, layout == ActLayout::Natural ? qg : tmp.data(), qs);
      r.a[i] = a;
      r.sum[i] = a * static_cast<float>(qs);
      if (layout == ActLayout::Nibble64) {
        for (int64_t c = 0; c < gs; c += 64) {
          const __m512i v0 = _mm512_loadu_si512(tmp.data() + c), v1 = _mm512_loadu_si512(tmp.data() + c + 32);
          _mm512_storeu_si512(qg + c, _mm512_permutex2var_epi16(v0, ie, v1));
          _mm512_storeu_si512(qg + c + 32, _mm512_permutex2var_epi16(v0, io, v1));
        }
      } else if (layout == ActLayout::Bytes128) {
        uint8_t* qb = r.qb + 2 * (m * ld + g * gs);  // 2 bytes per column
        for (int64_t c = 0; c < gs; c += 128, qb += 256) {
          const int16_t* t = tmp.data() + c;
          const __m512i v0 = _mm512_loadu_si512(t), v1 = _mm512_loadu_si512(t + 32), v2 = _mm512_loadu_si512(t + 64),
                        v3 = _mm512_loadu_si512(t + 96);
          const __m512i e0 = _mm512_permutex2var_epi16(v0, ie, v1), e1 = _mm512_permutex2var_epi16(v2, ie, v3);
          const __m512i o0 = _mm512_permutex2var_epi16(v0, io, v1), o1 = _mm512_permutex2var_epi16(v2, io, v3);
          const auto put = [&](int off, __m512i u0, __m512i u1) {  // 64 words -> 64 bytes (vpmovwb truncates)
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(qb + off), _mm512_cvtepi16_epi8(u0));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(qb + off + 32), _mm512_cvtepi16_epi8(u1));
          };
          put(0, _mm512_srai_epi16(e0, 8), _mm512_srai_epi16(e1, 8));
          put(64, _mm512_srai_epi16(o0, 8), _mm512_srai_epi16(o1, 8));
          put(128, e0, e1);
          put(192, o0, o1);
        }
      }
    }
  });
  return r;
}

struct I4V {
  const QAct* qa;
  const float* x;     // [M, K] (the scalar tail)
  const uint8_t* w;   // [N, K2]
  const float* s;     // [N, G]
  const float* z;     // [N, G]
  float* y;           // [M, N]
  int64_t M, N, K, K2, G, gs;
};

// Per (row m, group g) of a weight row: sa = s[g] * a[m, g] (the float factor of the group's integer dot product),
// and zt[m] = sum_g s[g] z[g] sum[m, g] (the zero points' term; z == nullptr: none), vectorized over groups so
// that the inner loop's epilogue per (row, group) is one convert and one FMA with a broadcast operand.
template <int MT>
inline void group_factors(const QAct& qa, const float* s, const float* z, int64_t m0, int64_t g0, int64_t gv,
                          float* sa, float* zt) {
  const int64_t GF = qa.GF;
  for (int m = 0; m < MT; ++m) {
    const float* am = qa.a.data() + (m0 + m) * GF;
    const float* sm = qa.sum.data() + (m0 + m) * GF;
    __m512 v = _mm512_setzero_ps();
    for (int64_t g = g0; g < gv; g += 16) {
      const __mmask16 k = gv - g >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << (gv - g)) - 1);
      const __m512 sv = _mm512_maskz_loadu_ps(k, s + g);
      _mm512_mask_storeu_ps(sa + m * GF + g, k, _mm512_mul_ps(sv, _mm512_maskz_loadu_ps(k, am + g)));
      if (z != nullptr)
        v = _mm512_fmadd_ps(_mm512_mul_ps(sv, _mm512_maskz_loadu_ps(k, z + g)), _mm512_maskz_loadu_ps(k, sm + g), v);
    }
    zt[m] = z != nullptr ? _mm512_reduce_add_ps(v) : 0.f;
  }
}

// acc + the pairwise int16 dot products of a and b (vpdpwssd). Written in asm because GCC 12 copies the accumulator
// to another register and back around every intrinsic vpdpwssd in these loops (two extra moves per instruction).
ICML25_INLINE __m512i dpwssd(__m512i acc, __m512i a, __m512i b) {
  asm("vpdpwssd %2, %1, %0" : "+v"(acc) : "v"(a), "vm"(b));
  return acc;
}

inline float* scratch(int64_t n) {
  thread_local std::vector<float> buf;
  if (static_cast<int64_t>(buf.size()) < n) buf.resize(n);
  return buf.data();
}

// Every weight row against every activation row: the pass f(MT, NR, n, m0, g0, g1) takes weight rows n .. n + NR (a
// last remainder one at a time) against a tile of MT <= 4 activation rows, whole rows (g0 = 0, g1 = G), the tiles of
// one block of 64 weight rows in turn, so that its rows stay in L2 between tiles. Measured with NR weight rows per
// pass: blocks of scale groups that kept a tile's activations in L1 (<= 16 KB) were slower, at batch 2-6 1.00-1.31x
// torch int4 against 1.16-1.56x for whole rows (the weight rows, read in segments, streamed worse).
template <int NR = 1, class F>
inline void rows_by_tiles(int64_t M, int64_t N, int64_t G, const F& f) {
  using One = std::integral_constant<int, 1>;
  using Nr = std::integral_constant<int, NR>;
  at::parallel_for(0, N, 16, [&](int64_t n0, int64_t n1) {
    for (int64_t t0 = n0; t0 < n1; t0 += 64) {
      const int64_t t1 = std::min(n1, t0 + 64);
      for (int64_t m = 0; m < M; m += 4) {
        const auto pass = [&](auto nr, int64_t n) {
          switch (std::min<int64_t>(4, M - m)) {
            case 4: f(std::integral_constant<int, 4>(), nr, n, m, 0, G); break;
            case 3: f(std::integral_constant<int, 3>(), nr, n, m, 0, G); break;
            case 2: f(std::integral_constant<int, 2>(), nr, n, m, 0, G); break;
            default: f(std::integral_constant<int, 1>(), nr, n, m, 0, G); break;
          }
        };
        int64_t n = t0;
        for (; n + NR <= t1; n += NR) pass(Nr(), n);
        for (; n < t1; ++n) pass(One(), n);
      }
    }
  });
}

// y[m0 .. m0 + MT, n .. n + NR] += (scale groups [g0, g1) of rows n .. n + NR) . x, the NR weight rows sharing each
// activation load; the scalar tail of a last partial group when g1 == G.
template <int MT, int NR>
inline void int4_vnni_rows(const I4V& a, int64_t n, int64_t m0, int64_t g0, int64_t g1) {
  const QAct& qa = *a.qa;
  const int64_t ld = qa.ld, GF = qa.GF, half = a.gs / 2;
  const __m512i lo4 = _mm512_set1_epi16(15);
  const int64_t gv = std::min(g1, GF);
  float* sa = scratch(NR * MT * GF);
  float zt[NR][MT];
  for (int r = 0; r < NR; ++r)
    group_factors<MT>(qa, a.s + (n + r) * a.G, a.z + (n + r) * a.G, m0, g0, gv, sa + r * MT * GF, zt[r]);
  __m512 af[NR][MT];
  for (int r = 0; r < NR; ++r)
    for (int m = 0; m < MT; ++m) af[r][m] = _mm512_setzero_ps();
  for (int64_t g = g0; g < gv; ++g) {
    // one int32 accumulator per row and group: the chains of successive groups are independent
    __m512i acc[NR][MT];
    for (int r = 0; r < NR; ++r)
      for (int m = 0; m < MT; ++m) acc[r][m] = _mm512_setzero_si512();
    for (int64_t j = g * half; j < (g + 1) * half; j += 32) {
      __m512i wl[NR], wh[NR];
      for (int r = 0; r < NR; ++r) {
        const uint8_t* w = a.w + (n + r) * a.K2 + j;
        // the weights NR + 1 rows ahead (the rows are contiguous), so that their DRAM traffic overlaps this pass's
        // arithmetic; one activation row against several weight rows: NR rows ahead into L2 only, so that the
        // streamed lines do not evict the activations from L1
        if constexpr (MT == 1 && NR > 1) _mm_prefetch(reinterpret_cast<const char*>(w + NR * a.K2), _MM_HINT_T1);
        else _mm_prefetch(reinterpret_cast<const char*>(w + (NR + 1) * a.K2), _MM_HINT_T0);
        // 32 bytes = 64 weights: low nibbles pair with the even columns, high nibbles with the odd ones
        const __m512i b = _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w)));
        wl[r] = _mm512_and_si512(b, lo4);
        wh[r] = _mm512_srli_epi16(b, 4);
      }
      for (int m = 0; m < MT; ++m) {
        const int16_t* xr = qa.q + (m0 + m) * ld + 2 * j;  // the chunk's even columns, then its odd ones
        const __m512i x0 = _mm512_loadu_si512(xr), x1 = _mm512_loadu_si512(xr + 32);
        for (int r = 0; r < NR; ++r) acc[r][m] = dpwssd(dpwssd(acc[r][m], wl[r], x0), wh[r], x1);
      }
    }
    for (int r = 0; r < NR; ++r)
      for (int m = 0; m < MT; ++m)
        af[r][m] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc[r][m]), _mm512_set1_ps(sa[r * MT * GF + m * GF + g]), af[r][m]);
  }
  for (int r = 0; r < NR; ++r) {
    const uint8_t* w = a.w + (n + r) * a.K2;
    const float* s = a.s + (n + r) * a.G;
    const float* z = a.z + (n + r) * a.G;
    float tail[MT];
    for (int m = 0; m < MT; ++m) tail[m] = 0.f;
    if (g1 == a.G)
      for (int64_t g = std::max(g0, GF); g < a.G; ++g)
        for (int64_t k = g * a.gs; k < std::min(a.K, (g + 1) * a.gs); ++k) {
          const float wk = s[g] * (static_cast<float>((w[k >> 1] >> ((k & 1) * 4)) & 15) - z[g]);
          for (int m = 0; m < MT; ++m) tail[m] += wk * a.x[(m0 + m) * a.K + k];
        }
    for (int m = 0; m < MT; ++m) a.y[(m0 + m) * a.N + n + r] += (_mm512_reduce_add_ps(af[r][m]) - zt[r][m]) + tail[m];
  }
}

ICML25_INLINE __m512i dpbusd(__m512i acc, __m512i a, __m512i b) {
  asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(a), "vm"(b));
  return acc;
}

// One activation row (Bytes128, gs % 128 == 0) against weight rows n .. n + NR: y[n + r] += row . x. A 64-byte line
// of a weight row is 128 nibbles: its low nibbles (the even columns) and high nibbles (the odd ones) as two vectors of
// unsigned bytes, each met by vpdpbusd with the activations' signed high bytes (w . h) and, as the signed operand,
// with their unsigned low bytes (l . w): the group's sum_k w_k q_k = 256 (w . h) + (l . w), exact in int32. Per line
// that is 4 dot products of 64 weights (vpdpwssd on int16 needs 4 of 32, plus two vpmovzxbw to widen the nibbles), and
// the NR rows share each activation load. The weights 2 NR rows ahead are prefetched into L2 (measured DRAM-streamed
// at the Llama-7B shapes: NR or 3 NR rows ahead, or with the L3 hint, were within the noise of it).
template <int NR>
inline void int4_b1_rows(const I4V& a, int64_t n) {
  const QAct& qa = *a.qa;
  const int64_t GF = qa.GF, CPG = a.gs / 128;
  const __m512i m4 = _mm512_set1_epi8(15);
  float* sa = scratch(NR * GF);
  float zt[NR];
  for (int r = 0; r < NR; ++r) group_factors<1>(qa, a.s + (n + r) * a.G, a.z + (n + r) * a.G, 0, 0, GF, sa + r * GF, zt + r);
  __m512 af[NR];
  for (int r = 0; r < NR; ++r) af[r] = _mm512_setzero_ps();
  for (int64_t g = 0; g < GF; ++g) {
    __m512i ah[NR], al[NR];
    for (int r = 0; r < NR; ++r) ah[r] = al[r] = _mm512_setzero_si512();
    for (int64_t c = g * CPG; c < (g + 1) * CPG; ++c) {
      const uint8_t* xc = qa.qb + 256 * c;
      const __m512i he = _mm512_load_si512(xc), ho = _mm512_load_si512(xc + 64);
      const __m512i le = _mm512_load_si512(xc + 128), lo = _mm512_load_si512(xc + 192);
      for (int r = 0; r < NR; ++r) {
        const uint8_t* w = a.w + (n + r) * a.K2 + 64 * c;
        _mm_prefetch(reinterpret_cast<const char*>(w + 2 * NR * a.K2), _MM_HINT_T1);
        const __m512i b = _mm512_loadu_si512(w);
        const __m512i we = _mm512_and_si512(b, m4), wo = _mm512_and_si512(_mm512_srli_epi16(b, 4), m4);
        ah[r] = dpbusd(dpbusd(ah[r], we, he), wo, ho);
        al[r] = dpbusd(dpbusd(al[r], le, we), lo, wo);
      }
    }
    for (int r = 0; r < NR; ++r) {
      const __m512i t = _mm512_add_epi32(_mm512_slli_epi32(ah[r], 8), al[r]);
      af[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(t), _mm512_set1_ps(sa[r * GF + g]), af[r]);
    }
  }
  for (int r = 0; r < NR; ++r) {
    const uint8_t* w = a.w + (n + r) * a.K2;
    const float* s = a.s + (n + r) * a.G;
    const float* z = a.z + (n + r) * a.G;
    float tail = 0.f;
    for (int64_t k = GF * a.gs; k < a.K; ++k)
      tail += s[k / a.gs] * (static_cast<float>((w[k >> 1] >> ((k & 1) * 4)) & 15) - z[k / a.gs]) * a.x[k];
    a.y[n + r] += (_mm512_reduce_add_ps(af[r]) - zt[r]) + tail;
  }
}

// ---- k-major products: a chunk of up to MP activation rows along the vector lanes.

// The int16 activations of rows [m0, m0 + mc) k-major, qt[k][lane] (padding lanes 0), with per (group, lane) the
// scale a = max|x| / 32767 (as quantize_act) and a * sum_k q_k over the group; whole groups only.
template <int MP>
struct KAct {
  std::vector<int16_t> qt;
  at::Tensor asc, asum;  // [GF][MP] float, 64-byte aligned

  KAct(const float* x, int64_t m0, int64_t mc, int64_t K, int64_t gs)
      : qt((K / gs) * gs * MP, 0), asc(at::zeros({K / gs * MP}, at::kFloat)), asum(at::zeros({K / gs * MP}, at::kFloat)) {
    float* as = asc.data_ptr<float>();
    float* su = asum.data_ptr<float>();
    at::parallel_for(0, K / gs, std::max<int64_t>(1, 16384 / (gs * MP)), [&](int64_t g0, int64_t g1) {
      for (int64_t g = g0; g < g1; ++g)
        for (int64_t m = 0; m < mc; ++m) {
          int64_t qs = 0;
          as[g * MP + m] = quantize_group_scalar(
              x + (m0 + m) * K + g * gs, gs, [&](int64_t k, int16_t q) { qt[(g * gs + k) * MP + m] = q; }, qs);
          su[g * MP + m] = as[g * MP + m] * static_cast<float>(qs);
        }
    });
  }
  // the 32-bit word (qt[k0][lane], qt[k1][lane]): an int16 pair for vpdpwssd
  uint32_t pair(int64_t k0, int64_t k1, int m) const {
    return static_cast<uint16_t>(qt[k0 * MP + m]) | (static_cast<uint32_t>(static_cast<uint16_t>(qt[k1 * MP + m])) << 16);
  }
};

// y[m0 + m][n] += acc[n][m] for the rows [n0, n1): along y's rows in blocks of 64 (column by column, the mc rows of y,
// N floats apart, fall into one cache set and evict each other)
template <int MP>
inline void kmajor_store(const float* acc, float* y, int64_t m0, int64_t mc, int64_t N, int64_t n0, int64_t n1) {
  for (int64_t t0 = n0; t0 < n1; t0 += 64)
    for (int64_t m = 0; m < mc; ++m)
      for (int64_t n = t0; n < std::min(n1, t0 + 64); ++n) y[(m0 + m) * N + n] += acc[n * MP + m];
}

// int4: the activations as column pairs xp[p][lane] = (q[2p], q[2p+1]) are shared by all weight rows, so a tile of NR
// weight rows reuses each loaded vector of xp NR times, and each weight pair (one packed byte: u[2p] | u[2p+1] << 4,
// decoded to two int16) is one broadcast: the micro-kernel of a GEMM, NR x MP outputs per pass.
struct I4K {
  const uint8_t* w;    // [N, K2]
  const float* s;      // [N, G]
  const float* z;      // [N, G]
  const uint32_t* xp;  // [KF / 2][MP]
  const float* asc;    // [GF][MP]
  const float* asum;   // [GF][MP]
  float* acc;          // [N][MP]
  int64_t K2, G, GF, gs;
};

ICML25_INLINE __m256i dpwssd(__m256i acc, __m256i a, __m256i b) {
  asm("vpdpwssd %2, %1, %0" : "+v"(acc) : "v"(a), "vm"(b));
  return acc;
}

// acc[n .. n + NR][0 .. MP) += rows n .. n + NR (whole groups) times the chunk's activations.
template <int MP, int NR>
inline void i4k_tile(const I4K& a, int64_t n) {
  using V = std::conditional_t<MP == 8, __m256i, __m512i>;
  constexpr int NB = MP == 8 ? 1 : MP / 16;  // vectors per row of xp
  constexpr int L = MP == 8 ? 8 : 16;        // lanes per vector
  const int64_t QP = a.gs / 2;               // pairs (bytes) per group
  alignas(64) uint32_t wp[NR][32];           // decoded pairs, 32 at a time (a group has a multiple of 32)
  const __m512i nib = _mm512_set1_epi32(0x000F000F);
  for (int64_t g = 0; g < a.GF; ++g) {
    V acc[NR][NB];
    for (int r = 0; r < NR; ++r)
      for (int b = 0; b < NB; ++b) acc[r][b] = V{};
    for (int64_t p0 = 0; p0 < QP; p0 += 32) {
      for (int r = 0; r < NR; ++r) {
        const uint8_t* w = a.w + (n + r) * a.K2 + g * QP + p0;
        _mm_prefetch(reinterpret_cast<const char*>(w + NR * a.K2), _MM_HINT_T0);  // the next tile's rows
        for (int i = 0; i < 32; i += 16) {
          // byte u0 | u1 << 4 -> the int16 pair (u0, u1): (b | b << 12) & 0x000F000F
          const __m512i b = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + i)));
          _mm512_store_si512(wp[r] + i, _mm512_ternarylogic_epi32(b, _mm512_slli_epi32(b, 12), nib, 0xA8));
        }
      }
      const uint32_t* xg = a.xp + (g * QP + p0) * MP;
      for (int p = 0; p < 32; ++p) {
        V xv[NB];
        for (int b = 0; b < NB; ++b) xv[b] = *reinterpret_cast<const V*>(xg + p * MP + L * b);
        for (int r = 0; r < NR; ++r) {
          V wv;
          if constexpr (MP == 8) wv = _mm256_set1_epi32(static_cast<int>(wp[r][p]));
          else wv = _mm512_set1_epi32(static_cast<int>(wp[r][p]));
          for (int b = 0; b < NB; ++b) acc[r][b] = dpwssd(acc[r][b], xv[b], wv);
        }
      }
    }
    // y += s a (sum u q) - s z (a sum q), per lane
    for (int r = 0; r < NR; ++r) {
      const float sg = a.s[(n + r) * a.G + g], szg = sg * a.z[(n + r) * a.G + g];
      float* yr = a.acc + (n + r) * MP;
      for (int b = 0; b < NB; ++b) {
        if constexpr (MP == 8) {
          const __m256 f = _mm256_fmadd_ps(_mm256_cvtepi32_ps(acc[r][b]), _mm256_mul_ps(_mm256_set1_ps(sg), _mm256_load_ps(a.asc + g * MP)),
                                           _mm256_loadu_ps(yr));
          _mm256_storeu_ps(yr, _mm256_fnmadd_ps(_mm256_set1_ps(szg), _mm256_load_ps(a.asum + g * MP), f));
        } else {
          const __m512 f = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc[r][b]),
                                           _mm512_mul_ps(_mm512_set1_ps(sg), _mm512_load_ps(a.asc + g * MP + 16 * b)),
                                           _mm512_loadu_ps(yr + 16 * b));
          _mm512_storeu_ps(yr + 16 * b, _mm512_fnmadd_ps(_mm512_set1_ps(szg), _mm512_load_ps(a.asum + g * MP + 16 * b), f));
        }
      }
    }
  }
}

// Rows [m0, m0 + mc) of y, mc <= MP (whole groups; the caller adds a last partial group).
// NR weight rows per tile (the plan's nr; by default 4 at 32 lanes, 8 below).
template <int MP, int NR>
inline void i4k_chunk(const float* x, const uint8_t* w, const float* s, const float* z, float* y, int64_t m0, int64_t mc,
                      int64_t N, int64_t K, int64_t K2, int64_t G, int64_t gs) {
  const KAct<MP> ka(x, m0, mc, K, gs);
  const int64_t GF = K / gs, KF = GF * gs;
  at::Tensor xpb = at::empty({KF / 2 * MP}, at::kInt);
  uint32_t* xp = reinterpret_cast<uint32_t*>(xpb.data_ptr<int32_t>());
  at::parallel_for(0, KF / 2, 1024, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p)
      for (int m = 0; m < MP; ++m) xp[p * MP + m] = ka.pair(2 * p, 2 * p + 1, m);
  });
  at::Tensor accb = at::zeros({N * MP}, at::kFloat);
  const I4K a{w, s, z, xp, ka.asc.template data_ptr<float>(), ka.asum.template data_ptr<float>(), accb.data_ptr<float>(), K2, G, GF, gs};
  at::parallel_for(0, N, 16, [&](int64_t n0, int64_t n1) {
    int64_t n = n0;
    for (; n + NR <= n1; n += NR) i4k_tile<MP, NR>(a, n);
    for (; n < n1; ++n) i4k_tile<MP, 1>(a, n);
    kmajor_store<MP>(a.acc, y, m0, mc, N, n0, n1);
  });
}

// Fewest activation rows of a k-major chunk (ICML25_KMAJOR_ROWS_INT4 / _SPARSE24 override it, for benchmarks).
inline int64_t kmajor_min_rows(const char* env, int64_t dflt) {
  const char* e = std::getenv(env);
  return e != nullptr && e[0] != '\0' ? std::max(1, std::atoi(e)) : dflt;
}

// How many leading rows of a batch of M go through k-major chunks of up to 32 rows: whole chunks while at least
// lo rows remain (the rest, fewer than lo, through the row tiles).
inline int64_t kmajor_rows(int64_t M, int64_t lo) {
  int64_t mk = 0;
  while (M - mk >= lo) mk += std::min<int64_t>(32, M - mk);
  return mk;
}

inline void int4_linear_vnni(const float* x, const uint8_t* w, const float* s, const float* z, float* y, int64_t M,
                             int64_t N, int64_t K, int64_t K2, int64_t G, int64_t gs) {
  // by default k-major chunks while at least 8 rows remain (ICML25_KMAJOR_ROWS_INT4), with the columns of a last
  // partial group in fp32, the rest through the row tiles; a plan (plan.h) may send every row one way
  const Plan plan = find_plan(PlanOp::Int4, N, K, gs, M);
  const int64_t mk = plan.path == PlanPath::KMajor ? M
                     : plan.path == PlanPath::Rows ? 0
                                                   : kmajor_rows(M, kmajor_min_rows("ICML25_KMAJOR_ROWS_INT4", 8));
  for (int64_t c0 = 0; c0 < mk; c0 += 32) {
    const int64_t mc = std::min<int64_t>(32, mk - c0);
    const bool nr4 = plan.nr == 4 || (plan.nr == 0 && mc > 16);
    if (mc > 16) (nr4 ? i4k_chunk<32, 4> : i4k_chunk<32, 8>)(x, w, s, z, y, c0, mc, N, K, K2, G, gs);
    else if (mc > 8) (nr4 ? i4k_chunk<16, 4> : i4k_chunk<16, 8>)(x, w, s, z, y, c0, mc, N, K, K2, G, gs);
    else (nr4 ? i4k_chunk<8, 4> : i4k_chunk<8, 8>)(x, w, s, z, y, c0, mc, N, K, K2, G, gs);
  }
  if (mk > 0 && K % gs != 0)
    at::parallel_for(0, N, 64, [&](int64_t n0, int64_t n1) {
      for (int64_t n = n0; n < n1; ++n)
        for (int64_t k = K / gs * gs; k < K; ++k) {
          const float wk = s[n * G + k / gs] * (static_cast<float>((w[n * K2 + (k >> 1)] >> ((k & 1) * 4)) & 15) - z[n * G + k / gs]);
          for (int64_t m = 0; m < mk; ++m) y[m * N + n] += wk * x[m * K + k];
        }
    });
  if (mk == M) return;
  x += mk * K;
  y += mk * N;
  M -= mk;
  if (M == 1 && gs % 128 == 0) {
    // one activation row: the byte-plane kernel, 4 weight rows per pass
    const QAct qa = quantize_act(x, 1, K, gs, K / gs, ActLayout::Bytes128);
    const I4V a{&qa, x, w, s, z, y, 1, N, K, K2, G, gs};
    const auto pass = [&](auto, auto nrr, int64_t n, int64_t, int64_t, int64_t) {
      int4_b1_rows<decltype(nrr)::value>(a, n);
    };
    if (plan.nr == 2) rows_by_tiles<2>(1, N, G, pass);
    else rows_by_tiles<4>(1, N, G, pass);
    return;
  }
  const QAct qa = quantize_act(x, M, K, gs, K / gs, ActLayout::Nibble64);
  const I4V a{&qa, x, w, s, z, y, M, N, K, K2, G, gs};
  // 4 weight rows per pass, measured DRAM-streamed at the Llama-7B shapes, 1 thread, against one row per pass: faster
  // at batches of 2-7, and for one activation row (this pass at group 128) 0.77-0.81 of the read bandwidth against
  // 0.63-0.65 at K = 4096 and 1.26-1.48x torch int4 against 0.89-0.96x at K = 11008
  // (the plan's nr: 2 or 4)
  const auto pass = [&](auto mt, auto nrr, int64_t n, int64_t m, int64_t g0, int64_t g1) {
    int4_vnni_rows<decltype(mt)::value, decltype(nrr)::value>(a, n, m, g0, g1);
  };
  if (plan.nr == 2 && plan.path != PlanPath::KMajor) rows_by_tiles<2>(M, N, G, pass);
  else rows_by_tiles<4>(M, N, G, pass);
}

#ifdef __AVX512VBMI__

struct S24V {
  const QAct* qa;
  const float* x;      // [M, K]
  const uint8_t* v;    // [N, K4]
  const uint8_t* meta; // [N, KM]
  const float* s;      // [N, G]
  float* y;            // [M, N]
  int64_t M, N, K, K4, KM, G, gs;
};

// 64 columns = 32 slots: the 32 signed codes (int16) and the 32 slot columns (0..63) of row n at column k. The 16
// value bytes (32 nibbles) and 8 position bytes are broadcast by the loads (no shuffle), and one vpmultishiftqb each
// moves every word's nibble / 2-bit position into place: with the values' two qwords repeated across the vector,
// word w of qword i = w / 4 holds slot s(w) = 16 (i % 2) + 4 (i / 2) + w % 4. The slots are only reordered (codes and
// columns alike), so the dot product is unchanged. Shuffles and dot products share one pipe: two multishifts, the
// gather and the dot product per 32 slots (from 5 with the shuffle that placed the value qwords).
struct Sp24Consts {
  __m512i ctrl_v, ctrl_m, base, m3, m15, eight;
  Sp24Consts() {
    alignas(64) int8_t cv[64], cm[64];
    alignas(64) int16_t bs[32];
    for (int w = 0; w < 32; ++w) {
      const int i = w / 4, slot = 16 * (i % 2) + 4 * (i / 2) + w % 4;
      cv[2 * w] = static_cast<int8_t>(4 * (slot % 16));  // nibble slot % 16 of value qword i % 2 (copied to qword i)
      cm[2 * w] = static_cast<int8_t>(2 * slot);          // 2-bit position of the slot in the meta qword
      cv[2 * w + 1] = cm[2 * w + 1] = 0;                  // the words' high bytes: masked off
      bs[w] = static_cast<int16_t>(4 * (slot / 2));       // the slot's group of 4 columns
    }
    ctrl_v = _mm512_load_si512(cv);
    ctrl_m = _mm512_load_si512(cm);
    base = _mm512_load_si512(bs);
    m3 = _mm512_set1_epi16(3);
    m15 = _mm512_set1_epi16(15);
    eight = _mm512_set1_epi16(8);
  }
};

// The 32 slots (codes q, columns idx) of the 64 columns at k of a row: codes as int16, columns 0..63.
inline void sp24_slots(const uint8_t* v, const uint8_t* mt, int64_t k, const Sp24Consts& C, __m512i& q, __m512i& idx) {
  const __m512i vb = _mm512_broadcast_i64x2(_mm_loadu_si128(reinterpret_cast<const __m128i*>(v + (k >> 2))));
  q = _mm512_sub_epi16(_mm512_and_si512(_mm512_multishift_epi64_epi8(C.ctrl_v, vb), C.m15), C.eight);
  long long mw;
  std::memcpy(&mw, mt + (k >> 3), 8);
  const __m512i raw = _mm512_multishift_epi64_epi8(C.ctrl_m, _mm512_set1_epi64(mw));
  idx = _mm512_ternarylogic_epi32(raw, C.m3, C.base, 0xEA);  // (raw & 3) | base
}


// y[m0 .. m0 + MT, n .. n + NR] += (scale groups [g0, g1) of rows n .. n + NR) . x: the NR rows share each pair of
// activation loads (one gather per row from the same two registers); the scalar tail of a last partial group when
// g1 == G.
template <int MT, int NR>
inline void sp24_vnni_rows(const S24V& a, const Sp24Consts& C, int64_t n, int64_t m0, int64_t g0, int64_t g1) {
  const QAct& qa = *a.qa;
  const int64_t ld = qa.ld, GF = qa.GF;
  const int64_t gv = std::min(g1, GF);
  float* sa = scratch(NR * MT * GF);
  float zt[MT];
  for (int r = 0; r < NR; ++r) group_factors<MT>(qa, a.s + (n + r) * a.G, nullptr, m0, g0, gv, sa + r * MT * GF, zt);
  __m512 af[NR][MT];
  for (int r = 0; r < NR; ++r)
    for (int m = 0; m < MT; ++m) af[r][m] = _mm512_setzero_ps();
  for (int64_t g = g0; g < gv; ++g) {
    __m512i acc[NR][MT];
    for (int r = 0; r < NR; ++r)
      for (int m = 0; m < MT; ++m) acc[r][m] = _mm512_setzero_si512();
    for (int64_t k = g * a.gs; k < (g + 1) * a.gs; k += 64) {
      __m512i q[NR], idx[NR];
      for (int r = 0; r < NR; ++r) {
        const uint8_t* v = a.v + (n + r) * a.K4;
        const uint8_t* mt = a.meta + (n + r) * a.KM;
        // with several activation rows, NR + 1 weight rows ahead (one prefetch per 64-byte line of values, 256
        // columns, and of positions, 512 columns): the loads from DRAM overlap this row's arithmetic (measured: it
        // slows the one-row product, which the hardware prefetcher keeps fed)
        if constexpr (MT > 1) _mm_prefetch(reinterpret_cast<const char*>(v + (NR + 1) * a.K4 + (k >> 2)), _MM_HINT_T0);
        if constexpr (MT > 1) _mm_prefetch(reinterpret_cast<const char*>(mt + (NR + 1) * a.KM + (k >> 3)), _MM_HINT_T0);
        if constexpr (MT == 1 && NR > 1) _mm_prefetch(reinterpret_cast<const char*>(v + NR * a.K4 + (k >> 2)), _MM_HINT_T1);
        if constexpr (MT == 1 && NR > 1) _mm_prefetch(reinterpret_cast<const char*>(mt + NR * a.KM + (k >> 3)), _MM_HINT_T1);
        sp24_slots(v, mt, k, C, q[r], idx[r]);
      }
      for (int m = 0; m < MT; ++m) {
        const int16_t* xr = qa.q + (m0 + m) * ld + k;
        const __m512i x0 = _mm512_loadu_si512(xr), x1 = _mm512_loadu_si512(xr + 32);
        for (int r = 0; r < NR; ++r) acc[r][m] = dpwssd(acc[r][m], q[r], _mm512_permutex2var_epi16(x0, idx[r], x1));
      }
    }
    for (int r = 0; r < NR; ++r)
      for (int m = 0; m < MT; ++m)
        af[r][m] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc[r][m]), _mm512_set1_ps(sa[r * MT * GF + m * GF + g]), af[r][m]);
  }
  for (int r = 0; r < NR; ++r) {
    float tail[MT];
    for (int m = 0; m < MT; ++m) tail[m] = 0.f;
    if (g1 == a.G && GF < a.G) {
      // the slots of the last partial group, scalar on fp32 x (each slot's scale looked up by its column)
      sp24_each_slot(a.v + (n + r) * a.K4, a.meta + (n + r) * a.KM, a.s + (n + r) * a.G, a.K, a.gs, GF * a.gs / 4, a.K4,
                     [&](int64_t col, float wk) {
                       for (int m = 0; m < MT; ++m) tail[m] += wk * a.x[(m0 + m) * a.K + col];
                     });
    }
    for (int m = 0; m < MT; ++m) a.y[(m0 + m) * a.N + n + r] += _mm512_reduce_add_ps(af[r][m]) + tail[m];
  }
}

// ---- 2:4, batches of >= 12 rows (ICML25_KMAJOR_ROWS_SPARSE24): the k-major product (no gather).
//
// The gather of the path above costs one permute per activation row and 64 columns, as much as the dot product it
// feeds, so a compute-bound batch gains nothing from skipping half the weights. Here the batch runs along the
// vector lanes instead: a chunk of up to MP = 16 or 32 activation rows is quantized k-major (qT[k][m]), and
// for every aligned group of 4 columns and each of the 6 position pairs p0 < p1 it may keep, the lanes hold the
// int16 pairs (qT[4j+p0][m], qT[4j+p1][m]) (the table X6: 6 / 4 x the activations, made once per call). A weight
// row's kept pair of group j is then one broadcast int16 pair, and its product with all MP rows is one vpdpwssd
// against the X6 entry its 2-bit positions select: two weights x MP rows per instruction, no permute. Positions
// that are not increasing (pack_sparse24_int4 never writes them) send that (row, scale group) to the scalar fp32 loop.

struct S24K {
  const float* x;       // [M, K]
  const uint8_t* v;     // [N, K4]
  const uint8_t* meta;  // [N, KM]
  const float* s;       // [N, G]
  const int16_t* x6;    // [GF][QG][6][MP][2] for the chunk's rows
  const float* at;      // [GF][MP]: activation scale of (group, lane); 0 on padding lanes
  float* acc;           // [N][MP]
  int64_t m0, mc, K, K4, KM, G, GF, gs;
};

// The pairs (int16 codes of slot 0 | slot 1 << 16) and X6 byte offsets of the QG quads of row n's scale group g;
// true when a quad's positions are not increasing (the group then takes the scalar loop).
template <int MP>
inline bool s24k_decode(const S24K& a, int64_t n, int64_t g, int32_t* pair, int32_t* off) {
  const int64_t QG = a.gs / 4, q0 = g * QG;
  const uint8_t* vr = a.v + n * a.K4 + q0;
  const uint8_t* mr = a.meta + n * a.KM + q0 / 2;  // QG is even: a group starts on a whole meta byte
  constexpr int SH = MP == 16 ? 6 : 7;  // log2 of an X6 entry's bytes (MP lanes x 4)
  // (p0 | p1 << 2) -> byte offset of the pair among (0,1) (0,2) (0,3) (1,2) (1,3) (2,3) within a quad's 6 entries;
  // the sign bit marks positions that are not increasing
  constexpr int X = INT32_MIN;
  const __m512i lut = _mm512_setr_epi32(X, X, X, X, 0 << SH, X, X, X, 1 << SH, 3 << SH, X, X, 2 << SH, 4 << SH, 5 << SH, X);
  // byte i of 8 meta bytes -> dwords 2i and 2i + 1, shifted so that quad j's nibble is the dword's low 4 bits
  // (vpermd reads only those)
  const __m128i dup = _mm_setr_epi8(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7);
  const __m512i sh = _mm512_setr_epi32(0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4);
  const __m512i nib_lo = _mm512_set1_epi32(0x000F000F), eight = _mm512_set1_epi16(8);
  const __m512i step = _mm512_set1_epi32(16 * 6 << SH);
  __m512i base = _mm512_setr_epi32(0, 6 << SH, 12 << SH, 18 << SH, 24 << SH, 30 << SH, 36 << SH, 42 << SH, 48 << SH,
                                   54 << SH, 60 << SH, 66 << SH, 72 << SH, 78 << SH, 84 << SH, 90 << SH);
  __m512i badv = _mm512_setzero_si512();
  for (int64_t i = 0; i < QG; i += 16, base = _mm512_add_epi32(base, step)) {
    // byte (u0 | u1 << 4) -> int16 pair (u0 - 8, u1 - 8) in one dword: (b | b << 12) & 0x000F000F, minus 8 per half
    const __m512i b = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(vr + i)));
    const __m512i u = _mm512_ternarylogic_epi32(b, _mm512_slli_epi32(b, 12), nib_lo, 0xA8);  // (A | B) & C
    _mm512_store_si512(pair + i, _mm512_sub_epi16(u, eight));
    const __m128i mb = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(mr + i / 2));
    const __m512i nib = _mm512_srlv_epi32(_mm512_cvtepu8_epi32(_mm_shuffle_epi8(mb, dup)), sh);
    const __m512i c = _mm512_permutexvar_epi32(nib, lut);
    badv = _mm512_or_si512(badv, c);
    _mm512_store_si512(off + i, _mm512_add_epi32(base, c));
  }
  const bool bad = _mm512_movepi32_mask(badv) != 0;
  return bad;
}

// acc[n][0..MP) += row n's scale group g times the chunk's MP activation rows, from its decoded pairs and offsets.
template <int MP>
inline void s24k_group(const S24K& a, int64_t n, int64_t g, const int32_t* pair, const int32_t* off, bool bad) {
  constexpr int NB = MP / 16;  // vectors of lanes per X6 entry
  constexpr int P = 4 / NB;            // independent accumulators per vector (dpwssd's latency)
  const int64_t QG = a.gs / 4, q0 = g * QG;
  float* yr = a.acc + n * MP;
  const float sg = a.s[n * a.G + g];
  if (bad) {
    sp24_each_slot(a.v + n * a.K4, a.meta + n * a.KM, a.s + n * a.G, a.K, a.gs, q0, q0 + QG, [&](int64_t col, float w) {
      for (int64_t m = 0; m < a.mc; ++m) yr[m] += w * a.x[(a.m0 + m) * a.K + col];
    });
    return;
  }
  const char* xg = reinterpret_cast<const char*>(a.x6 + q0 * 6 * MP * 2);
  __m512i acc[NB][P];
  for (int bl = 0; bl < NB; ++bl)
    for (int p = 0; p < P; ++p) acc[bl][p] = _mm512_setzero_si512();
  for (int64_t j = 0; j < QG; j += P)
    for (int p = 0; p < P; ++p) {
      const char* e = xg + off[j + p];
      const __m512i w = _mm512_set1_epi32(pair[j + p]);
      for (int bl = 0; bl < NB; ++bl) acc[bl][p] = dpwssd(acc[bl][p], w, _mm512_load_si512(e + 64 * bl));
    }
  for (int bl = 0; bl < NB; ++bl) {
    __m512i t = acc[bl][0];
    for (int p = 1; p < P; ++p) t = _mm512_add_epi32(t, acc[bl][p]);
    const __m512 f = _mm512_mul_ps(_mm512_set1_ps(sg), _mm512_load_ps(a.at + g * MP + 16 * bl));
    _mm512_storeu_ps(yr + 16 * bl, _mm512_fmadd_ps(_mm512_cvtepi32_ps(t), f, _mm512_loadu_ps(yr + 16 * bl)));
  }
}

// The chunk of activation rows [m0, m0 + mc), mc <= MP, into y[m0 .. m0 + mc, :] (whole groups only: GF of them).
template <int MP>
inline void s24k_chunk(const float* x, const uint8_t* v, const uint8_t* meta, const float* s, float* y, int64_t m0,
                       int64_t mc, int64_t N, int64_t K, int64_t K4, int64_t KM, int64_t G, int64_t gs) {
  const int64_t GF = K / gs, KF = GF * gs, QG = gs / 4;
  const KAct<MP> ka(x, m0, mc, K, gs);
  // X6[quad][pair][lane] = (qt[4 quad + p0][lane], qt[4 quad + p1][lane]) as one 32-bit word
  static constexpr int P0[6] = {0, 0, 0, 1, 1, 2}, P1[6] = {1, 2, 3, 2, 3, 3};
  at::Tensor x6b = at::empty({KF / 4 * 6 * MP * 2}, at::kShort);
  uint32_t* x6 = reinterpret_cast<uint32_t*>(x6b.data_ptr<int16_t>());
  at::parallel_for(0, KF / 4, 256, [&](int64_t j0, int64_t j1) {
    for (int64_t j = j0; j < j1; ++j)
      for (int c = 0; c < 6; ++c)
        for (int m = 0; m < MP; ++m) x6[(j * 6 + c) * MP + m] = ka.pair(4 * j + P0[c], 4 * j + P1[c], m);
  });
  at::Tensor accb = at::zeros({N * MP}, at::kFloat);
  const S24K a{x, v, meta, s, x6b.data_ptr<int16_t>(), ka.asc.template data_ptr<float>(), accb.data_ptr<float>(), m0, mc, K, K4, KM, G, GF, gs};
  // blocks of groups whose X6 (QG * 6 * MP * 4 bytes a group) stays in L2 while a tile of 64 weight rows passes
  const int64_t gb = std::max<int64_t>(1, (256 << 10) / (QG * 6 * MP * 4));
  at::parallel_for(0, N, 16, [&](int64_t n0, int64_t n1) {
    alignas(64) int32_t pair[2][1024], off[2][1024];  // quads per group <= 1024 (gs <= 4096)
    bool bad[2] = {false, false};
    for (int64_t g0 = 0; g0 < GF; g0 += gb) {
      const int64_t g1 = std::min(GF, g0 + gb);
      for (int64_t t0 = n0; t0 < n1; t0 += 64)
        for (int64_t g = g0; g < g1; ++g)
          for (int64_t n = t0, t1 = std::min(n1, t0 + 64); n < t1; ++n) {
            // the block's first group meets each weight row's segment [g0, g1) first: fetch it 8 rows ahead (the
            // rows are K4 bytes apart, too far for the hardware prefetcher); the block's other groups find it cached
            if (g == g0 && n + 8 < n1) {
              const char* pv = reinterpret_cast<const char*>(v + (n + 8) * K4 + g0 * QG);
              const char* pm = reinterpret_cast<const char*>(meta + (n + 8) * KM + g0 * QG / 2);
              for (int64_t o = 0; o < (g1 - g0) * QG; o += 64) _mm_prefetch(pv + o, _MM_HINT_T0);
              for (int64_t o = 0; o < (g1 - g0) * QG / 2; o += 64) _mm_prefetch(pm + o, _MM_HINT_T0);
            }
            // decoded one row ahead: a pair or offset is read back long after its vector store (read back at
            // once, as the store-to-load forwarding of wide stores fails, it cost ~3x here)
            const int cur = n & 1;
            if (n == t0) bad[cur] = s24k_decode<MP>(a, n, g, pair[cur], off[cur]);
            if (n + 1 < t1) bad[cur ^ 1] = s24k_decode<MP>(a, n + 1, g, pair[cur ^ 1], off[cur ^ 1]);
            s24k_group<MP>(a, n, g, pair[cur], off[cur], bad[cur]);
          }
    }
    kmajor_store<MP>(a.acc, y, m0, mc, N, n0, n1);
  });
}

// Rows [m0, m1) of y through the k-major chunks (whole groups), then the columns of a last partial group.
inline void sparse24_linear_vnni_kmajor(const float* x, const uint8_t* v, const uint8_t* meta, const float* s, float* y,
                                        int64_t m0, int64_t m1, int64_t N, int64_t K, int64_t K4, int64_t KM, int64_t G,
                                        int64_t gs) {
  for (int64_t c0 = m0; c0 < m1; c0 += 32) {
    const int64_t mc = std::min<int64_t>(32, m1 - c0);
    if (mc > 16) s24k_chunk<32>(x, v, meta, s, y, c0, mc, N, K, K4, KM, G, gs);
    else s24k_chunk<16>(x, v, meta, s, y, c0, mc, N, K, K4, KM, G, gs);
  }
  // the columns of a last partial group: scalar fp32, as in the row path
  const int64_t GF = K / gs;
  if (GF < G)
    at::parallel_for(0, N, 64, [&](int64_t n0, int64_t n1) {
      for (int64_t n = n0; n < n1; ++n)
        sp24_each_slot(v + n * K4, meta + n * KM, s + n * G, K, gs, GF * gs / 4, K4, [&](int64_t col, float w) {
          for (int64_t m = m0; m < m1; ++m) y[m * N + n] += w * x[m * K + col];
        });
    });
}

inline void sparse24_linear_vnni(const float* x, const uint8_t* v, const uint8_t* meta, const float* s, float* y,
                                 int64_t M, int64_t N, int64_t K, int64_t K4, int64_t KM, int64_t G, int64_t gs) {
  // below 12 rows, the padding of a 16-lane chunk cost more than the gather (measured on the 2-core EPYC VM: 8 rows
  // in 8 lanes ran at 0.8x the gather path, 16 rows at 1.4-1.6x)
  // (a plan, plan.h, may send every row one way)
  const Plan plan = find_plan(PlanOp::Sparse24, N, K, gs, M);
  const int64_t mk = gs > 4096                      ? 0
                     : plan.path == PlanPath::KMajor ? M
                     : plan.path == PlanPath::Rows   ? 0
                                                     : kmajor_rows(M, kmajor_min_rows("ICML25_KMAJOR_ROWS_SPARSE24", 12));
  if (mk > 0) sparse24_linear_vnni_kmajor(x, v, meta, s, y, 0, mk, N, K, K4, KM, G, gs);
  if (mk == M) return;
  x += mk * K;
  y += mk * N;
  M -= mk;
  const QAct qa = quantize_act(x, M, K, gs, K / gs, ActLayout::Natural);
  const S24V a{&qa, x, v, meta, s, y, M, N, K, K4, KM, G, gs};
  const Sp24Consts C;
  // weight rows per pass (measured as for int4): 4 at batches of 1-2 (at batch 1 1.13-1.46x torch int4 against
  // 0.83-0.90x with one row); 2 from 3 rows up, where 4 weight rows x 4 activation rows run out of registers
  // (the plan's nr overrides this)
  const auto pass = [&](auto mt, auto nr, int64_t n, int64_t m, int64_t g0, int64_t g1) {
    sp24_vnni_rows<decltype(mt)::value, decltype(nr)::value>(a, C, n, m, g0, g1);
  };
  if (plan.nr == 4 || (plan.nr == 0 && M <= 2)) rows_by_tiles<4>(M, N, G, pass);
  else rows_by_tiles<2>(M, N, G, pass);
}

#endif  // __AVX512VBMI__
#endif  // ICML25_VNNI

}  // namespace icml25
