"""A real pretrained behaviour policy: the 2017 expert of a Bullet locomotion task that ships with pybullet
(`pybullet_envs/examples/enjoy_TF_<Env>_2017may.py`, a two-hidden-layer ReLU MLP whose weights are written into
the file as numpy array literals). The weights are read from the pinned pybullet wheel as text and parsed as
literals (ast.literal_eval): the example file is never imported or run, so a changed file cannot execute code.

Policy: a = W3^T relu(W2^T relu(W1^T o + b1) + b2) + b3, clipped to the action box [-1, 1] (the Bullet robots
clip their torque commands to it, so the clipped action is the one applied)."""

from __future__ import annotations

import ast

import numpy as np

from methods.common.data import read_wheel_member

LAYERS = ("dense1", "dense2", "final")
NAMES = tuple(f"weights_{layer}_{p}" for layer in LAYERS for p in ("w", "b"))


def parse_weights(text: str, source: str) -> dict[str, np.ndarray]:
    """The six weight arrays assigned as `weights_<layer>_<w|b> = np.array(<literal>)` at the top level of the
    example file; anything that is not a numeric literal is refused, naming `source`."""
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        raise ValueError(f"{source}: not Python source ({e}); the pinned wheel is not the expected pybullet") from e
    found = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        name = node.targets[0].id
        if name not in NAMES:
            continue
        call = node.value
        if not (isinstance(call, ast.Call) and len(call.args) == 1 and getattr(call.func, "attr", None) == "array"):
            raise ValueError(f"{source}: {name} is not assigned an np.array(...) of numbers")
        try:
            found[name] = np.asarray(ast.literal_eval(call.args[0]), dtype=np.float64)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError) as e:
            raise ValueError(f"{source}: {name} is not a numeric literal ({type(e).__name__}); refused") from None
    missing = [n for n in NAMES if n not in found]
    if missing:
        raise ValueError(f"{source}: no weight array(s) {missing}; check cfdg.expert.member in config.yaml")
    shapes = [found[f"weights_{layer}_w"].shape for layer in LAYERS]
    if any(len(s) != 2 for s in shapes) or any(a[1] != b[0] for a, b in zip(shapes, shapes[1:])):
        raise ValueError(f"{source}: the weight matrices' shapes {shapes} do not chain into an MLP")
    for layer, s in zip(LAYERS, shapes):
        if found[f"weights_{layer}_b"].shape != (s[1],):
            raise ValueError(
                f"{source}: weights_{layer}_b has shape {found[f'weights_{layer}_b'].shape}, not {(s[1],)}"
            )
    return found


class ExpertPolicy:
    """The pretrained MLP as a behaviour policy `policy(obs, t=None) -> actions` in [-1, 1] (obs (n, obs_dim))."""

    def __init__(self, weights: dict[str, np.ndarray]):
        self.layers = [(weights[f"weights_{layer}_w"], weights[f"weights_{layer}_b"]) for layer in LAYERS]
        self.obs_dim = self.layers[0][0].shape[0]
        self.act_dim = self.layers[-1][0].shape[1]

    def __call__(self, obs: np.ndarray, t=None) -> np.ndarray:
        x = np.asarray(obs, dtype=np.float64)
        if x.shape[-1] != self.obs_dim:
            raise ValueError(f"cfdg expert policy takes {self.obs_dim}-dim observations, got shape {x.shape}")
        for i, (w, b) in enumerate(self.layers):
            x = x @ w + b
            if i < len(self.layers) - 1:
                x = np.maximum(x, 0.0)
        return np.clip(x, -1.0, 1.0)


def load_expert(wheel: str, member: str) -> ExpertPolicy:
    """The expert of `member` inside the pinned pybullet wheel (checked by verify_pins before this is called)."""
    raw = read_wheel_member(wheel, member)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{wheel}: {member} is not text; the wheel is not the pinned pybullet's") from None
    return ExpertPolicy(parse_weights(text, f"{wheel}: {member}"))
