"""The workflow's config validation: strict types, and the schema's defaults filled in as Snakemake's validate did."""

from pathlib import Path

import pytest
import yaml

from methods.common.config import validate_config

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"


def _config():
    return yaml.safe_load((ROOT / "config.yaml").read_text())


def test_config_yaml_is_valid_and_defaults_are_filled_in():
    cfg = _config()
    name, recipe = next(iter(cfg["slim"]["recipes"].items()))
    recipe.pop("bits", None)
    validate_config(cfg, SCHEMA)
    assert cfg["slim"]["recipes"][name]["bits"] == 4  # the schema's default


@pytest.mark.parametrize(
    "path, value, named",
    [
        (("outcome_process", "seeds"), [1.0], "outcome_process.seeds.0"),
        (("outcome_process", "bonus_scale"), float("nan"), "outcome_process.bonus_scale"),
        (("timemcl", "train", "steps"), float("inf"), "timemcl.train.steps"),
        (("human_data", "world", "kappa"), 1.5, "human_data.world.kappa"),
    ],
)
def test_strict_types_name_the_key(path, value, named):
    cfg = _config()
    node = cfg
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(ValueError, match=rf"config key '{named}'"):
        validate_config(cfg, SCHEMA)


@pytest.mark.parametrize(
    "path, value, named",
    [
        (
            ("principal_agent", "lower_bound", "threshold_range"),
            [0.7, 0.3],
            "principal_agent.lower_bound.threshold_range",
        ),
        (("graphgpt", "domains", "structure", "train_nodes"), [16, 8], "graphgpt.domains.structure.train_nodes"),
        (
            ("hypothesaes", "datasets", "synthetic", "concepts_per_text"),
            [3, 1],
            "hypothesaes.datasets.synthetic.concepts_per_text",
        ),
        (("winwinlay", "toy", "box_side"), [10, 4], "winwinlay.toy.box_side"),
    ],
)
def test_a_reversed_range_is_rejected_naming_the_key(path, value, named):
    cfg = _config()
    node = cfg
    for key in path[:-1]:
        node = node[key]
    assert node[path[-1]][0] <= node[path[-1]][1], f"config.yaml's own {named} must be a valid range"
    node[path[-1]] = value
    with pytest.raises(ValueError, match=rf"config key '{named}': .* is not a range \[low, high\]"):
        validate_config(cfg, SCHEMA)
    node[path[-1]] = sorted(value)
    validate_config(cfg, SCHEMA)
