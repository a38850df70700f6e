"""DVC: dvc.yaml in step with the workflow; push/pull round trips through a local and a real S3 API
(moto's server on 127.0.0.1); corrupted objects detected; after `make pull` Snakemake has nothing to do.

All runs happen in git repositories made in tmp dirs from the working tree (one paper, the fast
outcome_process at tiny scale, reproduced once with `dvc repro`); the main tree is never touched.
"""

import hashlib
import json
import os
import socket
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest
import yaml

from methods.common import dvc_stages

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
PAPER = "outcome_process"
GIT = ["git", "-c", "user.email=test@example.org", "-c", "user.name=test"]


def _env(**extra):
    env = {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
        "AWS_CONFIG_FILE": "/nonexistent",
    }
    env.update(extra)
    return {k: v for k, v in env.items() if v is not None}


S3_CREDS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}


def run(cwd, *cmd, check=True, timeout=300, env=None):
    proc = subprocess.run(
        [str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env or _env()
    )
    if check and proc.returncode != 0:
        pytest.fail(
            f"{' '.join(map(str, cmd))} exited {proc.returncode} in {cwd}:\n{proc.stdout[-3000:]}\n"
            f"{proc.stderr[-3000:]}"
        )
    return proc


def dvc(cwd, *args, **kw):
    return run(cwd, BIN / "dvc", *args, **kw)


def checksums(root: Path, sub: str) -> dict:
    base = root / sub
    return {
        p.relative_to(base).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(base.rglob("*"))
        if p.is_file()
    }


def outs_of(paper):
    return [o for o in yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"][paper]["outs"]]


def all_checksums(root):
    return {o: checksums(root, o) for o in outs_of(PAPER)}


def worktree_repo(dest: Path) -> Path:
    """A git repository holding the working tree's committable files (what this test suite tests)."""
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True, capture_output=True
    ).stdout.split(b"\0")
    for name in filter(None, files):
        src = ROOT / os.fsdecode(name)
        if src.is_file():
            target = dest / os.fsdecode(name)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(src.read_bytes())
    run(dest, "git", "init", "-q")
    run(dest, "git", "add", "-A")
    run(dest, *GIT, "commit", "-qm", "working tree")
    return dest


def use_store(repo: Path, store: Path) -> None:
    """A team's own store as the default remote, as `make remote URL=...` sets it (in .dvc/config.local)."""
    dvc(repo, "remote", "add", "--local", "--default", "--force", "local", store)
    dvc(repo, "remote", "modify", "--local", "local", "verify", "true")


def clone(src: Path, dest: Path, store: Path) -> Path:
    run(src.parent, "git", "clone", "-q", src, dest)
    use_store(dest, store)
    return dest


def make_pull(repo, *extra, env=None, check=True):
    return run(repo, "make", "pull", f"VENV={Path(sys.prefix)}", f"TARGETS={PAPER}", *extra, env=env, check=check)


def nothing_to_do(repo):
    proc = run(repo, sys.executable, "-m", "snakemake", "-n", "--", PAPER)
    return "Nothing to be done" in proc.stdout + proc.stderr


# ---------------------------------------------------------------------------------------------
# dvc.yaml in step with the workflow


def test_dvc_yaml_is_generated_and_current():
    files = dvc_stages.generated_files(ROOT)
    for path, text in files.items():
        assert (ROOT / path).read_text() == text, f"{path} is stale: run `make dvc-yaml`"
    current = files["dvc.yaml"]
    stages = yaml.safe_load(current)["stages"]
    papers = sorted(p.stem for p in (ROOT / "workflow" / "rules").glob("*.smk") if p.stem not in {"common", "report"})
    for slug in papers:
        assert slug in stages, f"paper {slug} has no DVC stage"
        st = stages[slug]
        assert f"results/{slug}" in st["outs"] and f"workflow/rules/{slug}.smk" in st["deps"]
        assert st["params"] == [{"config.yaml": [slug, "scale"]}]
        # what builds every job's DAG and environment, outside the paper's own code
        assert {"Snakefile", "workflow/rules/common.smk"} <= set(st["deps"]), slug
        assert st["cmd"].endswith(f"-- {slug}")
    for shared in (ROOT / "workflow" / "rules" / "shared").glob("*.smk"):
        if shared.stem in stages:
            assert f"results/{shared.stem}" in stages[shared.stem]["outs"]
    outs = [o for st in stages.values() for o in st["outs"]]
    assert len(outs) == len(set(outs)), "two stages own one output"
    # the paper scale's results (the GPU runs, the ones most worth sharing) have stages too, in a dvc.yaml of
    # their own run from the root, so that `dvc repro` / `dvc exp run` at the root never start them
    assert not [s for s in stages if s.endswith("_full")], "a paper-scale stage in the root dvc.yaml"
    full = yaml.safe_load(files[dvc_stages.FULL_PIPELINE])
    assert set(full) == {"stages"}, "full/dvc.yaml declares metrics or plots: `dvc metrics show` would warn"
    full_stages = full["stages"]
    full_cfg = yaml.safe_load((ROOT / "config" / "full.yaml").read_text())
    for slug in papers:
        st = full_stages[f"{slug}_full"]
        assert st["wdir"] == ".."
        assert f"results_full/{slug}" in st["outs"] and not any(o.startswith("resources") for o in st["outs"])
        assert st["cmd"].startswith("snakemake --configfile config/full.yaml") and st["cmd"].endswith(f"-- {slug}")
        assert {"config.yaml": [slug, "scale"]} in st["params"]
        if slug in full_cfg:
            assert {"config/full.yaml": [slug, "scale"]} in st["params"]
    assert "report_full" in full_stages
    outs = [o for st in [*stages.values(), *full_stages.values()] for o in st["outs"]]
    assert len(outs) == len(set(outs)), "two stages own one output"
    doc = yaml.safe_load(current)
    assert doc["metrics"] and all(m.startswith("results/") for m in doc["metrics"])
    shown = [p for plot in doc["plots"] for p in (plot if isinstance(plot, dict) else {plot: None})]
    assert shown and all(p.startswith("results/") for p in shown)


def test_dvc_reads_every_config_section_a_stage_depends_on():
    """DVC's own params reader (dvc params diff, exp show, status) on every config key path of both dvc.yaml
    files: a section it cannot read (integer mapping keys break its key-path search) would vanish from
    `dvc exp show` and from what `make pull` compares."""
    code = (
        "import json, sys\n"
        "from dvc.repo import Repo\n"
        "from dvc.repo.params.show import _collect_params, read_param_file\n"
        "repo = Repo()\n"
        "bad = {}\n"
        "for path, keys in _collect_params(repo).items():\n"
        "    for key in keys:\n"
        "        try:\n"
        "            read_param_file(repo.dvcfs, path, [key])\n"
        "        except Exception as e:\n"
        "            bad[f'{path}:{key}'] = repr(e)\n"
        "print(json.dumps({'n': sum(map(len, _collect_params(repo).values())), 'bad': bad}))\n"
    )
    out = json.loads(run(ROOT, sys.executable, "-c", code).stdout.splitlines()[-1])
    assert out["n"] > 40, out
    assert not out["bad"], f"DVC cannot read these params (quote integer keys in the config): {out['bad']}"


def test_long_format_main_figures_are_coloured_by_their_method_column():
    """A main figure whose data has one row per method and x is drawn with DVC's template, its colour set to
    the method column; that column is one the paper's code writes (a rename breaks this test)."""
    plots = {
        p.split("/")[1]: props
        for plot in yaml.safe_load((ROOT / "dvc.yaml").read_text())["plots"]
        if isinstance(plot, dict)
        for p, props in plot.items()
    }
    assert len(dvc_stages.FIGURE_COLOUR) >= 11
    for paper, column in dvc_stages.FIGURE_COLOUR.items():
        props = plots[paper]
        assert props["template"].endswith(f"_by_{column}"), (paper, props)
        template = json.loads((ROOT / ".dvc" / "plots" / f"{props['template']}.json").read_text())
        assert template["encoding"]["color"] == {"field": column, "type": "nominal"}
        assert template["encoding"]["x"]["field"] == "<DVC_METRIC_X>"
        code = "".join(p.read_text() for p in (ROOT / "src" / "methods" / paper).glob("*.py"))
        assert f'"{column}"' in code, f"{paper}: no column {column!r} in the code that writes its main figure"
    for paper, props in plots.items():
        if paper not in dvc_stages.FIGURE_COLOUR:
            assert "_by_" not in props.get("template", ""), paper


def _some_rule(kind):
    for name, st in dvc_stages.rule_files(ROOT).items():
        rules = dvc_stages.rules_in(st["file"])
        if st["kind"] == kind and rules:
            return name, rules[0]
    pytest.skip(f"no {kind} rule file in this tree")


def _job(rule, output, inputs=()):
    return {"rule": rule, "output": list(output), "input": list(inputs), "log": [], "benchmark": []}


def test_paper_stage_depends_on_the_shared_substrate_it_reads():
    shared, srule = _some_rule("shared")
    paper, prule = _some_rule("paper")
    jobs = [
        _job(srule, [f"results/{shared}/model.pt"]),
        _job(prule, [f"results/{paper}/claims.json"], [f"results/{shared}/model.pt"]),
        _job("report", ["results/REPORT.md"], [f"results/{paper}/claims.json"]),
    ]
    stages = dvc_stages.build(ROOT, jobs=jobs, full_jobs=[])["stages"]
    assert f"results/{shared}" in stages[paper]["deps"] and stages[shared]["outs"] == [f"results/{shared}"]
    assert "--allowed-rules" in stages[paper]["cmd"]  # Snakemake must not rerun the substrate's jobs
    assert f"results/{paper}" in stages["report"]["deps"]


def test_kernels_stage_depends_on_the_csrc_sources_its_build_reads():
    """A committed change to csrc/cpu/vnni.h must make `dvc status` call the kernels stage changed (and so
    `make pull` refuse it and everything reading it): the build job reads the sources, no job writes them."""
    vnni, ops = ROOT / "csrc" / "cpu" / "vnni.h", ROOT / "csrc" / "cpu" / "ops.cpp"
    jobs = [
        _job("kernels_build", ["results/kernels/build.txt"], [str(vnni), str(ops)]),
        _job("slim_speed", ["results/slim/speed.json"], ["results/kernels/build.txt"]),
    ]
    stages = dvc_stages.build(ROOT, jobs=jobs, full_jobs=[])["stages"]
    assert {"csrc/cpu/vnni.h", "csrc/cpu/ops.cpp"} <= set(stages["kernels"]["deps"]), stages["kernels"]["deps"]
    assert "results/kernels" in stages["slim"]["deps"]
    committed = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    assert "csrc/cpu/vnni.h" in committed["kernels"]["deps"] and "Snakefile" in committed["kernels"]["deps"]


def test_two_stages_owning_one_output_is_refused_naming_both():
    (a, ra), (b, rb) = _some_rule("paper"), _some_rule("shared")
    jobs = [_job(ra, ["results/common.json"]), _job(rb, ["results/common.json"])]
    with pytest.raises(ValueError, match=rf"{a}.*{b}|{b}.*{a}"):
        dvc_stages.build(ROOT, jobs=jobs, full_jobs=[])


def test_rule_outside_the_registry_is_refused():
    with pytest.raises(ValueError, match="nosuchrule"):
        dvc_stages.build(ROOT, jobs=[_job("nosuchrule", ["results/x.json"])], full_jobs=[])


def test_check_mode_reports_a_stale_file(tmp_path):
    repo = worktree_repo(tmp_path / "repo")
    (repo / "dvc.yaml").write_text((repo / "dvc.yaml").read_text().replace(f"  {PAPER}:", "  renamed:"))
    (repo / "full" / "dvc.yaml").unlink()
    (repo / ".dvc" / "plots" / "scatter_by_nothing.json").write_text("{}")
    assert dvc_stages.main(["--check", "--root", str(repo)]) == 1
    assert dvc_stages.main(["--root", str(repo)]) == 0
    assert dvc_stages.main(["--check", "--root", str(repo)]) == 0
    assert (repo / "full" / "dvc.yaml").exists() and not (repo / ".dvc" / "plots" / "scatter_by_nothing.json").exists()


# ---------------------------------------------------------------------------------------------
# round trips


@pytest.fixture(scope="module")
def origin(tmp_path_factory):
    """A repository where the paper was reproduced with `dvc repro`, pushed to a local remote, dvc.lock committed."""
    base = tmp_path_factory.mktemp("dvc")
    repo = worktree_repo(base / "origin")
    store = base / "store"
    use_store(repo, store)
    t0 = time.time()
    dvc(repo, "repro", PAPER, timeout=600)
    print(f"dvc repro {PAPER}: {time.time() - t0:.1f} s")
    dvc(repo, "push", PAPER)
    run(repo, "git", "add", "dvc.lock")
    run(repo, *GIT, "commit", "-qm", "results of " + PAPER)
    return {"repo": repo, "store": store, "base": base, "sums": all_checksums(repo)}


def test_local_remote_round_trip_leaves_nothing_to_do(origin):
    repo = clone(origin["repo"], origin["base"] / "colleague", origin["store"])
    assert not (repo / "results").exists()
    make_pull(repo)
    assert all_checksums(repo) == origin["sums"]
    assert nothing_to_do(repo)
    assert "up to date" in dvc(repo, "status", PAPER).stdout
    metrics = dvc(repo, "metrics", "show", "--json").stdout
    doc = json.loads((repo / "results" / PAPER / "claims.json").read_text())
    shown = json.loads(metrics)
    (data,) = [v["data"][f"results/{PAPER}/metrics.json"]["data"] for v in shown.values()]
    headline = [c for c in doc["claims"] if c["kind"] == "headline"]
    assert data["headline"]["total"] == len(headline)  # a few numbers per paper, not every per-seed value
    assert data["headline"]["reproduced"] == sum(c["verdict"] == "reproduced" for c in headline)


def test_pull_refuses_results_made_with_another_config(origin, tmp_path):
    """Results pushed with seeds 0-19 are not marked current for a checkout whose config says 5, 6, 7."""
    repo = clone(origin["repo"], tmp_path / "other_config", origin["store"])
    cfg = repo / "config.yaml"
    text = cfg.read_text()
    seeds_line = "  seeds: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]\n"
    section = text.index(f"\n{PAPER}:\n")
    assert text.index(seeds_line, section) < text.index("\nprincipal_agent:"), "outcome_process seeds line moved"
    cfg.write_text(text[:section] + text[section:].replace(seeds_line, "  seeds: [5, 6, 7]\n", 1))
    proc = make_pull(repo, check=False)
    assert proc.returncode != 0
    err = proc.stderr
    assert f"not pulling {PAPER}" in err and f"config key {PAPER}.seeds: [0, 1, 2" in err, err[-2000:]
    assert not (repo / "results" / PAPER / "claims.json").exists()
    assert not nothing_to_do(repo)


def scheduled_rules(repo, *args):
    """The rules `snakemake -n` would run for the paper (a set; empty when there is nothing to do)."""
    proc = run(repo, sys.executable, "-m", "snakemake", "-n", *args, "--", PAPER)
    text = proc.stdout + proc.stderr
    if "Nothing to be done" in text:
        return set()
    stats = text.split("Job stats:")[1].split("total")[0]
    return {line.split()[0] for line in stats.splitlines()[3:] if len(line.split()) == 2}


def _set_config(repo, key_path, old, new):
    """Edit one value of config.yaml in place (text edit, so comments and layout stay)."""
    cfg = repo / "config.yaml"
    text = cfg.read_text()
    section = text.index(f"\n{PAPER}:\n")
    line = f"    {key_path[-1]}: {old}"
    at = text.index(line, section)
    cfg.write_text(text[:at] + f"    {key_path[-1]}: {new}" + text[at + len(line) :])


def test_after_pull_a_config_change_reruns_what_it_would_have_rerun_had_the_jobs_run_here(origin, tmp_path):
    """The oracle is the origin, whose jobs really ran: after the same edit both schedule the same rules."""
    repo = clone(origin["repo"], tmp_path / "config_change", origin["store"])
    make_pull(repo)
    _set_config(repo, ("prm", "n_instances"), 20, 19)
    pulled = scheduled_rules(repo)
    cfg = origin["repo"] / "config.yaml"
    before = cfg.read_text()
    try:
        _set_config(origin["repo"], ("prm", "n_instances"), 20, 19)
        oracle = scheduled_rules(origin["repo"])
    finally:
        cfg.write_text(before)
    assert f"{PAPER}_prm" in pulled and f"{PAPER}_rate" not in pulled, pulled
    assert pulled == oracle


def test_after_pull_touching_a_method_file_reruns_nothing(origin, tmp_path):
    repo = clone(origin["repo"], tmp_path / "touched", origin["store"])
    make_pull(repo)
    for f in (repo / "src" / "methods" / PAPER).glob("*.py"):
        os.utime(f)
    assert scheduled_rules(repo) == set()


def test_pull_refusal_names_the_changed_key_path(origin, tmp_path):
    repo = clone(origin["repo"], tmp_path / "key_path", origin["store"])
    _set_config(repo, ("prm", "n_instances"), 20, 19)
    proc = make_pull(repo, check=False)
    assert proc.returncode != 0
    assert f"config key {PAPER}.prm.n_instances: 20 -> 19" in proc.stderr, proc.stderr[-2000:]


def test_pull_refuses_results_made_before_a_change_to_the_workflow_files(origin, tmp_path):
    """common.smk and the Snakefile shape every job (config validation, input functions, environment); a
    committed change to them leaves no pulled result current."""
    repo = clone(origin["repo"], tmp_path / "workflow_change", origin["store"])
    common = repo / "workflow" / "rules" / "common.smk"
    common.write_text(common.read_text() + "\n# a change every job's DAG goes through\n")
    run(repo, *GIT, "commit", "-qam", "edit common.smk")
    proc = make_pull(repo, check=False)
    assert proc.returncode != 0 and "workflow/rules/common.smk" in proc.stderr, proc.stderr[-2000:]
    assert not (repo / "results" / PAPER / "claims.json").exists()


def test_tampered_object_on_an_added_remote_is_refused_naming_the_file(origin, tmp_path):
    """A remote added with `dvc remote add` (no `verify`): an edited claims.json there is caught by the
    pull's own hash check against dvc.lock, removed, and nothing is marked current."""
    store = tmp_path / "store"
    subprocess.run(["cp", "-r", origin["store"], store], check=True)
    claims = (origin["repo"] / "results" / PAPER / "claims.json").read_bytes()
    digest = hashlib.md5(claims).hexdigest()
    obj = store / "files" / "md5" / digest[:2] / digest[2:]
    obj.chmod(0o644)
    obj.write_bytes(claims.replace(b'"verdict": "', b'"verdict": "re', 1))
    repo = clone(origin["repo"], tmp_path / "tampered", tmp_path / "unused")
    dvc(repo, "remote", "add", "--local", "mine", store)
    proc = make_pull(repo, "REMOTE=mine", check=False)
    assert proc.returncode != 0
    assert f"results/{PAPER}/claims.json does not match dvc.lock" in proc.stderr and "remote 'mine'" in proc.stderr
    assert not (repo / "results" / PAPER / "claims.json").exists()
    assert not (repo / ".snakemake" / "metadata").exists() or not any((repo / ".snakemake" / "metadata").iterdir())


def test_dvc_and_snakemake_agree_on_method_code_changes(origin, tmp_path):
    """After a pull both say up to date; an edit to a file the paper does not import changes neither;
    an edit to one it imports makes DVC name that file and Snakemake rerun the paper's jobs."""
    repo = clone(origin["repo"], tmp_path / "code_change", origin["store"])
    make_pull(repo)
    assert nothing_to_do(repo) and "up to date" in dvc(repo, "status", PAPER).stdout
    unrelated = repo / "src" / "methods" / "timemcl" / "losses.py"
    unrelated.write_text(unrelated.read_text() + "\n# an edit elsewhere\n")
    assert nothing_to_do(repo) and "up to date" in dvc(repo, "status", PAPER).stdout
    method = repo / "src" / "methods" / PAPER / "mdp.py"
    method.write_text(method.read_text() + "\n# an edit to the method\n")
    assert f"src/methods/{PAPER}/mdp.py" in dvc(repo, "status", PAPER).stdout
    dry = run(repo, sys.executable, "-m", "snakemake", "-n", "--", PAPER).stdout
    assert f"{PAPER}_claims" in dry and "mdp.py" in dry, dry[-3000:]


def test_corrupted_remote_object_is_detected(origin, tmp_path):
    store = tmp_path / "store"
    subprocess.run(["cp", "-r", origin["store"], store], check=True)
    victim = sorted(p for p in store.rglob("*") if p.is_file() and not p.name.endswith(".dir"))[0]
    victim.write_bytes(victim.read_bytes() + b"corrupted")
    repo = clone(origin["repo"], tmp_path / "c", store)
    proc = dvc(repo, "pull", PAPER, check=False)
    assert proc.returncode != 0
    # whatever was restored is intact; the corrupted object was not used
    for out, sums in all_checksums(repo).items() if (repo / "results").exists() else []:
        for name, digest in sums.items():
            assert origin["sums"][out][name] == digest


def test_corrupted_cache_object_is_detected(origin, tmp_path):
    repo = clone(origin["repo"], tmp_path / "d", origin["store"])
    dvc(repo, "pull", PAPER)
    target = repo / "results" / PAPER / "claims.json"
    digest = hashlib.md5(target.read_bytes()).hexdigest()
    obj = repo / ".dvc" / "cache" / "files" / "md5" / digest[:2] / digest[2:]
    obj.chmod(0o644)
    obj.write_bytes(b"{}\n")
    assert "not in cache" in dvc(repo, "status", PAPER).stdout
    subprocess.run(["rm", "-rf", repo / "results" / PAPER], check=True)
    dvc(repo, "checkout", PAPER, check=False)
    # the corrupted object is never checked out as the file
    assert not target.exists() or hashlib.md5(target.read_bytes()).hexdigest() == digest


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def s3(origin):
    """moto's S3 server on 127.0.0.1 (a real HTTP S3 API), stopped by PID afterwards."""
    port = _free_port()
    log = open(origin["base"] / "moto.log", "w")
    proc = subprocess.Popen(
        [BIN / "moto_server", "-H", "127.0.0.1", "-p", str(port)], stdout=log, stderr=subprocess.STDOUT
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.1)
    import boto3

    boto3.client(
        "s3", endpoint_url=url, aws_access_key_id="testing", aws_secret_access_key="testing", region_name="us-east-1"
    ).create_bucket(Bucket="icml25-test")
    yield url
    proc.terminate()
    proc.wait(timeout=10)
    log.close()


def _use_s3(repo, endpoint):
    dvc(repo, "remote", "add", "--local", "--force", "s3", "s3://icml25-test/dvc")
    dvc(repo, "remote", "modify", "--local", "s3", "endpointurl", endpoint)


def test_s3_round_trip_leaves_nothing_to_do(origin, s3):
    _use_s3(origin["repo"], s3)
    dvc(origin["repo"], "push", "-r", "s3", PAPER, env=_env(**S3_CREDS))
    repo = clone(origin["repo"], origin["base"] / "s3_colleague", origin["base"] / "no_local_store")
    _use_s3(repo, s3)
    make_pull(repo, "REMOTE=s3", env=_env(**S3_CREDS))
    assert all_checksums(repo) == origin["sums"]
    assert nothing_to_do(repo)


def test_s3_missing_credentials_is_a_clear_error_and_nothing_local_is_lost(origin, s3):
    _use_s3(origin["repo"], s3)
    no_creds = _env(
        AWS_ACCESS_KEY_ID=None,
        AWS_SECRET_ACCESS_KEY=None,
        AWS_SESSION_TOKEN=None,
        AWS_PROFILE=None,
        AWS_EC2_METADATA_DISABLED="true",
    )
    repo = clone(origin["repo"], origin["base"] / "s3_nocreds", origin["base"] / "no_local_store")
    _use_s3(repo, s3)
    proc = dvc(repo, "pull", "-r", "s3", PAPER, check=False, env=no_creds, timeout=120)
    assert proc.returncode != 0
    assert "credentials" in (proc.stdout + proc.stderr).lower()
    proc = dvc(origin["repo"], "push", "-r", "s3", PAPER, check=False, env=no_creds, timeout=120)
    assert proc.returncode != 0
    assert all_checksums(origin["repo"]) == origin["sums"]


def test_unreachable_remote_is_a_clear_error(origin, tmp_path):
    repo = clone(origin["repo"], tmp_path / "e", tmp_path / "store")
    dead = f"http://127.0.0.1:{_free_port()}"
    _use_s3(repo, dead)
    t0 = time.time()
    proc = dvc(repo, "pull", "-r", "s3", PAPER, check=False, env=_env(**S3_CREDS, AWS_MAX_ATTEMPTS="1"), timeout=180)
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "127.0.0.1" in out or "connect" in out.lower(), out[-2000:]
    assert time.time() - t0 < 170
    # a local remote that does not exist: named
    repo2 = clone(origin["repo"], tmp_path / "f", tmp_path / "missing_store")
    proc = dvc(repo2, "pull", PAPER, check=False)
    assert proc.returncode != 0


def test_interrupted_writers_temporary_files_are_never_tracked():
    for path in (f"results/{PAPER}/.claims.json.k2x9.part", "resources/lm/.corpus.tar.gz.a1.part"):
        assert dvc(ROOT, "check-ignore", "-q", path, check=False).returncode == 0, path
    assert dvc(ROOT, "check-ignore", "-q", f"results/{PAPER}/claims.json", check=False).returncode == 1


def test_dvc_status_resolves_a_paper_scale_stage():
    proc = dvc(ROOT, "status", f"{dvc_stages.FULL_PIPELINE}:{PAPER}_full")
    assert f"results_full/{PAPER}" in proc.stdout


def test_a_laptop_dvc_run_never_touches_the_paper_scale_and_shows_the_tiny_results(origin):
    """In the repository where the paper was reproduced: `dvc repro` (dry) at the root plans no paper-scale
    stage; `dvc metrics show` names no absent paper-scale file; `dvc exp show` lists the paper's config and its
    headline counts; `dvc plots show` colours the paper's main figure by its method column."""
    repo = origin["repo"]
    # the stages `dvc repro` / `dvc exp run` take with no target: DVC's own collection of ./dvc.yaml
    collect = "from dvc.repo import Repo; print(*(s.addressing for s in Repo().stage.collect({})))"
    default = run(repo, sys.executable, "-c", collect.format("'dvc.yaml'")).stdout.split()
    assert PAPER in default and "report" in default, default
    assert not [s for s in default if s.endswith("_full")], default
    full = run(repo, sys.executable, "-c", collect.format(f"'{dvc_stages.FULL_PIPELINE}'")).stdout.split()
    assert f"{dvc_stages.FULL_PIPELINE}:{PAPER}_full" in full, full
    metrics = dvc(repo, "metrics", "show")
    assert "results_full" not in metrics.stdout + metrics.stderr
    assert f"results/{PAPER}/metrics.json" in metrics.stdout
    (workspace,) = [
        e for e in json.loads(dvc(repo, "exp", "show", "--json", "--no-fetch").stdout) if e["rev"] == "workspace"
    ]
    data = workspace["data"]
    assert PAPER in data["params"]["config.yaml"]["data"], list(data["params"]["config.yaml"]["data"])
    assert data["metrics"][f"results/{PAPER}/metrics.json"]["data"]["headline"]["total"] > 0
    plot = f"results/{PAPER}/{dvc_stages.main_figure(ROOT, PAPER)['data']}"
    shown = json.loads(dvc(repo, "plots", "show", "--json", plot).stdout)["data"]
    (spec,) = [p["content"] for p in shown[f"dvc.yaml::{plot}"]]  # dvc.yaml's definition of the main figure
    assert spec["encoding"]["color"]["field"] == dvc_stages.FIGURE_COLOUR[PAPER], spec["encoding"]


# ---------------------------------------------------------------------------------------------
# the published run, committed as dvc.lock and a store under docs/run/store (the default remote)


def _store_object(md5: str) -> Path:
    return ROOT / "docs" / "run" / "store" / "files" / "md5" / md5[:2] / md5[2:]


def test_the_published_store_holds_exactly_what_dvc_lock_records_and_stays_small():
    """Every stage of dvc.yaml is locked; the store holds every object the lock names and nothing else, each
    paper's claims.json in it is the published one (docs/run), and what it adds to git stays under 20 MB."""
    lock = yaml.safe_load((ROOT / "dvc.lock").read_text())["stages"]
    assert set(lock) == set(yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"])
    referenced, files = set(), {}
    for stage in lock.values():
        for out in stage["outs"]:
            md5 = out["md5"]
            referenced.add(md5)
            if not md5.endswith(".dir"):
                files[out["path"]] = md5
                continue
            for entry in json.loads(_store_object(md5).read_text()):
                referenced.add(entry["md5"])
                files[f"{out['path']}/{entry['relpath']}"] = entry["md5"]
    stored = {
        p.parent.name + p.name for p in (ROOT / "docs" / "run" / "store" / "files" / "md5").rglob("*") if p.is_file()
    }
    assert stored == referenced, (
        f"unreferenced: {sorted(stored - referenced)[:5]}, missing: {sorted(referenced - stored)[:5]}"
    )
    for claims in sorted((ROOT / "docs" / "run").glob("*.claims.json")):
        paper = claims.name.removesuffix(".claims.json")
        assert _store_object(files[f"results/{paper}/claims.json"]).read_bytes() == claims.read_bytes(), paper
    packed = sum(len(zlib.compress(_store_object(m).read_bytes(), 6)) for m in referenced)
    assert packed < 20e6, f"the store adds {packed / 1e6:.1f} MB to git: leave more out in .dvcignore"


def test_a_fresh_clone_pulls_the_published_run_and_snakemake_has_nothing_to_do(tmp_path):
    """`make pull` in a fresh clone, without credentials or any remote set up: every paper's results are
    restored from the committed store, its claims are the published ones, and Snakemake has nothing to do."""
    repo = worktree_repo(tmp_path / "fresh")
    assert not (repo / "results").exists()
    t0 = time.time()
    run(repo, "make", "pull", f"VENV={Path(sys.prefix)}", timeout=1200)
    print(f"make pull of the published run: {time.time() - t0:.0f} s")
    papers = sorted(p.stem for p in (ROOT / "workflow" / "rules").glob("*.smk") if p.stem not in {"common", "report"})
    assert len(papers) == 19
    for paper in papers:
        published = (ROOT / "docs" / "run" / f"{paper}.claims.json").read_bytes()
        assert (repo / "results" / paper / "claims.json").read_bytes() == published, paper
    proc = run(repo, sys.executable, "-m", "snakemake", "-n")
    assert "Nothing to be done" in proc.stdout + proc.stderr, proc.stdout[-3000:]


def test_make_remote_points_a_clone_at_a_teams_own_store(tmp_path):
    repo = worktree_repo(tmp_path / "team")
    proc = run(repo, "make", "remote", f"VENV={Path(sys.prefix)}", check=False)
    assert proc.returncode != 0 and "URL is empty" in proc.stderr
    url, endpoint = "s3://our-bucket/icml25", "https://s3.example.org"
    run(repo, "make", "remote", f"VENV={Path(sys.prefix)}", f"URL={url}", f"ENDPOINT={endpoint}")
    assert dvc(repo, "remote", "default").stdout.strip() == "team"
    local = (repo / ".dvc" / "config.local").read_text()
    assert url in local and endpoint in local and "verify = true" in local
    assert "config.local" in run(repo, "git", "check-ignore", "-v", ".dvc/config.local").stdout
    assert Path(dvc(repo, "config", "remote.published.url").stdout.strip()) == repo / "docs" / "run" / "store"
