// Plans of the VNNI int4 / 2:4+int4 products: which path and tiling a call of a given shape and batch takes.
//
// Without a plan (the default), the choice is the one measured on the development host and written in vnni.h:
// int4 k-major from 8 rows (ICML25_KMAJOR_ROWS_INT4), 2:4 from 12 (ICML25_KMAJOR_ROWS_SPARSE24), fixed weight rows
// per tile. Those thresholds were wrong for other CPUs (a Xeon with a 480 MiB LLC lost to torch's int4 kernel at
// batch 8 only), so methods.kernels.tuning times a few candidate plans on the real shapes on first use and sets the
// fastest here (set_cpu_plan); ICML25_CPU_TUNING=off leaves the table empty. A plan entry matches an op, a shape
// (N, K, group size; 0 = any) and a batch range [lo, hi]; the entry set last wins.
//
// path: Default (the rule above), Rows (every row through the register-blocked row tiles), KMajor (every row through
// k-major chunks of up to 32 rows), Amx (the AMX tiles of amx.h, where the CPU has them; by default taken from 8
// rows there). nr: weight rows per tile (0 = the default of that path): int4 rows 2 or 4,
// int4 k-major 4 or 8, 2:4 rows 2 or 4 (the 2:4 k-major pass has no such knob).
#pragma once
#include "common.h"

#include <atomic>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace icml25 {

enum class PlanOp : int { Int4 = 0, Sparse24 = 1 };
enum class PlanPath : int { Default = 0, Rows = 1, KMajor = 2, Amx = 3 };

struct Plan {
  PlanPath path = PlanPath::Default;
  int nr = 0;
};

struct PlanEntry {
  PlanOp op;
  int64_t n, k, gs, lo, hi;
  Plan plan;
};

struct PlanTable {
  std::mutex mu;
  std::vector<PlanEntry> entries;
  std::atomic<bool> empty{true};  // the common untuned case reads no lock
};

inline PlanTable& plan_table() {
  static PlanTable t;
  return t;
}

inline Plan find_plan(PlanOp op, int64_t N, int64_t K, int64_t gs, int64_t M) {
  PlanTable& t = plan_table();
  if (t.empty.load(std::memory_order_acquire)) return {};
  std::lock_guard<std::mutex> g(t.mu);
  for (auto it = t.entries.rbegin(); it != t.entries.rend(); ++it) {
    const PlanEntry& e = *it;
    if (e.op == op && (e.n == 0 || e.n == N) && (e.k == 0 || e.k == K) && (e.gs == 0 || e.gs == gs) && e.lo <= M &&
        M <= e.hi)
      return e.plan;
  }
  return {};
}

inline PlanOp parse_plan_op(const std::string& op) {
  TORCH_CHECK(op == "int4" || op == "sparse24", "set_cpu_plan: op must be \"int4\" or \"sparse24\", got \"", op, "\"");
  return op == "int4" ? PlanOp::Int4 : PlanOp::Sparse24;
}

// Checks and stores one entry (replacing one of the same op, shape and batch range).
inline void set_cpu_plan(const std::string& op_name, int64_t n, int64_t k, int64_t gs, int64_t lo, int64_t hi,
                         const std::string& path_name, int64_t nr) {
  const PlanOp op = parse_plan_op(op_name);
  TORCH_CHECK(path_name == "default" || path_name == "rows" || path_name == "kmajor" || path_name == "amx",
              "set_cpu_plan: path must be \"default\", \"rows\", \"kmajor\" or \"amx\", got \"", path_name, "\"");
  const PlanPath path = path_name == "rows"     ? PlanPath::Rows
                        : path_name == "kmajor" ? PlanPath::KMajor
                        : path_name == "amx"    ? PlanPath::Amx
                                                : PlanPath::Default;
  TORCH_CHECK(n >= 0 && k >= 0 && gs >= 0, "set_cpu_plan: n, k and group_size must be >= 0 (0 = any), got ", n, ", ",
              k, ", ", gs);
  TORCH_CHECK(1 <= lo && lo <= hi, "set_cpu_plan: expected a batch range 1 <= batch_lo <= batch_hi, got [", lo, ", ",
              hi, "]");
  bool ok = nr == 0;
  if (path == PlanPath::Rows) ok = ok || nr == 2 || nr == 4;
  if (path == PlanPath::KMajor && op == PlanOp::Int4) ok = ok || nr == 4 || nr == 8;
  TORCH_CHECK(ok, "set_cpu_plan: nr (weight rows per tile) must be 0 (the default) or, for int4 rows 2 or 4, int4 "
              "kmajor 4 or 8, sparse24 rows 2 or 4 (sparse24 kmajor, amx and default: 0 only); got ", nr, " for ",
              op_name, " ", path_name);
  PlanTable& t = plan_table();
  std::lock_guard<std::mutex> g(t.mu);
  auto& es = t.entries;
  es.erase(std::remove_if(es.begin(), es.end(),
                          [&](const PlanEntry& e) {
                            return e.op == op && e.n == n && e.k == k && e.gs == gs && e.lo == lo && e.hi == hi;
                          }),
           es.end());
  es.push_back({op, n, k, gs, lo, hi, {path, static_cast<int>(nr)}});
  t.empty.store(false, std::memory_order_release);
}

inline void clear_cpu_plans() {
  PlanTable& t = plan_table();
  std::lock_guard<std::mutex> g(t.mu);
  t.entries.clear();
  t.empty.store(true, std::memory_order_release);
}

// The plan a call of this op, shape and batch would take: (path, nr), "default" / 0 where no entry matches.
inline std::tuple<std::string, int64_t> cpu_plan(const std::string& op_name, int64_t n, int64_t k, int64_t gs,
                                                 int64_t m) {
  const Plan p = find_plan(parse_plan_op(op_name), n, k, gs, m);
  const char* names[] = {"default", "rows", "kmajor", "amx"};
  return {names[static_cast<int>(p.path)], p.nr};
}

}  // namespace icml25
