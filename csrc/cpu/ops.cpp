// The one translation unit of the CPU extension: op schemas (namespace icml25) and their CPU kernels.
// The CUDA kernels (csrc/cuda/*.cu) register into the same schemas for the CUDA key when built.
#include "attention.h"
#include "e8.h"
#include "int4.h"
#include "sparse24.h"

TORCH_LIBRARY(icml25, m) {
  m.def("int4_linear(Tensor x, Tensor packed, Tensor scales, Tensor zeros, int group_size, int k) -> Tensor");
  m.def("sparse24_int4_linear(Tensor x, Tensor values, Tensor meta, Tensor scales, int group_size, int k, "
        "Tensor? lora_l=None, Tensor? lora_r=None) -> Tensor");
  m.def("e8_nearest(Tensor x) -> Tensor");
  // no tensor arguments: a catch-all kernel saying whether the next int4 (or 2:4) call takes the VNNI path
  m.def("cpu_vnni_enabled(bool sparse24=False) -> bool", [](bool sparse24) { return icml25::vnni_enabled(sparse24); });
  // whether the int4 and 2:4 ops may take the AMX path (amx.h): hardware=True asks for the real instructions (CPUID and the
  // kernel's grant of the tile state), False for any backend (ICML25_CPU_AMX=emulate counts)
  m.def("cpu_amx_enabled(bool hardware=False) -> bool",
        [](bool hw) { return hw ? (icml25::amx_hardware() && icml25::amx_mode()[0] != '0') : icml25::amx_enabled(); });
  // the plans of the VNNI int4 / 2:4 products (plan.h), set by methods.kernels.tuning
  m.def("set_cpu_plan(str op, int n, int k, int group_size, int batch_lo, int batch_hi, str path, int nr) -> ()",
        [](std::string op, int64_t n, int64_t k, int64_t gs, int64_t lo, int64_t hi, std::string path, int64_t nr) {
          icml25::set_cpu_plan(op, n, k, gs, lo, hi, path, nr);
        });
  m.def("clear_cpu_plans() -> ()", []() { icml25::clear_cpu_plans(); });
  m.def("cpu_plan(str op, int n, int k, int group_size, int batch) -> (str, int)",
        [](std::string op, int64_t n, int64_t k, int64_t gs, int64_t m) { return icml25::cpu_plan(op, n, k, gs, m); });
  m.def("nestquant_encode(Tensor x, int q, Tensor betas) -> (Tensor, Tensor)");
  m.def("nestquant_decode(Tensor codes, Tensor beta_idx, int q, Tensor betas) -> Tensor");
  m.def("nestquant_matmul(Tensor x, Tensor codes, Tensor beta_idx, int q, Tensor betas, int n, int k) -> Tensor");
  m.def("decode_attention(Tensor q, Tensor k, Tensor v, int sink, int window, float scale) -> Tensor");
  m.def("spec_decode_attention(Tensor q, Tensor k, Tensor v, int sink, int window, float lam, float scale) "
        "-> (Tensor, Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(icml25, CPU, m) {
  m.impl("int4_linear", &icml25::int4_linear_cpu);
  m.impl("sparse24_int4_linear", &icml25::sparse24_int4_linear_cpu);
  m.impl("e8_nearest", &icml25::e8_nearest_cpu);
  m.impl("nestquant_encode", &icml25::nestquant_encode_cpu);
  m.impl("nestquant_decode", &icml25::nestquant_decode_cpu);
  m.impl("nestquant_matmul", &icml25::nestquant_matmul_cpu);
  m.impl("decode_attention", &icml25::decode_attention_cpu);
  m.impl("spec_decode_attention", &icml25::spec_decode_attention_cpu);
}

