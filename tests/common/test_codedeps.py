"""Method code as job inputs: the import closure of a script, and every script rule declares it."""

import re
from pathlib import Path

from methods.common.codedeps import code_closure

ROOT = Path(__file__).resolve().parents[2]


def _write(root: Path, rel: str, text: str = "") -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def test_closure_follows_absolute_relative_lazy_and_submodule_imports(tmp_path):
    src = tmp_path / "src"
    _write(src, "methods/__init__.py")
    _write(src, "methods/a/__init__.py")
    _write(src, "methods/a/pipeline.py", "from .model import f\nfrom methods.common import io\n")
    _write(src, "methods/a/model.py", "import numpy\n\ndef f():\n    from ..b.lazy import g\n    return g()\n")
    _write(src, "methods/a/unused.py", "x = 1\n")
    _write(src, "methods/b/__init__.py")
    _write(src, "methods/b/lazy.py", "import methods.b.deep as d\n")
    _write(src, "methods/b/deep.py")
    _write(src, "methods/common/__init__.py")
    _write(src, "methods/common/io.py")
    _write(src, "methods/common/other.py")
    script = _write(tmp_path, "workflow/scripts/a/step.py", "from methods.a.pipeline import run\n")
    got = {Path(p).relative_to(src).as_posix() for p in code_closure([script], src=src)}
    assert got == {
        "methods/__init__.py",
        "methods/a/__init__.py",
        "methods/a/pipeline.py",
        "methods/a/model.py",
        "methods/b/__init__.py",
        "methods/b/lazy.py",
        "methods/b/deep.py",
        "methods/common/__init__.py",
        "methods/common/io.py",
    }


def test_every_script_rule_depends_on_its_scripts_code():
    """New rules must declare `code=script_code("<the script>")`, or method edits would not rerun them."""
    rule_files = sorted((ROOT / "workflow" / "rules").rglob("*.smk"))
    checked = 0
    for f in rule_files:
        blocks = re.split(r"\n(?=\s*(?:rule|checkpoint|use rule) )", f.read_text())
        for block in blocks:
            m = re.search(r'script:\s*\n\s*"(?:\.\./)+scripts/([^"]+)"', block)
            if not m:
                continue
            name = block.strip().split(":")[0]
            assert f'code=script_code("{m.group(1)}")' in block, f"{f.name}: {name} lacks code=script_code(...)"
            checked += 1
    assert checked > 40
