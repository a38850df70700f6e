"""What each step of the ALSpec DAG does (workflow/rules/alspec.smk); one function per script."""
from __future__ import annotations

import dataclasses
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from methods.common.claims import evaluate_claims, load_declaration, write_claims
from methods.common.io import log, read_json, set_seed, write_json

from . import costmodel, figures
from .engine import SpecConfig, SpecDecoder
from .evaluate import decode_modes, lm_batch, mode_specs, task_metrics
from .tasks import TASKS, ModelConfig, TaskConfig, TrainConfig, make_batch, teacher_forced_accuracy, train_task_model
from .workers import time_two_workers, two_worker_decode

DECLARATION = Path(__file__).with_name("claims.yaml")


def _task_config(tasks: dict, sink: int, window: int) -> TaskConfig:
    return TaskConfig.from_dict({**tasks, "sink": sink, "window": window})


def _device() -> str:
    """The GPU where torch has one (full scale), else the CPU; the decode code is the same."""
    return "cuda" if torch.cuda.is_available() else "cpu"


def _load_llama(path, device: str = "cpu"):
    from transformers import LlamaForCausalLM

    if not (Path(path) / "config.json").exists():
        raise FileNotFoundError(f"{path}: no config.json; is this the directory written by alspec_train_task_model?")
    return LlamaForCausalLM.from_pretrained(str(path), dtype=torch.float32).to(device).eval()


def train_model(tasks: dict, model: dict, train: dict, sink: int, window: int, seed: int, out_dir, info_path,
                threads: int = 1, eval_examples: int = 128) -> dict:
    """Train the small Llama on the mixed synthetic tasks; save_pretrained + training record."""
    torch.set_num_threads(threads)
    set_seed(seed)
    cfg = _task_config(tasks, sink, window)
    net, info = train_task_model(cfg, ModelConfig.from_dict(model), TrainConfig.from_dict(train), seed, _device())
    info["full_forward_accuracy"] = {t: teacher_forced_accuracy(net, make_batch(t, cfg, eval_examples, 10**6 + i))
                                     for i, t in enumerate(TASKS)}
    log(f"accuracy of the full forward pass: {info['full_forward_accuracy']}")
    net.save_pretrained(out_dir)
    info.update(tasks=dataclasses.asdict(cfg), model=model, train=train, seed=seed)
    write_json(info_path, info)
    return info


def evaluate_task(model_dir, task: str, tasks: dict, sink: int, window: int, lams, granularity: str,
                  n_examples: int, batch_size: int, seed: int, metrics_path, threads: int = 1) -> dict:
    """Exact / static / ALSpec on held-out examples of one synthetic task."""
    torch.set_num_threads(threads)
    cfg = _task_config(tasks, sink, window)
    batch = make_batch(task, cfg, n_examples, seed=2**20 + seed * 31 + TASKS.index(task))
    t0 = time.time()
    decoded = decode_modes(_load_llama(model_dir, _device()), batch, mode_specs(lams, sink, window, granularity), batch_size)
    rows = task_metrics(batch, decoded, "accuracy")
    for name, m in rows.items():
        log(f"{task} {name}: accuracy {m['accuracy']:.3f} hit {m['hit_rate']:.3f} agree {m['agreement_generation']:.3f}")
    doc = {"task": task, "kind": "accuracy", "context": cfg.seq_len, "sink": sink, "window": window,
           "decode_start": batch.decode_start, "modes": rows, "seconds": time.time() - t0}
    write_json(metrics_path, doc)
    return doc


def evaluate_lm(model_dir, tokens, sink: int, window: int, lams, granularity: str, n_windows: int,
                context: int, decode: int, batch_size: int, metrics_path, threads: int = 1) -> dict:
    """Exact / static / ALSpec on continuations of the shared LM's test split (perplexity, agreement)."""
    from methods.common.lm import load_causal_lm, load_token_splits

    torch.set_num_threads(threads)
    model, _ = load_causal_lm(model_dir, device=_device())
    batch = lm_batch(load_token_splits(tokens)["test"], n_windows, context, decode)
    t0 = time.time()
    decoded = decode_modes(model, batch, mode_specs(lams, sink, window, granularity), batch_size)
    rows = task_metrics(batch, decoded, "perplexity")
    for name, m in rows.items():
        log(f"lm {name}: ppl {m['perplexity']:.3f} hit {m['hit_rate']:.3f} agree {m['agreement_generation']:.3f}")
    doc = {"task": "lm", "kind": "perplexity", "context": context, "sink": sink, "window": window,
           "decode_start": batch.decode_start, "modes": rows, "seconds": time.time() - t0}
    write_json(metrics_path, doc)
    return doc


def _timing_model(dims: dict, vocab: int, max_pos: int, seed: int):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=vocab, hidden_size=dims["hidden"], intermediate_size=dims["intermediate"],
                      num_hidden_layers=dims["layers"], num_attention_heads=dims["heads"],
                      num_key_value_heads=dims["kv_heads"], head_dim=dims["hidden"] // dims["heads"],
                      max_position_embeddings=max_pos)
    return LlamaForCausalLM(cfg).eval()


def measure_timing(task_model_dir, tasks: dict, sink: int, window: int, lam: float, timing: dict, seed: int,
                   out_path) -> dict:
    """Two workers vs one: token equality on the task model, then latency vs hit rate and kernel times."""
    cfg = _task_config(tasks, sink, window)
    spec = SpecConfig("alspec", sink, window, lam)
    # 1. the two-worker runner returns the single-process tokens (real verification, task model)
    checks = {}
    for i, task in enumerate(("recall", "local")):
        b = make_batch(task, cfg, timing["check_examples"], seed=3 * 10**6 + i)
        ids = b.ids[:, : b.decode_start + 1]
        n_gen = cfg.seq_len - b.decode_start - 1
        single = SpecDecoder(_load_llama(task_model_dir)).run(ids, b.decode_start, spec, n_generate=n_gen)
        two = two_worker_decode(task_model_dir, ids, b.decode_start, spec, n_generate=n_gen)
        checks[task] = {"tokens_identical": bool((single["pred"] == two["pred"]).all()),
                        "verdicts_identical": bool((single["hits"] == two["hits"]).all()),
                        "hit_rate": float(single["hits"].float().mean()), "n_tokens": int(single["pred"].numel())}
        log(f"two workers vs one on {task}: {checks[task]}")
    # 2. latency vs hit rate on a larger random model (values do not change the time, verdicts forced)
    dims = timing["model"]
    model = _timing_model(dims, timing["vocab"], timing["context"] + timing["n_steps"] + 1, seed)
    with tempfile.TemporaryDirectory() as tmp:
        model.save_pretrained(tmp)
        t0 = time.time()
        measured = time_two_workers(tmp, timing["context"], timing["n_steps"], timing["repeats"],
                                    timing["hit_rates"], spec, seed)
        log(f"two-worker timing: {time.time() - t0:.1f} s; sequential {measured['sequential_s'] * 1e3:.2f} ms/step")
    for row in measured["by_hit_rate"]:
        log(f"  hit {row['hit_rate']:.2f}: {row['alspec_s'] * 1e3:.2f} ms/step, speedup {row['speedup']:.3f}")
    # 3. kernel times for the cost model (one thread, the same model)
    torch.set_num_threads(1)
    kernels = costmodel.measure_kernels(model, timing["kernel_contexts"], sink, window, timing["kernel_repeats"], seed)
    doc = {"checks": checks, "measured": measured, "kernels": kernels, "model": dims,
           "note": "medians of per-step wall times; the machine is shared, so absolute times are noisy"}
    write_json(out_path, doc)
    return doc


def _at(rows, name, key):
    return rows["modes"][name][key]


def claims_metrics(task_files, lm_file, timing_file, lams, extrapolate_to: int) -> tuple[dict, dict]:
    """The flat {metric: value} dict the claims read, and the cost-model curves for the figure."""
    tasks = {read_json(f)["task"]: read_json(f) for f in task_files}
    lm = read_json(lm_file)
    timing = read_json(timing_file)
    m = {}
    for name, doc in {**tasks, "lm": lm}.items():
        for mode in doc["modes"]:
            key = mode.replace("alspec_", "alspec").replace(".", "")  # alspec_0.10 -> alspec010
            for metric in ("accuracy", "hit_rate", "approx_fraction", "agreement_generation", "perplexity"):
                if metric in doc["modes"][mode]:
                    m[f"{name}_{key}_{metric}"] = doc["modes"][mode][metric]
    strict = [f"alspec{lam:.2f}".replace(".", "") for lam in lams if lam <= 0.10 + 1e-9]
    long_range = [t for t in ("recall", "copy") if t in tasks]
    m["exact_long_range_min_accuracy"] = min(m[f"{t}_exact_accuracy"] for t in long_range)
    m["static_long_range_max_drop"] = max(m[f"{t}_exact_accuracy"] - m[f"{t}_static_accuracy"] for t in long_range)
    m["static_long_range_min_drop"] = min(m[f"{t}_exact_accuracy"] - m[f"{t}_static_accuracy"] for t in long_range)
    m["alspec_strict_max_accuracy_drop"] = max(m[f"{t}_exact_accuracy"] - m[f"{t}_{k}_accuracy"]
                                               for t in tasks for k in strict)
    m["alspec_long_range_min_drop"] = min(m[f"{t}_exact_accuracy"] - m[f"{t}_{k}_accuracy"]
                                          for t in long_range for k in strict)
    m["static_max_accuracy_drop"] = max(m[f"{t}_exact_accuracy"] - m[f"{t}_static_accuracy"] for t in tasks)
    m["static_min_agreement"] = min(m[f"{t}_static_agreement_generation"] for t in [*tasks, "lm"]
                                    if f"{t}_static_agreement_generation" in m)
    m["alspec_strict_max_ppl_ratio"] = max(m[f"lm_{k}_perplexity"] / m["lm_exact_perplexity"] for k in strict)
    m["static_ppl_ratio"] = m["lm_static_perplexity"] / m["lm_exact_perplexity"]
    m["alspec_strict_min_agreement"] = min(m[f"{t}_{k}_agreement_generation"] for t in [*tasks, "lm"] for k in strict)
    m["hit_local_lam010"] = m["local_alspec010_hit_rate"]
    m["hit_recall_lam010"] = m["recall_alspec010_hit_rate"]
    m["max_approx_fraction_strict"] = max(m[f"{t}_{k}_approx_fraction"] for t in [*tasks, "lm"] for k in strict)
    rows = timing["measured"]["by_hit_rate"]
    by_h = {r["hit_rate"]: r["speedup"] for r in rows}
    m["speedup_hit_max"] = by_h[max(by_h)]
    m["speedup_hit_min"] = by_h[min(by_h)]
    m["two_worker_tokens_identical"] = float(all(c["tokens_identical"] for c in timing["checks"].values()))
    k, t_comm = timing["kernels"], timing["measured"]["comm_round_trip_s"]
    seq = float(costmodel.attention_overhead(k, extrapolate_to, 1.0, t_comm, "sequential"))
    spec = float(costmodel.attention_overhead(k, extrapolate_to, 1.0, t_comm, "alspec"))
    m["overhead_reduction_128k"] = seq / spec
    m["overhead_sequential_128k"], m["overhead_alspec_128k"] = seq, spec
    grid = np.geomspace(min(k["contexts"]), extrapolate_to, 64)
    ratio = (costmodel.attention_overhead(k, grid, 1.0, t_comm, "sequential")
             / costmodel.attention_overhead(k, grid, 1.0, t_comm, "alspec"))
    m["overhead_reduction_peak"] = float(ratio.max())
    m["overhead_reduction_peak_context"] = float(grid[ratio.argmax()])
    m["model_speedup_128k"] = float(costmodel.step_latency(k, extrapolate_to, 1.0, t_comm, "sequential")
                                    / costmodel.step_latency(k, extrapolate_to, 1.0, t_comm, "alspec"))
    ctx = timing["measured"]["context"]
    pred = {r["hit_rate"]: float(costmodel.step_latency(k, ctx, r["hit_rate"], t_comm, "sequential")
                                 / costmodel.step_latency(k, ctx, r["hit_rate"], t_comm, "alspec")) for r in rows}
    m["model_speedup_at_measured_context_hit_max"] = pred[max(pred)]
    return m, {"tasks": tasks, "lm": lm, "timing": timing}


def write_figures(task_files, lm_file, timing_file, lams, extrapolate_to: int, quality_png, timing_png) -> None:
    tasks = [read_json(f) for f in task_files] + [read_json(lm_file)]
    figures.plot_quality(tasks, lams, quality_png)
    figures.plot_timing(read_json(timing_file), extrapolate_to, timing_png)


def write_paper_claims(task_files, lm_file, timing_file, lams, extrapolate_to: int, scale: str,
                       claims_path, summary_path) -> dict:
    measured, _ = claims_metrics(task_files, lm_file, timing_file, lams, extrapolate_to)
    write_json(summary_path, measured)
    doc = evaluate_claims(load_declaration(DECLARATION), measured, scale)
    write_claims(claims_path, doc)
    for c in doc["claims"]:
        log(f"{c['id']}: {c['verdict']}")
    return doc
