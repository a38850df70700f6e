"""The figures of the shared LM: the training loss curve (rule lm_loss_figure, tiny scale, from the history in
training.json) and the perplexity of the LM next to the n-gram baselines (rule lm_perplexity_figure, from
metrics.json)."""

from __future__ import annotations

from pathlib import Path

from methods.common.io import read_json
from methods.common.plotting import new_figure, save_figure


def plot_loss_curve(history: dict, path: str | Path, bigram_val_loss: float | None = None) -> None:
    fig, ax = new_figure()
    ax.plot(history["step"], history["train_loss"], lw=0.8, alpha=0.7, label="train (batch)")
    ax.plot(history["eval_step"], history["val_loss"], "o-", label="validation")
    if bigram_val_loss is not None:
        ax.axhline(bigram_val_loss, ls="--", color="gray", label="bigram baseline (validation)")
    ax.set_xlabel("step")
    ax.set_ylabel("next-token cross-entropy (nats)")
    ax.legend()
    save_figure(fig, path)


def plot_perplexity_bars(metrics: dict, path) -> None:
    """Unigram, bigram and LM perplexity on the validation and test windows (log scale)."""
    fig, ax = new_figure(width=5.0, height=3.2)
    models = [("unigram", "_unigram_ppl"), ("bigram", "_bigram_ppl"), ("LM", "_ppl")]
    for i, split in enumerate(("validation", "test")):
        vals = [metrics[f"{split}{suffix}"] for _, suffix in models]
        bars = ax.bar([j + 0.4 * i for j in range(3)], vals, width=0.38, label=split)
        ax.bar_label(bars, fmt="%.1f", fontsize=7)
    ax.set_xticks([j + 0.2 for j in range(3)], [m for m, _ in models])
    ax.set_yscale("log")
    ax.set_ylabel(f"perplexity (windows of {metrics['seq_len']} tokens)")
    ax.legend()
    save_figure(fig, path)


def draw_perplexity(metrics_json, out_png) -> None:
    """The lm_perplexity_figure step: perplexity bars of the LM and the n-gram baselines."""
    plot_perplexity_bars(read_json(metrics_json), out_png)


def draw_loss_curve(training_json, out_png) -> None:
    """The lm_loss_figure step (tiny scale: the model trained here): the training loss curve."""
    history = read_json(training_json).get("history")
    if history is None:
        raise ValueError(f"{training_json}: no training history (a pretrained model has no loss curve to draw)")
    plot_loss_curve(history, out_png)
