// AMX-INT8 path of the int4 and 2:4+int4 linear ops for batches (from 8 rows by default): tiles of 16 weight rows x
// 16 activation rows, 64 columns per tile product.
//
// Exactness as in vnni.h: the activations are quantized per (row, scale group) to int16 by its helper
// (quantize_group_scalar), q = round(x / a), and each
// q = 256 h + l is split into its signed high byte h and unsigned low byte l; the weight nibbles u (0..15) become
// bytes. Per group, TDPBUSD (unsigned A x signed B) sums u h and TDPBUUD (unsigned x unsigned) sums u l, so
// sum_k u_k q_k = 256 (u . h) + (u . l) exactly in int32 (|sum| <= 15 * 32767 * gs < 2^31 for gs <= 4096), and the
// epilogue is the k-major path's: y += s a (sum u q) - s z (a sum q). 2:4: its kept codes (-8..7) expanded to a
// dense row of signed bytes per group (zeros at the pruned columns; the tiles do that work, as the dense product
// does), TDPBSSD / TDPBSUD, no zero point. The results equal the VNNI paths' up to the order of the float sums,
// within the ops' tolerance.
//
// Tile layout (C[m][n] += sum_k sum_i A[m][4k + i] * B[k][4n + i], the instructions' definition): A = 16 weight rows
// x 64 columns of their nibbles as bytes (unpacked per group into a buffer), B = 16 rows of 4 columns x 16
// activation rows x 4 bytes (the activations' high or low bytes, laid out once per call), C = int32 [weight row]
// [activation row].
//
// The kernel is written against a small tile interface with two backends: TileAmx, the real instructions (compiled
// with a function-level target attribute, so that the rest of the build keeps -march=native), and TileEmu, a scalar
// emulation of the same instructions on 8 tiles of 16 x 64 bytes, selected by ICML25_CPU_AMX=emulate, so that the
// layout and blocking are tested on CPUs without AMX. Dispatch: the real path where CPUID reports AMX-TILE and
// AMX-INT8, Linux grants the tile data state (arch_prctl ARCH_REQ_XCOMP_PERM) and a one-time self-test of the real
// tiles against their emulation passes (amx_self_test), unless ICML25_CPU_AMX=0; a plan
// (plan.h) may also choose it or not. The real instructions have not run on the development host (an AMD EPYC
// without AMX): only the emulated backend is tested there.
#pragma once
#include "common.h"
#include "plan.h"
#include "vnni.h"

#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

namespace icml25 {

// "0": never; "emulate": the emulated backend at every batch (for tests; slow); otherwise the real one where present.
inline const char* amx_mode() {
  const char* e = std::getenv("ICML25_CPU_AMX");
  return e == nullptr ? "" : e;
}

inline bool amx_emulated() { return std::strcmp(amx_mode(), "emulate") == 0; }

// AMX-TILE + AMX-INT8 reported by CPUID (leaf 7: EDX bits 24 and 25) and the tile data state granted by Linux.
inline bool amx_cpu() {
  static const bool ok = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
    if (!((d >> 24) & 1) || !((d >> 25) & 1)) return false;
#if defined(__linux__) && defined(SYS_arch_prctl)
    constexpr long ARCH_REQ_XCOMP_PERM = 0x1023, XFEATURE_XTILEDATA = 18;
    return syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0;
#else
    return false;
#endif
  }();
  return ok;
}

// The tile configuration both backends use: 8 tiles of 16 rows x 64 bytes (palette 1).
struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0, reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
  TileConfig() {
    for (int i = 0; i < 8; ++i) colsb[i] = 64, rows[i] = 16;
  }
};

// Scalar emulation of the tile instructions used here (their documented semantics).
struct TileEmu {
  alignas(64) uint8_t t[8][16][64];
  void config(const TileConfig&) {}
  void release() {}
  template <int I>
  void zero() {
    std::memset(t[I], 0, sizeof(t[I]));
  }
  template <int I>
  void load(const void* p, int64_t stride) {
    for (int r = 0; r < 16; ++r) std::memcpy(t[I][r], static_cast<const uint8_t*>(p) + r * stride, 64);
  }
  template <int I>
  void store(void* p, int64_t stride) {
    for (int r = 0; r < 16; ++r) std::memcpy(static_cast<uint8_t*>(p) + r * stride, t[I][r], 64);
  }
  // C[m][n] (int32) += sum_{k < 16} sum_{i < 4} A[m][4k + i] * B[k][4n + i], A and B signed (SA, SB) or unsigned
  template <int C, int A, int B, bool SA, bool SB>
  void dp() {
    for (int m = 0; m < 16; ++m)
      for (int n = 0; n < 16; ++n) {
        int32_t c;
        std::memcpy(&c, &t[C][m][4 * n], 4);
        for (int k = 0; k < 16; ++k)
          for (int i = 0; i < 4; ++i) {
            const int32_t a = SA ? static_cast<int32_t>(static_cast<int8_t>(t[A][m][4 * k + i])) : t[A][m][4 * k + i];
            const int32_t b = SB ? static_cast<int32_t>(static_cast<int8_t>(t[B][k][4 * n + i])) : t[B][k][4 * n + i];
            c += a * b;
          }
        std::memcpy(&t[C][m][4 * n], &c, 4);
      }
  }
  template <int C, int A, int B>
  void dpbusd() {
    dp<C, A, B, false, true>();
  }
  template <int C, int A, int B>
  void dpbuud() {
    dp<C, A, B, false, false>();
  }
  template <int C, int A, int B>
  void dpbssd() {
    dp<C, A, B, true, true>();
  }
  template <int C, int A, int B>
  void dpbsud() {
    dp<C, A, B, true, false>();
  }
};

#ifdef ICML25_AVX512

#define ICML25_AMX_TARGET __attribute__((target("amx-tile,amx-int8")))

// The real instructions. Their tile numbers are immediates that the intrinsics paste into the assembly text, so each
// template maps its number to a literal (tiles 0-4, the dot products of the kernel below).
#define ICML25_TILE_CASE(I, F, ...)          \
  if constexpr (I == 0) F(0, ##__VA_ARGS__); \
  else if constexpr (I == 1) F(1, ##__VA_ARGS__); \
  else if constexpr (I == 2) F(2, ##__VA_ARGS__); \
  else if constexpr (I == 3) F(3, ##__VA_ARGS__); \
  else if constexpr (I == 4) F(4, ##__VA_ARGS__); \
  else static_assert(I < 5, "tiles 0-4 only")

struct TileAmx {
  ICML25_AMX_TARGET void config(const TileConfig& c) { _tile_loadconfig(&c); }
  ICML25_AMX_TARGET void release() { _tile_release(); }
  template <int I>
  ICML25_AMX_TARGET void zero() {
    ICML25_TILE_CASE(I, _tile_zero);
  }
  template <int I>
  ICML25_AMX_TARGET void load(const void* p, int64_t stride) {
    ICML25_TILE_CASE(I, _tile_loadd, p, stride);
  }
  template <int I>
  ICML25_AMX_TARGET void store(void* p, int64_t stride) {
    ICML25_TILE_CASE(I, _tile_stored, p, stride);
  }
  template <int C, int A, int B>
  ICML25_AMX_TARGET void dpbusd() {
    static_assert(C == 0 && A == 2 && B == 3, "the kernel's one unsigned x signed product");
    _tile_dpbusd(0, 2, 3);
  }
  template <int C, int A, int B>
  ICML25_AMX_TARGET void dpbuud() {
    static_assert(C == 1 && A == 2 && B == 4, "the kernel's one unsigned x unsigned product");
    _tile_dpbuud(1, 2, 4);
  }
  template <int C, int A, int B>
  ICML25_AMX_TARGET void dpbssd() {
    static_assert(C == 0 && A == 2 && B == 3, "the kernel's one signed x signed product");
    _tile_dpbssd(0, 2, 3);
  }
  template <int C, int A, int B>
  ICML25_AMX_TARGET void dpbsud() {
    static_assert(C == 1 && A == 2 && B == 4, "the kernel's one signed x unsigned product");
    _tile_dpbsud(1, 2, 4);
  }
};

// The activations of rows [m0, m0 + 16 * NC) as B tiles: per chunk of 16 rows and 4 columns, 64 bytes (row-major by
// activation row, 4 consecutive columns each), for the high bytes (hb) and the low bytes (lb) of q; the scale a and
// a * sum q per (group, row) as the k-major path (padding rows: 0).
struct AmxAct {
  std::vector<uint8_t> hb, lb;  // [NC][KF / 4][16][4]
  std::vector<float> asc, asum;  // [GF][16 * NC]
  int64_t NC = 0, KF = 0, GF = 0;
};

inline AmxAct amx_act(const float* x, int64_t m0, int64_t mc, int64_t K, int64_t gs) {
  AmxAct r;
  r.NC = ceil_div(mc, 16);
  r.GF = K / gs;
  r.KF = r.GF * gs;
  const int64_t L = 16 * r.NC;
  r.hb.assign(r.NC * r.KF * 16, 0);
  r.lb.assign(r.NC * r.KF * 16, 0);
  r.asc.assign(r.GF * L, 0.f);
  r.asum.assign(r.GF * L, 0.f);
  at::parallel_for(0, r.GF, std::max<int64_t>(1, 16384 / (gs * 16)), [&](int64_t g0, int64_t g1) {
    for (int64_t g = g0; g < g1; ++g)
      for (int64_t m = 0; m < mc; ++m) {
        const int64_t c = m / 16, lane = m % 16;
        int64_t qs = 0;
        r.asc[g * L + m] = quantize_group_scalar(
            x + (m0 + m) * K + g * gs, gs,
            [&](int64_t k, int16_t q) {
              const int64_t col = g * gs + k;
              const int64_t at = ((c * (r.KF / 4) + col / 4) * 16 + lane) * 4 + col % 4;
              r.hb[at] = static_cast<uint8_t>(static_cast<int8_t>(q >> 8));  // q = 256 h + l, h signed, l in 0..255
              r.lb[at] = static_cast<uint8_t>(q & 255);
            },
            qs);
        r.asum[g * L + m] = r.asc[g * L + m] * static_cast<float>(qs);
      }
  });
  return r;
}

// The weights of one format as A tiles: unpack(n, g, u) writes row n's scale group g as gs bytes (one per column),
// with its scale s(n, g) and zero-point factor sz(n, g) = s z (the epilogue subtracts sz * a * sum q).
// int4: the nibbles u in 0..15, unsigned bytes (tdpbusd / tdpbuud).
struct AmxInt4W {
  static constexpr bool kSigned = false;
  const uint8_t* w;
  const float *s, *z;
  int64_t K2, G, gs;
  void unpack(int64_t n, int64_t g, uint8_t* u) const {
    const uint8_t* wr = w + n * K2 + g * gs / 2;
    for (int64_t j = 0; j < gs / 2; j += 32) {  // 32 bytes -> 64 nibbles: low = even column, high = odd
      const __m512i b = _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(wr + j)));
      _mm512_storeu_si512(u + 2 * j, _mm512_or_si512(_mm512_and_si512(b, _mm512_set1_epi16(15)),
                                                     _mm512_slli_epi16(_mm512_srli_epi16(b, 4), 8)));
    }
  }
  float scale(int64_t n, int64_t g) const { return s[n * G + g]; }
  float sz(int64_t n, int64_t g) const { return s[n * G + g] * z[n * G + g]; }
};

// 2:4: the kept codes q in -8..7 at their columns, zeros elsewhere, signed bytes (tdpbssd / tdpbsud); no zero point.
// Two slots at one position (pack_sparse24_int4 never writes them) add up, as in the reference.
struct AmxSp24W {
  static constexpr bool kSigned = true;
  const uint8_t *v, *meta;
  const float* s;
  int64_t K4, KM, G, gs;
  void unpack(int64_t n, int64_t g, uint8_t* u) const {
    std::memset(u, 0, gs);
    const int64_t q0 = g * gs / 4;
    for (int64_t j = q0; j < q0 + gs / 4; ++j) {
      const int nibm = (meta[n * KM + (j >> 1)] >> ((j & 1) * 4)) & 15;
      for (int t = 0; t < 2; ++t) {
        uint8_t& d = u[4 * (j - q0) + ((nibm >> (2 * t)) & 3)];
        d = static_cast<uint8_t>(static_cast<int8_t>(d) + (((v[n * K4 + j] >> (4 * t)) & 15) - 8));
      }
    }
  }
  float scale(int64_t n, int64_t g) const { return s[n * G + g]; }
  float sz(int64_t, int64_t) const { return 0.f; }
};

// Weight rows [n0, n1) (16 at a time; a last partial block reads rows of zeros) against every activation chunk:
// acc[n][lane] for lanes 16 * NC.
template <class T, class W>
ICML25_AMX_TARGET void amx_rows(T& tiles, const AmxAct& xa, const W& wf, float* acc, int64_t n0, int64_t n1) {
  TileConfig cfg;
  tiles.config(cfg);
  const int64_t L = 16 * xa.NC, gs = wf.gs;
  std::vector<uint8_t> ub(16 * gs);  // the block's 16 rows x one group, a byte per column
  alignas(64) int32_t ch[16][16], cl[16][16];
  for (int64_t nb = n0; nb < n1; nb += 16) {
    const int64_t rows = std::min<int64_t>(16, n1 - nb);
    for (int64_t g = 0; g < xa.GF; ++g) {
      for (int64_t r = 0; r < 16; ++r) {
        if (r < rows) wf.unpack(nb + r, g, ub.data() + r * gs);
        else std::memset(ub.data() + r * gs, 0, gs);
      }
      for (int64_t c = 0; c < xa.NC; ++c) {
        tiles.template zero<0>();
        tiles.template zero<1>();
        for (int64_t k = 0; k < gs; k += 64) {
          const int64_t boff = ((c * (xa.KF / 4) + (g * gs + k) / 4) * 16) * 4;
          tiles.template load<2>(ub.data() + k, gs);
          tiles.template load<3>(xa.hb.data() + boff, 64);
          tiles.template load<4>(xa.lb.data() + boff, 64);
          if constexpr (W::kSigned) {
            tiles.template dpbssd<0, 2, 3>();  // w . h (signed high bytes)
            tiles.template dpbsud<1, 2, 4>();  // w . l (unsigned low bytes)
          } else {
            tiles.template dpbusd<0, 2, 3>();
            tiles.template dpbuud<1, 2, 4>();
          }
        }
        tiles.template store<0>(ch, 64);
        tiles.template store<1>(cl, 64);
        for (int64_t r = 0; r < rows; ++r) {
          const float sg = wf.scale(nb + r, g), szg = wf.sz(nb + r, g);
          float* ar = acc + (nb + r) * L + 16 * c;
          const __m512i t = _mm512_add_epi32(_mm512_slli_epi32(_mm512_load_si512(ch[r]), 8), _mm512_load_si512(cl[r]));
          const __m512 f = _mm512_fmadd_ps(_mm512_cvtepi32_ps(t),
                                           _mm512_mul_ps(_mm512_set1_ps(sg), _mm512_loadu_ps(xa.asc.data() + g * L + 16 * c)),
                                           _mm512_loadu_ps(ar));
          _mm512_storeu_ps(ar, _mm512_fnmadd_ps(_mm512_set1_ps(szg), _mm512_loadu_ps(xa.asum.data() + g * L + 16 * c), f));
        }
      }
    }
  }
  tiles.release();
}

// y[0 .. M, :] += x W^T over the whole groups (gs % 64 == 0, gs <= 4096) through the AMX tiles, batches in chunks of
// up to 32 rows; the caller adds the columns of a last partial group.
template <class W>
inline void amx_linear(const float* x, const W& wf, float* y, int64_t M, int64_t N, int64_t K) {
  const bool emu = amx_emulated();
  for (int64_t m0 = 0; m0 < M; m0 += 32) {
    const int64_t mc = std::min<int64_t>(32, M - m0);
    const AmxAct xa = amx_act(x, m0, mc, K, wf.gs);
    const int64_t L = 16 * xa.NC;
    std::vector<float> acc(N * L, 0.f);
    at::parallel_for(0, ceil_div(N, 16), 1, [&](int64_t b0, int64_t b1) {
      const int64_t n0 = 16 * b0, n1 = std::min(N, 16 * b1);
      if (emu) {
        auto t = std::make_unique<TileEmu>();
        amx_rows(*t, xa, wf, acc.data(), n0, n1);
      } else {
        TileAmx t;
        amx_rows(t, xa, wf, acc.data(), n0, n1);
      }
      for (int64_t m = 0; m < mc; ++m)
        for (int64_t n = n0; n < n1; ++n) y[(m0 + m) * N + n] += acc[n * L + m];
    });
  }
}

inline void int4_linear_amx(const float* x, const uint8_t* w, const float* s, const float* z, float* y, int64_t M,
                            int64_t N, int64_t K, int64_t K2, int64_t G, int64_t gs) {
  amx_linear(x, AmxInt4W{w, s, z, K2, G, gs}, y, M, N, K);
  if (K % gs != 0)  // the columns of a last partial group: scalar fp32, as the k-major path
    at::parallel_for(0, N, 64, [&](int64_t n0, int64_t n1) {
      for (int64_t n = n0; n < n1; ++n)
        for (int64_t k = K / gs * gs; k < K; ++k) {
          const float wk = s[n * G + k / gs] * (static_cast<float>((w[n * K2 + (k >> 1)] >> ((k & 1) * 4)) & 15) - z[n * G + k / gs]);
          for (int64_t m = 0; m < M; ++m) y[m * N + n] += wk * x[m * K + k];
        }
    });
}

inline void sparse24_linear_amx(const float* x, const uint8_t* v, const uint8_t* meta, const float* s, float* y,
                                int64_t M, int64_t N, int64_t K, int64_t K4, int64_t KM, int64_t G, int64_t gs) {
  amx_linear(x, AmxSp24W{v, meta, s, K4, KM, G, gs}, y, M, N, K);
  const int64_t GF = K / gs;
  if (GF < G)  // the slots of a last partial group: scalar fp32, as the k-major path
    at::parallel_for(0, N, 64, [&](int64_t n0, int64_t n1) {
      for (int64_t n = n0; n < n1; ++n)
        sp24_each_slot(v + n * K4, meta + n * KM, s + n * G, K, gs, GF * gs / 4, K4, [&](int64_t col, float w) {
          for (int64_t m = 0; m < M; ++m) y[m * N + n] += w * x[m * K + col];
        });
    });
}

// The real instructions against their emulation on one small product per format (random weights and activations, 20
// weight rows, 2 activation chunks, 4 groups of 64): the integer sums are exact and the epilogue is shared, so the
// accumulators must be bitwise equal. Run once before the first real use; a mismatch leaves AMX off, with a message
// on stderr.
template <class W>
inline bool amx_agrees(const AmxAct& xa, const W& wf, int64_t N) {
  std::vector<float> real(N * 16 * xa.NC, 0.f), emu(N * 16 * xa.NC, 0.f);
  TileAmx t;
  amx_rows(t, xa, wf, real.data(), 0, N);
  auto e = std::make_unique<TileEmu>();
  amx_rows(*e, xa, wf, emu.data(), 0, N);
  return std::memcmp(real.data(), emu.data(), real.size() * sizeof(float)) == 0;
}

inline bool amx_self_test() {
  const int64_t N = 20, M = 20, K = 256, gs = 64, G = K / gs;
  std::vector<float> x(M * K), s(N * G), z(N * G);
  std::vector<uint8_t> w(N * K / 2), meta(N * K / 8);
  uint32_t r = 12345;
  const auto next = [&] { return r = r * 1664525u + 1013904223u; };
  for (auto& v : x) v = static_cast<float>(static_cast<int32_t>(next() >> 8) % 20001 - 10000) / 1000.f;
  for (auto& v : w) v = static_cast<uint8_t>(next() >> 24);
  for (auto& v : meta) v = static_cast<uint8_t>(next() >> 24);
  for (int64_t i = 0; i < N * G; ++i) s[i] = 0.01f + static_cast<float>(next() >> 24) / 256.f, z[i] = static_cast<float>(next() >> 28);
  const AmxAct xa = amx_act(x.data(), 0, M, K, gs);
  // the 2:4 values: the first K / 4 bytes of each int4 row's K / 2
  const bool ok = amx_agrees(xa, AmxInt4W{w.data(), s.data(), z.data(), K / 2, G, gs}, N) &&
                  amx_agrees(xa, AmxSp24W{w.data(), meta.data(), s.data(), K / 2, K / 8, G, gs}, N);
  if (!ok) std::fprintf(stderr, "icml25: the AMX tiles disagree with their emulation; AMX path off\n");
  return ok;
}

// AMX usable: the CPU and the kernel allow it (amx_cpu) and the self-test passed (once per process).
inline bool amx_hardware() {
  static const bool ok = amx_cpu() && amx_self_test();
  return ok;
}

#else

inline bool amx_hardware() { return false; }

#endif  // ICML25_AVX512

// Whether the int4 and 2:4 ops may take the AMX path (the real instructions or, with ICML25_CPU_AMX=emulate, the emulation).
inline bool amx_enabled() {
#ifdef ICML25_AVX512
  const char* m = amx_mode();
  if (m[0] == '0') return false;
  return amx_emulated() || amx_hardware();
#else
  return false;
#endif
}

// Whether a call of batch M takes the AMX path: emulated, every batch (tests); real, where the plan says so, or by
// default from 8 rows.
inline bool amx_taken(PlanOp op, int64_t N, int64_t K, int64_t gs, int64_t M) {
  if (!amx_enabled() || gs % 64 != 0 || gs > 4096 || K < gs) return false;
  if (amx_emulated()) return true;
  const Plan p = find_plan(op, N, K, gs, M);
  return p.path == PlanPath::Amx || (p.path == PlanPath::Default && M >= 8);
}



}  // namespace icml25
