"""The method code a job runs: the `methods.*` files its script imports, transitively.

Snakemake reruns a job when its script changes, but the method lives in `src/methods/`, which the
script only imports. The Snakefile therefore makes every `script:` rule depend on the files this
module finds (and `methods.common.dvc_stages` gives each DVC stage the same files), so an edit to a
method file reruns exactly the jobs whose scripts import it, directly or through other modules, and
`dvc status` names the same stages.

Imports are read statically (`ast`), including imports inside functions; importing `methods.a.b`
also runs `methods/__init__.py` and `methods/a/__init__.py`, so those count too. Dynamic imports
(`importlib`) are not seen: the project does not use them for method code.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

SRC = Path(__file__).resolve().parents[2]  # src/
TOP = "methods"


def module_file(name: str, src: Path = SRC) -> Path | None:
    """The file of module `name` (`methods.a.b`) under `src`, or None when it is not project code."""
    parts = name.split(".")
    if parts[0] != TOP:
        return None
    base = src.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _package_of(path: Path, src: Path) -> list[str]:
    """Dotted package of a module file: src/methods/a/b.py -> ["methods", "a"]."""
    rel = path.resolve().relative_to(src.resolve())
    parts = list(rel.parts[:-1])
    return parts


def imported_modules(path: Path, src: Path = SRC) -> frozenset[str]:
    """Dotted names of the project modules that `path` imports (absolute or relative imports)."""
    return _imported_modules(Path(path).resolve(), Path(src).resolve(), Path(path).stat().st_mtime_ns)


@functools.lru_cache(maxsize=None)
def _imported_modules(path: Path, src: Path, mtime_ns: int) -> frozenset[str]:
    try:
        tree = ast.parse(path.read_text(), filename=str(path))
    except SyntaxError as e:
        raise ValueError(
            f"{path}: cannot be parsed to find its imports ({e.msg}, line {e.lineno}); fix the syntax"
        ) from e
    inside_src = path.is_relative_to(src)
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if not inside_src:
                    continue
                package = _package_of(path, src)
                package = package[: len(package) - (node.level - 1)]
                base = ".".join(package + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            names.add(base)
            # `from methods.a import b` imports the submodule b when there is one
            names.update(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
    return frozenset(n for n in names if n.split(".")[0] == TOP)


def _with_parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def code_closure(scripts, src: Path = SRC) -> list[str]:
    """Sorted paths of every project file that running `scripts` imports, transitively."""
    seen: dict[str, Path] = {}
    todo = []
    for script in scripts:
        todo.extend(imported_modules(Path(script), src))
    while todo:
        for name in _with_parents(todo.pop()):
            if name in seen:
                continue
            f = module_file(name, src)
            if f is None:
                continue
            seen[name] = f
            todo.extend(imported_modules(f, src))
    return sorted(str(p) for p in set(seen.values()))
