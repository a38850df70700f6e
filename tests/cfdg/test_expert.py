"""The pretrained Bullet expert: its weights read as text from the pinned pybullet wheel, and its returns in
HopperBulletEnv-v0.

The tests on the real wheel fetch it through the download cache (`pip download` from the configured index the
first time, about 103 MB) and are skipped, with the reason, only where neither the cache nor an index can
provide it. The parser's refusals are tested on small files written here: the example file is parsed as
literals, never run, so planted code cannot execute (tests/workflow/test_pins.py plants a pickle for every
pinned download, this one included).
"""

import zipfile
from pathlib import Path

import numpy as np
import pytest
import yaml

from methods.cfdg.data import generate_dataset
from methods.cfdg.envs import make_env
from methods.cfdg.expert import ExpertPolicy, load_expert, parse_weights
from methods.cfdg.metrics import dynamics_error
from methods.common.data import DownloadError, fetch_pypi_file, verify_pins

ROOT = Path(__file__).resolve().parents[2]
CFG = yaml.safe_load((ROOT / "config.yaml").read_text())["cfdg"]
PIN = CFG["expert"]
ENV = CFG["env"]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    dest = tmp_path_factory.mktemp("pybullet") / PIN["filename"]
    try:
        return fetch_pypi_file(PIN["package"], PIN["version"], PIN["filename"], PIN["sha256"], dest)
    except DownloadError as e:
        pytest.skip(f"{PIN['package']}=={PIN['version']} is neither cached nor downloadable here: {e}")


@pytest.fixture(scope="module")
def expert(wheel):
    return load_expert(wheel, PIN["member"])


def _file(arrays: dict) -> str:
    return "import numpy as np\nx = np.zeros(3)\n" + "".join(f"{k} = np.array({v!r})\n" for k, v in arrays.items())


def _tiny_weights():
    return {
        "weights_dense1_w": [[1.0, -1.0], [0.5, 2.0]],
        "weights_dense1_b": [0.0, 1.0],
        "weights_dense2_w": [[1.0], [-1.0]],
        "weights_dense2_b": [0.5],
        "weights_final_w": [[2.0, -3.0]],
        "weights_final_b": [0.1, 0.2],
    }


def test_the_policy_is_the_relu_mlp_of_its_weights_clipped_to_the_action_box():
    pol = ExpertPolicy(parse_weights(_file(_tiny_weights()), "test"))
    obs = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]])
    # by hand: h1 = relu(o W1 + b1), h2 = relu(h1 W2 + b2), a = h2 W3 + b3, clipped
    h1 = np.maximum(np.array([[1.0, 0.0], [0.5, 3.0], [-1.5, 0.0]]), 0)
    h2 = np.maximum(h1 @ np.array([[1.0], [-1.0]]) + 0.5, 0)
    want = np.clip(h2 @ np.array([[2.0, -3.0]]) + [0.1, 0.2], -1, 1)
    np.testing.assert_allclose(pol(obs), want)
    assert want.min() == -1.0 and want.max() == 1.0  # the clip is exercised
    with pytest.raises(ValueError, match="2-dim observations"):
        pol(np.zeros((1, 3)))


def test_the_parser_refuses_code_and_names_what_is_wrong(tmp_path):
    marker = tmp_path / "ran"
    planted = _tiny_weights()
    text = _file(planted).replace(
        "weights_dense2_b = np.array([0.5])", f"weights_dense2_b = np.array(open({str(marker)!r}, 'w').write('x'))"
    )
    with pytest.raises(ValueError, match="weights_dense2_b is not a numeric literal"):
        parse_weights(text, "planted.py")
    assert not marker.exists()  # parsed, never run
    missing = {k: v for k, v in planted.items() if k != "weights_final_b"}
    with pytest.raises(ValueError, match=r"no weight array\(s\) \['weights_final_b'\]"):
        parse_weights(_file(missing), "missing.py")
    bad = dict(planted, weights_dense2_w=[[1.0], [2.0], [3.0]])
    with pytest.raises(ValueError, match="do not chain"):
        parse_weights(_file(bad), "bad.py")
    with pytest.raises(ValueError, match="not Python source"):
        parse_weights("weights_dense1_w = np.array([[1", "broken.py")


def test_a_wheel_without_the_member_is_named(tmp_path):
    fake = tmp_path / "fake.whl"
    with zipfile.ZipFile(fake, "w") as zf:
        zf.writestr("other.py", "x = 1\n")
    with pytest.raises(DownloadError, match="has no member"):
        load_expert(fake, PIN["member"])


def test_an_altered_wheel_is_named_and_removed(wheel, tmp_path):
    copy = tmp_path / PIN["filename"]
    copy.write_bytes(wheel.read_bytes()[:-100])  # truncated
    with pytest.raises(DownloadError, match="does not match the pinned"):
        verify_pins({str(copy): PIN["sha256"]})
    assert not copy.exists()


def test_the_pinned_experts_shapes(expert):
    assert [w.shape for w, _ in expert.layers] == [(15, 128), (128, 64), (64, 3)]


def test_one_seeded_episode_of_the_expert_and_of_random_actions(expert):
    """pybullet documents the Hopper expert at about 2,557 (its example's log) and random actions at about 20:
    one 1000-step episode of the expert from a seeded start, and random episodes, land there."""
    gaits = {"expert": expert}
    _, ret = generate_dataset(ENV, {"noise": 0.0, "random_prob": 0.0}, 1000, 1, seed=0, gaits=gaits)
    assert len(ret) == 1 and 2300 < ret[0] < 2800
    _, rand = generate_dataset(ENV, {"noise": 0.0, "random_prob": 1.0}, 1000, 1, seed=0, gaits=gaits)
    assert len(rand) > 20 and 0 < rand.mean() < 60  # random episodes fall within tens of steps


def test_bullet_rollouts_are_reproducible_and_have_no_state_reset():
    env = make_env(ENV, 2, seed=3)
    assert env.predict is None  # the observation leaves out the pitch rate: no simulator reset from it
    trans = np.zeros((4, 2 * env.obs_dim + env.act_dim + 2))
    assert all(np.isnan(dynamics_error(trans, env.obs_dim, env.act_dim, env.predict)))
    pol = {"noise": 0.0, "random_prob": 1.0}
    a, _ = generate_dataset(ENV, pol, 40, 2, seed=4, gaits={})
    b, _ = generate_dataset(ENV, pol, 40, 2, seed=4, gaits={})
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])
    assert a["obs"].shape == (40, 15) and a["act"].shape == (40, 3)
