"""Full scale: a Hugging Face causal LM tuned on a preference dataset with compiled losses.

The paper's feasibility study tunes Qwen-0.5B on UltraFeedback with existing and new losses; this
module is that loop in plain PyTorch (no TRL: each loss is our compiled semantic loss, which TRL's
trainers do not take). The model loads through `methods.common.lm.model.load_causal_lm`
(`from_pretrained`, safetensors only), the data through `datasets.load_dataset`, so the same code
runs on a local jsonl and a tiny random Llama in the tests.

Per pair: s = sum of the response tokens' log-probabilities given the prompt, L = number of response
tokens; the reference log-probabilities are those of the initial model, computed once before training.

Steps: `fetch_lm` is dpa_logic_fetch (on the submit host: the model's files and the preference pairs, so the
GPU jobs need no internet); `lm_experiment` is dpa_logic_lm (one seed group on the job's device).
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import torch

from methods.common.io import atomic_path, log, set_seed, write_json

from .losses import LOSSES, both_false_excluded, check_losses, compiled_loss

# the files of a Hugging Face model repository that from_pretrained reads (weights as safetensors only)
MODEL_FILES = ["*.json", "*.safetensors", "*.txt", "*.model", "*.tiktoken"]


def _text(field) -> str:
    """A response as text: a string, or the last message of a chat list ([{role, content}, ...])."""
    if isinstance(field, str):
        return field
    if isinstance(field, list) and field and isinstance(field[-1], dict) and "content" in field[-1]:
        return field[-1]["content"]
    raise ValueError(
        f"preference dataset: cannot read a response from {type(field).__name__} {str(field)[:80]!r}; "
        "expected a string or a list of chat messages with 'content'"
    )


def load_pairs(path: str, data_files: str | None, split: str, n_pairs: int, seed: int) -> list[dict]:
    """(prompt, chosen, rejected) triples from `datasets.load_dataset`, shuffled, the first n_pairs."""
    from datasets import load_dataset

    kwargs = {"data_files": data_files} if data_files else {}
    ds = load_dataset(path, split=split, **kwargs)
    missing = [c for c in ("prompt", "chosen", "rejected") if c not in ds.column_names]
    if missing:
        raise ValueError(f"dataset {path} ({split}): missing columns {missing}; have {ds.column_names}")
    ds = ds.shuffle(seed=seed).select(range(min(n_pairs, len(ds))))
    return [{"prompt": r["prompt"], "chosen": _text(r["chosen"]), "rejected": _text(r["rejected"])} for r in ds]


def encode_pairs(tokenizer, pairs: list[dict], max_prompt: int, max_response: int) -> list[dict]:
    out = []
    for p in pairs:
        prompt = tokenizer(p["prompt"], add_special_tokens=False)["input_ids"][-max_prompt:]
        enc = {"prompt": prompt}
        for side in ("chosen", "rejected"):
            ids = tokenizer(p[side], add_special_tokens=False)["input_ids"][:max_response]
            if tokenizer.eos_token_id is not None and len(ids) < max_response:
                ids = ids + [tokenizer.eos_token_id]
            if not ids:
                ids = [tokenizer.eos_token_id or 0]
            enc[side] = ids
        out.append(enc)
    return out


def sequence_logps(model, prompts: list[list[int]], responses: list[list[int]], pad_id: int):
    """(sum of response-token log-probs, response length) for each (prompt, response), batched."""
    seqs = [p + r for p, r in zip(prompts, responses)]
    width = max(len(s) for s in seqs)
    device = next(model.parameters()).device
    ids = torch.full((len(seqs), width), pad_id, dtype=torch.long)
    attn = torch.zeros((len(seqs), width), dtype=torch.long)
    resp_mask = torch.zeros((len(seqs), width), dtype=torch.bool)
    for i, (p, r) in enumerate(zip(prompts, responses)):
        ids[i, : len(p) + len(r)] = torch.tensor(p + r)
        attn[i, : len(p) + len(r)] = 1
        resp_mask[i, len(p) : len(p) + len(r)] = True
    ids, attn, resp_mask = ids.to(device), attn.to(device), resp_mask.to(device)
    logits = model(input_ids=ids, attention_mask=attn).logits[:, :-1].float()
    token_logp = torch.log_softmax(logits, dim=-1).gather(-1, ids[:, 1:, None]).squeeze(-1)
    mask = resp_mask[:, 1:]
    return (token_logp * mask).sum(-1).double(), mask.sum(-1).double()


def pair_logps(model, batch: list[dict], pad_id: int) -> dict:
    prompts = [b["prompt"] for b in batch]
    s_w, len_w = sequence_logps(model, prompts, [b["chosen"] for b in batch], pad_id)
    s_l, len_l = sequence_logps(model, prompts, [b["rejected"] for b in batch], pad_id)
    return {"logp_w": s_w, "logp_l": s_l, "len_w": len_w, "len_l": len_l}


@torch.no_grad()
def all_logps(model, data: list[dict], pad_id: int, batch_size: int) -> dict:
    parts = [pair_logps(model, data[i : i + batch_size], pad_id) for i in range(0, len(data), batch_size)]
    return {k: torch.cat([p[k] for p in parts]).cpu() for k in parts[0]}


def train_lm(
    base_model,
    tokenizer,
    train: list[dict],
    test: list[dict],
    loss: str,
    hparams: dict,
    steps: int,
    batch_size: int,
    lr: float,
    seed: int,
) -> dict:
    """Tune a copy of `base_model` with one compiled loss; Delta log pi(y_w) and held-out accuracy."""
    if LOSSES[loss].family == "no_structure":
        raise ValueError(f"lm.losses: {loss!r} has no preference structure")
    set_seed(seed)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (tokenizer.eos_token_id or 0)
    model = copy.deepcopy(base_model).train()
    ref_train = all_logps(base_model, train, pad_id, batch_size)
    ref_test = all_logps(base_model, test, pad_id, batch_size)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    gen = torch.Generator().manual_seed(seed)
    losses = []
    for step in range(steps):
        idx = torch.randperm(len(train), generator=gen)[:batch_size].tolist()
        b = pair_logps(model, [train[i] for i in idx], pad_id)
        b["ref_w"] = ref_train["logp_w"][idx].to(b["logp_w"].device)
        b["ref_l"] = ref_train["logp_l"][idx].to(b["logp_w"].device)
        value = compiled_loss(loss, b, hparams).mean()
        opt.zero_grad()
        value.backward()
        opt.step()
        losses.append(float(value.detach()))
        if step % max(1, steps // 5) == 0:
            log(f"lm {loss} seed {seed} step {step}: loss {losses[-1]:.4f}")
    model.eval()
    fin_train = all_logps(model, train, pad_id, batch_size)
    fin_test = all_logps(model, test, pad_id, batch_size)
    margin = (fin_test["logp_w"] - ref_test["logp_w"]) - (fin_test["logp_l"] - ref_test["logp_l"])
    return {
        "loss_curve": losses,
        "delta_logp_w": float((fin_train["logp_w"] - ref_train["logp_w"]).mean()),
        "delta_logp_l": float((fin_train["logp_l"] - ref_train["logp_l"]).mean()),
        "test_reward_accuracy": float((margin > 0).double().mean()),
        "test_accuracy": float(
            (fin_test["logp_w"] / fin_test["len_w"] > fin_test["logp_l"] / fin_test["len_l"]).double().mean()
        ),
    }


def fetch_lm(model_id: str, dataset: dict, n_pairs: int, out_model: str, out_pairs: str) -> None:
    """Step dpa_logic_fetch: the model (a Hugging Face id through snapshot_download, or a local
    save_pretrained directory, copied) into `out_model`, and the first n_pairs shuffled preference pairs
    (`load_pairs`, seed 0) into the jsonl `out_pairs`."""
    pairs = load_pairs(dataset["path"], dataset.get("data_files"), dataset["split"], n_pairs, seed=0)
    if len(pairs) < n_pairs:
        raise ValueError(
            f"dataset {dataset['path']}: {len(pairs)} pairs, fewer than n_train + n_test = {n_pairs}; "
            "lower dpa_logic.lm.n_train / n_test"
        )
    if Path(model_id).is_dir():
        shutil.copytree(model_id, out_model, dirs_exist_ok=True)
    else:
        from huggingface_hub import snapshot_download

        snapshot_download(model_id, local_dir=out_model, allow_patterns=MODEL_FILES)
    with atomic_path(out_pairs) as tmp:
        tmp.write_text("".join(json.dumps(p) + "\n" for p in pairs))
    log(f"{model_id} -> {out_model}; {len(pairs)} pairs of {dataset['path']} -> {out_pairs}")


def read_pairs(path: str) -> list[dict]:
    """The (prompt, chosen, rejected) pairs `fetch_lm` wrote, in its order."""
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def lm_experiment(
    model_dir: str,
    pairs_jsonl: str,
    n_train: int,
    n_test: int,
    max_prompt: int,
    max_response: int,
    losses: list[str],
    hparams: dict,
    steps: int,
    batch_size: int,
    lr: float,
    seeds: list[int],
    out_json: str,
    device="cpu",
    threads: int = 1,
) -> None:
    """Step dpa_logic_lm: the fetched causal LM tuned with each compiled loss, for each seed of the job's group,
    on `device` (the job's: a GPU at paper scale). The first n_train pairs train, the next n_test test."""
    from methods.common.lm.model import load_causal_lm

    check_losses(losses, "dpa_logic.lm.losses", hparams)
    torch.set_num_threads(threads)
    model, tokenizer = load_causal_lm(model_dir, device=device)
    pairs = read_pairs(pairs_jsonl)
    if len(pairs) < n_train + n_test:
        raise ValueError(
            f"{pairs_jsonl}: {len(pairs)} pairs, fewer than n_train + n_test = {n_train + n_test}; "
            "lower dpa_logic.lm.n_train / n_test"
        )
    enc = encode_pairs(tokenizer, pairs[: n_train + n_test], max_prompt, max_response)
    train, test = enc[:n_train], enc[n_train:]
    out = {"model": model_dir, "pairs": pairs_jsonl, "device": str(device), "runs": {}}
    for name in losses:
        out["runs"][name] = []
        for seed in seeds:
            r = train_lm(model, tokenizer, train, test, name, hparams.get(name, {}), steps, batch_size, lr, seed)
            r["seed"] = seed
            r["excludes_both_false"] = both_false_excluded(name)
            out["runs"][name].append(r)
            log(f"lm {name} seed {seed}: dlogp_w {r['delta_logp_w']:+.3f} acc {r['test_reward_accuracy']:.3f}")
    write_json(out_json, out)
