"""Synthetic long-context tasks for ALSpec and the small Llama trained on them (the alspec_train step,
`train_model`).

Three tasks share one vocabulary; every example starts with its task token (so position 0, an
attention sink, tells the model which task it is doing) and has the same length `seq_len`:

- ``local``: a skip-one Markov chain x_{t+1} = perm[x_{t-1}] with probability 1 - noise (a fixed
  permutation of the symbols), uniform otherwise. The next token depends only on the token two back,
  and distant tokens carry no information about it (unlike a first-order chain, where an induction
  head reading an earlier occurrence of x_t predicts as well): the paper's "simple" local tasks.
- ``recall``: multi-query associative recall. `n_pairs` key-value pairs, then QUERY and `n_queries`
  of the keys again, each followed by its value. Queried pairs lie outside the first `sink` and the
  last `window` positions, so attending to the sink and the window alone cannot answer them.
- ``copy``: filler, SRC, a string of `copy_len` symbols, filler, then SRC again and the string
  copied from far back (induction over a distance of about seq_len / 2).

Each example marks its "decode region" (the tail fed token by token through the KV cache) and the
answer positions inside it, where accuracy is scored.
"""

from __future__ import annotations

import dataclasses
import math
import time

import torch

from methods.common.config import check_keys
from methods.common.io import log, set_seed, write_json

PAD, BOS_LOCAL, BOS_RECALL, BOS_COPY, QUERY, SRC = range(6)
N_SPECIAL = 8
TASKS = ("local", "recall", "copy")
_BOS = {"local": BOS_LOCAL, "recall": BOS_RECALL, "copy": BOS_COPY}


@dataclasses.dataclass(frozen=True)
class TaskConfig:
    seq_len: int = 128  # tokens per example (context + decode region)
    n_symbols: int = 32  # symbols per class (keys, values, filler); vocabulary = 8 + 3 * n_symbols
    n_pairs: int = 16  # recall: key-value pairs, placed after the sink at a random offset
    n_queries: int = 8  # recall: queries (the decode region is 1 + 2 * n_queries tokens)
    copy_len: int = 12  # copy: length of the copied string
    local_decode: int = 16  # local: tokens in the decode region
    noise: float = 0.1  # local: probability of a uniformly random next symbol
    sink: int = 8  # positions the static approximation keeps at the start ...
    window: int = 8  # ... and at the end; recall answers are placed outside both

    @classmethod
    def from_dict(cls, d: dict) -> "TaskConfig":
        check_keys(cls, d)
        return cls(**d)

    @property
    def vocab_size(self) -> int:
        return N_SPECIAL + 3 * self.n_symbols


@dataclasses.dataclass
class Batch:
    ids: torch.Tensor  # (B, T) tokens
    answer: torch.Tensor  # (B, T) bool: position t's token is an answer (predicted at t - 1)
    decode_start: int  # first position fed through the decode path (prefill = ids[:, :decode_start])


def _keys(cfg):
    return torch.arange(N_SPECIAL, N_SPECIAL + cfg.n_symbols)


def _values(cfg):
    return torch.arange(N_SPECIAL + cfg.n_symbols, N_SPECIAL + 2 * cfg.n_symbols)


def _filler(cfg):
    return torch.arange(N_SPECIAL + 2 * cfg.n_symbols, N_SPECIAL + 3 * cfg.n_symbols)


def markov_permutation(cfg: TaskConfig) -> torch.Tensor:
    """The local task's fixed permutation of all 3 * n_symbols symbols (a task constant, seed 0)."""
    g = torch.Generator().manual_seed(0)
    return torch.randperm(3 * cfg.n_symbols, generator=g) + N_SPECIAL


def make_local(cfg: TaskConfig, n: int, g: torch.Generator) -> Batch:
    T = cfg.seq_len
    perm = markov_permutation(cfg)
    ids = torch.empty(n, T, dtype=torch.long)
    ids[:, 0] = BOS_LOCAL
    ids[:, 1:3] = torch.randint(N_SPECIAL, cfg.vocab_size, (n, 2), generator=g)
    for t in range(3, T):
        follow = perm[ids[:, t - 2] - N_SPECIAL]
        rand = torch.randint(N_SPECIAL, cfg.vocab_size, (n,), generator=g)
        ids[:, t] = torch.where(torch.rand(n, generator=g) < cfg.noise, rand, follow)
    answer = torch.zeros(n, T, dtype=torch.bool)
    answer[:, 3:] = True
    return Batch(ids, answer, T - cfg.local_decode)


def make_recall(cfg: TaskConfig, n: int, g: torch.Generator) -> Batch:
    T, P, Q = cfg.seq_len, cfg.n_pairs, cfg.n_queries
    tail = 1 + 2 * Q  # QUERY and the queried pairs
    lead = max(cfg.sink, 1)  # filler before the pairs, so the sink holds no pair
    filler = T - 1 - 2 * P - tail
    if Q > P or P > cfg.n_symbols or filler < lead:
        raise ValueError(
            f"recall task: n_queries {Q} <= n_pairs {P} <= n_symbols {cfg.n_symbols} and "
            f"seq_len {T} >= 1 + sink + 2 * n_pairs + 1 + 2 * n_queries are required"
        )
    keys, values, fill = _keys(cfg), _values(cfg), _filler(cfg)
    ids = torch.empty(n, T, dtype=torch.long)
    ids[:, 0] = BOS_RECALL
    ids[:, 1:-tail] = fill[torch.randint(cfg.n_symbols, (n, T - 1 - tail), generator=g)]
    answer = torch.zeros(n, T, dtype=torch.bool)
    for i in range(n):
        k = keys[torch.randperm(cfg.n_symbols, generator=g)[:P]]
        v = values[torch.randint(cfg.n_symbols, (P,), generator=g)]
        start = 1 + lead + int(torch.randint(filler - lead + 1, (1,), generator=g))  # pairs at a random offset
        ids[i, start : start + 2 * P] = torch.stack([k, v], 1).flatten()
        q = torch.randperm(P, generator=g)[:Q]
        ids[i, T - tail] = QUERY
        ids[i, T - tail + 1 :] = torch.stack([k[q], v[q]], 1).flatten()
    answer[:, T - tail + 2 :: 2] = True
    return Batch(ids, answer, T - tail)  # decode region: QUERY and the query pairs


def make_copy(cfg: TaskConfig, n: int, g: torch.Generator) -> Batch:
    T, m = cfg.seq_len, cfg.copy_len
    filler = T - 3 - 2 * m
    lead = max(cfg.sink, 1)  # the string starts after the sink
    if filler - lead < cfg.window:
        raise ValueError(f"copy task: seq_len {T} too short for copy_len {m} beyond sink and window")
    ids = torch.empty(n, T, dtype=torch.long)
    ids[:, 0] = BOS_COPY
    src = _values(cfg)[torch.randint(cfg.n_symbols, (n, m), generator=g)]
    fill = _filler(cfg)[torch.randint(cfg.n_symbols, (n, filler), generator=g)]
    ids[:, 1 : 1 + lead] = fill[:, :lead]
    ids[:, 1 + lead] = SRC
    ids[:, 2 + lead : 2 + lead + m] = src
    rest = fill[:, lead:]
    ids[:, 2 + lead + m : 2 + lead + m + rest.shape[1]] = rest
    ids[:, T - m - 1] = SRC
    ids[:, T - m :] = src
    answer = torch.zeros(n, T, dtype=torch.bool)
    answer[:, T - m :] = True
    return Batch(ids, answer, T - m - 1)


MAKERS = {"local": make_local, "recall": make_recall, "copy": make_copy}


def make_batch(task: str, cfg: TaskConfig, n: int, seed: int) -> Batch:
    """`n` examples of one task, deterministic in `seed`."""
    if task not in MAKERS:
        raise ValueError(f"unknown task {task!r}; available: {list(MAKERS)}")
    return MAKERS[task](cfg, n, torch.Generator().manual_seed(seed))


# --- the task model ----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ModelConfig:
    hidden: int = 64
    layers: int = 2
    heads: int = 4
    kv_heads: int = 2
    intermediate: int = 128

    @classmethod
    def from_dict(cls, d: dict) -> "ModelConfig":
        check_keys(cls, d)
        return cls(**d)


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    steps: int = 600
    batch_size: int = 32
    lr: float = 3.0e-3
    warmup: int = 50
    weight_decay: float = 0.01

    @classmethod
    def from_dict(cls, d: dict) -> "TrainConfig":
        check_keys(cls, d)
        return cls(**d)


def build_task_model(task_cfg: TaskConfig, model_cfg: ModelConfig):
    """A small randomly initialised transformers LlamaForCausalLM for the synthetic tasks."""
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(
        vocab_size=task_cfg.vocab_size,
        hidden_size=model_cfg.hidden,
        intermediate_size=model_cfg.intermediate,
        num_hidden_layers=model_cfg.layers,
        num_attention_heads=model_cfg.heads,
        num_key_value_heads=model_cfg.kv_heads,
        head_dim=model_cfg.hidden // model_cfg.heads,
        max_position_embeddings=2 * task_cfg.seq_len,
        tie_word_embeddings=False,
        bos_token_id=BOS_LOCAL,
        eos_token_id=PAD,
        pad_token_id=PAD,
    )
    cfg._attn_implementation = "sdpa"
    return LlamaForCausalLM(cfg)


def mixed_batch(cfg: TaskConfig, n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Training batch: each task gets an equal share of the `n` rows; returns (ids, answer mask)."""
    parts = [make_batch(t, cfg, n // len(TASKS) + (i < n % len(TASKS)), seed * 7919 + i) for i, t in enumerate(TASKS)]
    return torch.cat([p.ids for p in parts]), torch.cat([p.answer for p in parts])


def train_task_model(
    task_cfg: TaskConfig, model_cfg: ModelConfig, train_cfg: TrainConfig, seed: int, device: str = "cpu"
):
    """Next-token cross-entropy on the answer positions of mixed batches (AdamW, warmup + cosine)."""
    from tqdm import tqdm

    torch.manual_seed(seed)
    model = build_task_model(task_cfg, model_cfg).to(device)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=train_cfg.lr, weight_decay=train_cfg.weight_decay)

    def lr_at(step):
        if step < train_cfg.warmup:
            return (step + 1) / train_cfg.warmup
        return 0.5 * (1 + math.cos(math.pi * (step - train_cfg.warmup) / max(1, train_cfg.steps - train_cfg.warmup)))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_at)
    history, t0 = [], time.time()
    for step in tqdm(range(train_cfg.steps), desc="train task model", mininterval=5):
        ids, answer = mixed_batch(task_cfg, train_cfg.batch_size, seed * 100003 + step)
        ids, answer = ids.to(device), answer.to(device)
        logits = model(input_ids=ids).logits[:, :-1]
        mask = answer[:, 1:].float()
        nll = torch.nn.functional.cross_entropy(logits.transpose(1, 2), ids[:, 1:], reduction="none")
        loss = ((nll * mask).sum(1) / mask.sum(1)).mean()  # every row (task) weighs the same
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 50 == 0 or step == train_cfg.steps - 1:
            history.append({"step": step, "loss": loss.item()})
            log(f"step {step}: loss {loss.item():.4f} ({time.time() - t0:.1f} s)")
    model.cpu().eval()
    return model, {"history": history, "train_seconds": time.time() - t0}


@torch.no_grad()
def teacher_forced_accuracy(model, batch: Batch) -> float:
    """Accuracy of the full-sequence forward pass at the answer positions (a check of training)."""
    logits = model(input_ids=batch.ids).logits[:, :-1]
    mask = batch.answer[:, 1:]
    return float((logits.argmax(-1)[mask] == batch.ids[:, 1:][mask]).float().mean())


def task_config(tasks: dict, sink: int, window: int) -> TaskConfig:
    """The tasks' configuration (config alspec.tasks) with the speculation's sink and window."""
    return TaskConfig.from_dict({**tasks, "sink": sink, "window": window})


def load_llama(path, device="cpu"):
    """The task model (or any save_pretrained LlamaForCausalLM directory) in fp32 on `device`, in eval mode."""
    from pathlib import Path

    from transformers import LlamaForCausalLM

    if not (Path(path) / "config.json").exists():
        raise FileNotFoundError(f"{path}: no config.json; is this the directory written by alspec_train?")
    return LlamaForCausalLM.from_pretrained(str(path), dtype=torch.float32).to(device).eval()


def train_model(
    tasks: dict,
    model: dict,
    train: dict,
    sink: int,
    window: int,
    seed: int,
    out_dir,
    info_path,
    threads: int = 1,
    eval_examples: int = 128,
    device="cpu",
) -> dict:
    """The alspec_train step: train the small Llama on the mixed synthetic tasks on `device` (the job's GPU at
    paper scale); save_pretrained + training record."""
    torch.set_num_threads(threads)
    set_seed(seed)
    cfg = task_config(tasks, sink, window)
    net, info = train_task_model(cfg, ModelConfig.from_dict(model), TrainConfig.from_dict(train), seed, device)
    info["full_forward_accuracy"] = {
        t: teacher_forced_accuracy(net, make_batch(t, cfg, eval_examples, 10**6 + i)) for i, t in enumerate(TASKS)
    }
    log(f"accuracy of the full forward pass: {info['full_forward_accuracy']}")
    net.save_pretrained(out_dir)
    info.update(tasks=dataclasses.asdict(cfg), model=model, train=train, seed=seed)
    write_json(info_path, info)
    return info
