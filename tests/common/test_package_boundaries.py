"""No paper package imports another paper package: shared pieces live in methods.common (or the
kernels package), so that a paper can be read, tested and removed on its own. Also the shared LM
helpers' edge cases."""

import ast
from pathlib import Path

import numpy as np
import pytest

from methods.common.lm import corpus_sentences, spearman

SRC = Path(__file__).resolve().parents[2] / "src" / "methods"
SHARED = {"common", "kernels"}  # libraries every paper may use; every other package is a paper slug


def paper_slugs(src: Path = SRC) -> list[str]:
    return sorted(p.name for p in src.iterdir() if (p / "__init__.py").exists() and p.name not in SHARED)


def imported_modules(path: Path) -> set[str]:
    """Absolute module names imported by a file (relative imports stay inside the package)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)  # `from methods import slim` is caught below through its names
            if node.module == "methods":
                names.update(f"methods.{a.name}" for a in node.names)
    return names


def cross_imports(slug: str, src: Path = SRC) -> list[str]:
    """'file: module' for every import of methods.<other slug> inside src/methods/<slug>."""
    others = set(paper_slugs(src)) - {slug}
    bad = []
    for f in sorted((src / slug).rglob("*.py")):
        for mod in imported_modules(f):
            parts = mod.split(".")
            if parts[0] == "methods" and (len(parts) > 1 and parts[1] in others):
                bad.append(f"{f.relative_to(src)}: {mod}")
    return bad


def test_the_slug_list_is_not_empty():
    assert {"nestquant", "slim", "alspec"} <= set(paper_slugs())


@pytest.mark.parametrize("slug", paper_slugs())
def test_no_paper_package_imports_another(slug):
    bad = cross_imports(slug)
    assert not bad, (
        f"src/methods/{slug} imports another paper's package (move the shared code to src/methods/common/): {bad}"
    )


def test_the_checker_catches_a_cross_import(tmp_path):
    pkg = tmp_path / "methods"
    for name in ("common", "a", "b"):
        (pkg / name).mkdir(parents=True)
        (pkg / name / "__init__.py").write_text("")
    (pkg / "a" / "x.py").write_text("def f():\n    from methods.b.y import g\n    import methods.common.io\n")
    (pkg / "b" / "y.py").write_text("from methods.common import io\nfrom . import z\nfrom methods import a\n")
    assert cross_imports("a", pkg) == ["a/x.py: methods.b.y"]
    assert cross_imports("b", pkg) == ["b/y.py: methods.a"]


def test_corpus_sentences_error_names_the_key(tmp_path):
    f = tmp_path / "t.txt"
    f.write_text("One two three four five six seven. Short one. " * 3)
    got = corpus_sentences(f, 2, seed=0)
    assert all(s == "One two three four five six seven." for s in got)
    with pytest.raises(ValueError, match="lower nestquant.minilm.n_eval"):
        corpus_sentences(f, 4, seed=0, key="nestquant.minilm.n_eval")


def test_spearman_of_a_constant_vector_is_undefined_not_nan():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning from 0/0
        assert spearman([0.3, 0.3, 0.3], [1, 2, 3]) is None
        assert spearman([1, 2, 3], [5, 5, 5]) is None
    assert spearman(np.arange(5), np.arange(5) ** 3) == pytest.approx(1.0)
