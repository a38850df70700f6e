"""Configuration dataclasses built from plain dicts (Snakemake params), rejecting unknown keys."""
from __future__ import annotations

import dataclasses


def check_keys(cls, d: dict) -> None:
    """Raise ValueError naming any key of `d` that is not a field of dataclass `cls`."""
    allowed = [f.name for f in dataclasses.fields(cls)]
    for key in d:
        if key not in allowed:
            raise ValueError(f"{cls.__name__}: unknown key {key!r}; allowed keys: {', '.join(allowed)}")
