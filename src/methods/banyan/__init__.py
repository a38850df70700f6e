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
* `data`     corpus and evaluation sets: grammar at tiny, `datasets` at full; gensim's word lists.
* `train`    Adam training of one variant per seed; Spearman evaluation of root cosines (official eval.py).
* `pipeline` one function per DAG step; `figures` the two figures; `claims.yaml` the claims.
"""
