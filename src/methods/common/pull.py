"""`make pull`: fetch shared results with DVC, but only those made with this checkout's config and code.

dvc.lock records, for every stage, the config section (DVC `params`) and the hash of every code
file that made its outputs (full/dvc.lock for the paper-scale stages of full/dvc.yaml, addressed by their
name `<paper>_full` all the same). Before pulling, each stage is compared with this checkout (`dvc status`):
a stage whose params, code or command changed is not pulled (nor is any stage downstream of it), and
the refusal names the changed config keys (`human_data.world.q_llm: 0.8 -> 0.7`); Snakemake recomputes it.

After the pull every restored file is hashed again and compared with dvc.lock, whatever the remote's
`verify` setting: a file that differs (an object altered on the remote) is removed, named with the
remote it came from, and nothing is marked current. Then every job of the pulled stages is recorded
for Snakemake as if it had run (`snakemake --touch --forceall`: its params, code, input checksums and
software environment), so a later config or code change reruns exactly the affected jobs and a mere
touch of a file reruns nothing. Finally `dvc status` must call every pulled stage current.
What was refused, and why, is printed; the exit status is 1 when anything was refused.

dvc.lock arrives with other people's commits, so nothing in it is trusted to name a path: before DVC runs,
every out and dep path of every stage must be relative, free of `..` and resolve (symlinks followed) inside
the checkout, else the pull stops naming the stage and the path; and the only files a pull ever removes are
files inside the outs that dvc.yaml (not the lock) declares for the stage it restores.

Pulled outputs that stand for something built on the producer's machine are not taken for it: when the
shared `kernels` stage is pulled, the compiled extension is built here (`python -m methods.kernels.build`,
cached in csrc/build/), since its build stamp names a library on the producer's disk; the pull fails if
that build fails. Shared stages (workflow/rules/shared/) are recorded for Snakemake like papers.

  python -m methods.common.pull [--remote NAME] [STAGE ...]     (make pull [REMOTE=...] [TARGETS=...])
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[3]
FULL_OVERLAY = "config/full.yaml"  # paper-scale stages (`<name>_full`) run with this overlay
FULL_PIPELINE = "full/dvc.yaml"  # ... and live in this dvc.yaml (dvc_stages.FULL_PIPELINE), their lock beside it


def _bin(name: str) -> str:
    return str(Path(sys.executable).parent / name)


def _run(cmd: list[str], root: Path, capture: bool = False) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = subprocess.run(cmd, cwd=root, env=env, text=True, capture_output=capture)
    if proc.returncode != 0:
        detail = f"\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}" if capture else ""
        raise SystemExit(f"`{' '.join(cmd)}` failed (exit {proc.returncode}){detail}")
    return proc


def _pipelines(root: Path) -> list[str]:
    """The dvc.yaml files of the checkout: the tiny stages', and the paper-scale stages' where it exists."""
    return ["dvc.yaml"] + ([FULL_PIPELINE] if (root / FULL_PIPELINE).exists() else [])


def dvc_target(root: Path, stage: str) -> str:
    """How DVC's command line names `stage`: bare in the root dvc.yaml, `full/dvc.yaml:<stage>` in the other."""
    for path in _pipelines(root)[1:]:
        if stage in (yaml.safe_load((root / path).read_text()) or {}).get("stages", {}):
            return f"{path}:{stage}"
    return stage


def _dvc_status(root: Path, stages: list[str]) -> dict:
    """`dvc status --json` of `stages`, keyed by stage name (DVC keys a stage of full/dvc.yaml by its path)."""
    proc = _run([_bin("dvc"), "status", "--json", *[dvc_target(root, s) for s in stages]], root, capture=True)
    return {key.rsplit(":", 1)[-1]: v for key, v in json.loads(proc.stdout or "{}").items()}


def stage_graph(root: Path) -> tuple[dict, dict[str, set[str]]]:
    """The stages of dvc.yaml and full/dvc.yaml and, for each, the stages whose outputs it reads."""
    stages = {}
    for path in _pipelines(root):
        stages.update((yaml.safe_load((root / path).read_text()) or {}).get("stages") or {})
    owner = {out: name for name, st in stages.items() for out in st.get("outs", [])}
    upstream = {
        name: {owner[d] for d in st.get("deps", []) if d in owner and owner[d] != name} for name, st in stages.items()
    }
    return stages, upstream


def mismatches(status: dict, own_outs_of_others: set[str]) -> list[str]:
    """Why a stage's recorded results do not belong to this checkout, from `dvc status --json`.

    Outputs that are merely absent (not pulled yet) are no mismatch; nor are upstream outputs that
    are absent (they are pulled in the same run).
    """
    why = []
    for entry in status:
        if isinstance(entry, str):  # "changed command", "always changed"
            why.append(entry)
            continue
        for path, change in entry.get("changed deps", {}).items():
            if isinstance(change, dict):  # params file: {key: "modified" | "new" | "deleted"}
                why += [f"config {path}:{key} {state} since the results were made" for key, state in change.items()]
            elif not (change == "deleted" and path in own_outs_of_others):
                why.append(f"{path} {change} since the results were made")
        if entry.get("changed command"):
            why.append("its command changed")
    return why


def changed_keys(recorded: Any, current: Any, prefix: str) -> list[str]:
    """Dotted key paths where a config section differs from the one recorded in dvc.lock, with both values."""
    if isinstance(recorded, dict) and isinstance(current, dict):
        out = []
        for key in sorted(set(recorded) | set(current), key=str):
            path = f"{prefix}.{key}"
            if key not in current:
                out.append(f"{path} removed (was {recorded[key]!r})")
            elif key not in recorded:
                out.append(f"{path} added ({current[key]!r})")
            else:
                out += changed_keys(recorded[key], current[key], path)
        return out
    return [] if recorded == current else [f"{prefix}: {recorded!r} -> {current!r}"]


def config_changes(root: Path, stage: str, lock: dict) -> list[str]:
    """The config keys of `stage`'s sections that differ between dvc.lock and this checkout's config files
    (config.yaml, and config/full.yaml for a paper-scale stage)."""
    out = []
    for params_file, recorded in (lock.get("stages", {}).get(stage, {}).get("params") or {}).items():
        path = root / params_file
        current = (yaml.safe_load(path.read_text()) or {}) if path.exists() else {}
        prefix = "" if params_file == "config.yaml" else f"{params_file}: "
        for section, value in (recorded or {}).items():
            out += [prefix + c for c in changed_keys(value, current.get(section), section)]
    return out


def escaping_paths(root: Path, lock: dict) -> list[str]:
    """'stage: path (why)' for every out or dep path of dvc.lock that could reach outside the checkout: an
    absolute path, a `..` component, or one whose resolved location (symlinks followed) lies outside `root`."""
    bad = []
    top = root.resolve()
    for stage, record in (lock.get("stages") or {}).items():
        for field in ("outs", "deps"):
            for entry in (record or {}).get(field) or []:
                path = entry.get("path") if isinstance(entry, dict) else entry
                why = None
                if not isinstance(path, str) or not path:
                    why = "not a path"
                elif Path(path).is_absolute() or path.startswith("~"):
                    why = "absolute"
                elif ".." in Path(path).parts:
                    why = "contains '..'"
                elif not (root / path).resolve().is_relative_to(top):
                    why = "resolves outside the checkout through a symlink"
                if why:
                    bad.append(f"{stage}: {field} {path!r} ({why})")
    return bad


def read_lock(root: Path) -> dict:
    """dvc.lock and full/dvc.lock as one lock (their stages merged), refused (SystemExit naming the entries)
    when any path in them could reach outside the checkout (every stage's paths are relative to the root)."""
    paths = [root / Path(p).with_name("dvc.lock") for p in _pipelines(root)]
    present = [p for p in paths if p.exists()]
    if not present:
        raise SystemExit(
            "make pull: nothing to pull: this checkout has no dvc.lock (no results were pushed for it); "
            "check out a commit whose dvc.lock records pushed results, or compute them with `snakemake`"
        )
    merged: dict = {"stages": {}}
    for lock_path in present:
        lock = yaml.safe_load(lock_path.read_text()) or {}
        if not isinstance(lock.get("stages"), dict):
            raise SystemExit(f"make pull: {lock_path} has no `stages` mapping; nothing to pull")
        bad = escaping_paths(root, lock)
        if bad:
            raise SystemExit(
                f"make pull: {lock_path} names paths outside the checkout, which a pull must never touch: "
                + "; ".join(bad)
                + f". Nothing was pulled; fix or revert it (`git log -p {lock_path.relative_to(root)}` shows who "
                "changed it)."
            )
        merged["stages"].update(lock["stages"])
    if not merged["stages"]:
        raise SystemExit(
            f"make pull: nothing to pull: {', '.join(str(p.relative_to(root)) for p in present)} records no "
            "stage (no results were pushed for this commit); compute them with `snakemake`"
        )
    return merged


def plan(root: Path, targets: list[str]) -> tuple[list[str], dict[str, list[str]]]:
    """(stages to pull, {refused stage: reasons}) for the targets (all locked stages when empty)."""
    stages, upstream = stage_graph(root)
    lock = read_lock(root)
    locked = set(lock["stages"])
    unknown = [t for t in targets if t not in stages]
    if unknown:
        raise SystemExit(f"make pull: unknown stage(s) {unknown} in TARGETS; dvc.yaml has {sorted(stages)}")
    wanted: list[str] = []

    def add(name):
        for up in sorted(upstream[name]):
            add(up)
        if name not in wanted:
            wanted.append(name)

    for t in targets or sorted(locked):
        add(t)
    refused: dict[str, list[str]] = {}
    missing = [s for s in wanted if s not in locked]
    for s in missing:
        refused[s] = ["dvc.lock has no record of it: nobody pushed its results for this commit"]
    outs_of_others = {o for st in stages.values() for o in st.get("outs", [])}
    check = [s for s in wanted if s in locked]
    if check:
        status = _dvc_status(root, check)
        for s in check:
            why = mismatches(status.get(s, []), outs_of_others)
            if why:
                keys = config_changes(root, s, lock)
                refused[s] = (
                    [w for w in why if not w.startswith("config config.yaml:")] + [f"config key {k}" for k in keys]
                    if keys
                    else why
                )
    for s in wanted:  # downstream of a refused stage: its inputs will be recomputed, so must it
        bad = sorted(u for u in upstream[s] if u in refused)
        if bad and s not in refused:
            refused[s] = [f"it reads the outputs of {', '.join(bad)}, which will be recomputed"]
    return [s for s in wanted if s not in refused], refused


def _rules_of(path: Path) -> list[str]:
    from .dvc_stages import rules_in

    return rules_in(path)


def md5_of(path: Path) -> str:
    h = hashlib.md5()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _cache_object(cache_dir: Path, md5: str) -> Path:
    return cache_dir / "files" / "md5" / md5[:2] / md5[2:]


def unverified_files(root: Path, stages: list[str], cache_dir: Path) -> list[tuple[Path, str, str]]:
    """(file, recorded md5, actual md5) of every file of the pulled stages that does not match dvc.lock;
    a directory's manifest must hash to its recorded name and list exactly the files restored."""
    lock = read_lock(root)["stages"]
    bad = []
    for stage in stages:
        for out in lock.get(stage, {}).get("outs", []):
            path, md5 = root / out["path"], out["md5"]
            if not md5.endswith(".dir"):
                actual = md5_of(path) if path.is_file() else "missing"
                if actual != md5:
                    bad.append((path, md5, actual))
                continue
            manifest = _cache_object(cache_dir, md5)
            actual = md5_of(manifest) if manifest.is_file() else "missing"
            if actual != md5[:-4]:
                bad.append((manifest, md5[:-4], actual))
                continue
            for entry in json.loads(manifest.read_text()):
                f = path / entry["relpath"]
                actual = md5_of(f) if f.is_file() else "missing"
                if actual != entry["md5"]:
                    bad.append((f, entry["md5"], actual))
    return bad


def removable(root: Path, path: Path, stages: list[str], cache_dir: Path) -> bool:
    """Whether the pull may delete `path`: a file inside an out that dvc.yaml declares for one of the restored
    `stages`, or an object of the local DVC cache. Paths are compared after resolving symlinks."""
    declared = stage_graph(root)[0]
    target = path.resolve()
    top = root.resolve()
    outs = [(root / o).resolve() for s in stages for o in declared.get(s, {}).get("outs", [])]
    inside_out = any(target == o or target.is_relative_to(o) for o in outs if o.is_relative_to(top))
    return inside_out or target.is_relative_to(cache_dir.resolve())


def _dvc_value(root: Path, *args: str) -> str:
    return _run([_bin("dvc"), *args], root, capture=True).stdout.strip()


def remote_description(root: Path, remote: str) -> str:
    name = remote or _dvc_value(root, "remote", "default")
    try:
        url = _dvc_value(root, "config", f"remote.{name}.url")
    except SystemExit:
        url = "?"
    return f"remote '{name}' ({url})"


def _run_status(cmd: list[str], root: Path) -> subprocess.CompletedProcess:
    """`cmd` with its output captured, whatever its exit status (the caller explains a failure)."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(cmd, cwd=root, env=env, text=True, capture_output=True)


def _pull_failed(root: Path, remote: str, pull: list[str], proc: subprocess.CompletedProcess) -> int:
    """Explain a failed `dvc pull`: every file of the pulled stages that is not as dvc.lock records it, with
    its md5 and the remote it should have come from (a remote with `verify = true` refuses an altered object
    and DVC then only says that the checkout failed)."""
    sys.stderr.write(proc.stdout[-2000:] + proc.stderr[-2000:])
    try:
        cache_dir = Path(_dvc_value(root, "cache", "dir"))
        cache = cache_dir if cache_dir.is_absolute() else root / cache_dir
        bad = unverified_files(root, pull, cache)
    except (SystemExit, OSError, ValueError):
        bad = []
    where = remote_description(root, remote)
    for path, expected, actual in bad:
        shown = path.relative_to(root) if path.is_relative_to(root) else path
        state = "was not restored" if actual == "missing" else f"does not match (got md5 {actual})"
        print(
            f"make pull: {shown} {state}: its object md5 {expected} on {where} is missing, altered or "
            f"corrupted (a remote with `verify = true` refuses an object whose hash differs).",
            file=sys.stderr,
        )
    print(
        f"make pull: `dvc pull` failed (exit {proc.returncode}); nothing was marked current. Fix: ask whoever "
        f"pushed these results to push them again (`dvc push`), or recompute them with `snakemake {' '.join(pull)}`.",
        file=sys.stderr,
    )
    return 1


def build_kernels_here(root: Path) -> str | None:
    """Build the compiled extension in this checkout (the pulled stamp names the producer's library); None on
    success, else why not."""
    proc = _run_status([sys.executable, "-m", "methods.kernels.build"], root)
    if proc.returncode == 0:
        return None
    return (proc.stdout[-1500:] + proc.stderr[-1500:]).strip() or f"exit {proc.returncode}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--remote", "-r", default="", help="DVC remote (default: the configured default)")
    ap.add_argument("--root", type=Path, default=Path.cwd())
    ap.add_argument("stages", nargs="*", help="dvc.yaml stages (papers, shared substrates, report); all when empty")
    args = ap.parse_args(argv)
    root = args.root
    pull, refused = plan(root, args.stages)
    for s, why in refused.items():
        print(f"make pull: not pulling {s}: " + "; ".join(why) + f". `snakemake {s}` recomputes it.", file=sys.stderr)
    if not pull:
        return 1 if refused else 0
    targets = [dvc_target(root, s) for s in pull]
    fetched = _run_status([_bin("dvc"), "pull", *(["-r", args.remote] if args.remote else []), *targets], root)
    if fetched.returncode != 0:
        return _pull_failed(root, args.remote, pull, fetched)
    cache_dir = Path(_dvc_value(root, "cache", "dir"))
    cache = cache_dir if cache_dir.is_absolute() else root / cache_dir
    bad = unverified_files(root, pull, cache)
    if bad:
        where = remote_description(root, args.remote)
        for path, expected, actual in bad:
            print(
                f"make pull: {path.relative_to(root) if path.is_relative_to(root) else path} does not match "
                f"dvc.lock (md5 {expected}, got {actual}): the object on {where} was altered or corrupted; "
                f"removed, nothing was marked current.",
                file=sys.stderr,
            )
            for victim in (path, _cache_object(cache, expected)):
                if removable(root, victim, pull, cache):
                    victim.unlink(missing_ok=True)
                else:
                    print(f"make pull: {victim} is outside the stages' outs; left as it is", file=sys.stderr)
        print(
            "make pull: fix: ask whoever pushed these results to push them again (`dvc push`), or recompute them "
            f"with `snakemake {' '.join(pull)}`.",
            file=sys.stderr,
        )
        return 1
    # Record every job of the pulled stages for Snakemake as if it had run (params, code, input checksums,
    # software environment): DVC restores files in arbitrary order and mtime, and a bare `--touch` would record
    # only the jobs that mtimes make look outdated, so a later config change would rerun nothing upstream.
    for overlay, suffix in ((None, ""), (FULL_OVERLAY, "_full")):
        scale_stages = [s for s in pull if s.endswith("_full") == bool(suffix)]
        if not scale_stages:
            continue
        papers = [
            s.removesuffix(suffix)
            for s in scale_stages
            if (root / "workflow" / "rules" / f"{s.removesuffix(suffix)}.smk").exists()
        ]
        everything = all(s in pull for s in stage_graph(root)[0] if s.endswith("_full") == bool(suffix))
        cmd = [_bin("snakemake"), "--touch", "--forceall", "--cores", "1"]
        cmd += ["--configfile", overlay] if overlay else []
        if everything:
            _run(cmd, root, capture=True)
        elif papers:
            _run([*cmd, "--", *papers], root, capture=True)
        shared = [
            s.removesuffix(suffix)
            for s in scale_stages
            if (root / "workflow" / "rules" / "shared" / f"{s.removesuffix(suffix)}.smk").exists()
        ]
        if shared and not everything:  # by rule, as their dvc.yaml command runs them: a paper need not reach every job
            defined = set(_run([*cmd, "--list-rules"], root, capture=True).stdout.split())
            # a rule file defines some rules only under some configs (lm_train when the LM is trained here)
            rules = [r for s in shared for r in _rules_of(root / "workflow" / "rules" / "shared" / f"{s}.smk")]
            _run([*cmd, "--until", *[r for r in rules if r in defined]], root, capture=True)
    if any(s.removesuffix("_full") == "kernels" for s in pull):
        why = build_kernels_here(root)
        if why:
            print(
                "make pull: the kernels stage was restored, but the compiled extension could not be built here "
                f"(its build stamp names the library on the machine that pushed it, not one here):\n{why}\n"
                "make pull: fix the build (`python -m methods.kernels.build`) before running jobs that use the ops; "
                "nothing further was checked.",
                file=sys.stderr,
            )
            return 1
    status = _dvc_status(root, pull)
    stale = {s: mismatches(v, set()) or [json.dumps(v)] for s, v in status.items() if v}
    if stale:
        for s, why in stale.items():
            print(
                f"make pull: {s} was restored but `dvc status` does not call it current: {'; '.join(why)}",
                file=sys.stderr,
            )
        return 1
    print(f"make pull: pulled, verified against dvc.lock and marked current: {', '.join(pull)}", file=sys.stderr)
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
