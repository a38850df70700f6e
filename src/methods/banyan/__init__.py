"""banyan: Opper & Siddharth, "Banyan: Improved Representation Learning with Explicit Structure", ICML 2025,
arXiv 2407.17771. Official code: exlab-research/Banyan (PyTorch + DGL); this is an independent plain-torch
implementation written from the paper note and its summary of that code (nothing copied).

What each module implements:

* `model`    the entangled tree autoencoder: greedy merge of the most cosine-similar adjacent pair (detached),
             one node per distinct (left, right) pair across the batch; diagonal composition and
             decomposition (sigmoid on the weights, 7e parameters shared by the channels); the top-down pass
             that averages the messages of all parents; cross-entropy over the batch's unique tokens. The
             ablations: per-sentence trees, dense composition, mean of embeddings.
* `grammar`  the synthetic grammar with synonym sets and known sentence / word similarities (tiny scale).
* `data`     step banyan_data: corpus and evaluation sets, grammar at tiny, `datasets` at full (fetched on the
             submit host into a Hugging Face cache, `fetch_datasets`); gensim's word lists.
* `train`    step banyan_train: Adam training of one variant per seed on the job's device; Spearman
             evaluation of root cosines (official eval.py).
* `minilm`   step banyan_minilm; `figures` step banyan_figures (the two figures and the main one's data);
             `results` step banyan_claims (seed groups merged, no torch); `claims.yaml` the claims.
"""
