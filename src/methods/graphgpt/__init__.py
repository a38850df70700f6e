"""GraphGPT: Generative Pre-trained Graph Eulerian Transformer (Zhao et al., ICML 2025, arXiv 2401.00529).

What is implemented, and where:
- `serialize`: graph -> token sequence and back (Section 3.1). Per connected component an Eulerian
  path (networkx `eulerize` where the component has none) from a random start, cut once every
  original edge is covered; `<jump>` between components; nodes re-indexed by first appearance with a
  random cyclic offset; node / edge attribute tokens. The random edge-list baseline. `decode`.
- `model`: GET, a pre-norm transformer with rotary positions, as decoder (NTP) or encoder (SMTP);
  `GETPredictor`, the fine-tuning head (graph level; edge level through `<query> u v` tokens);
  `GINE`, the GNN baseline in plain torch.
- `train`: NTP and SMTP losses (Section 3.3; SMTP mask ratio 0.5 + 0.5 cos(pi r), r ~ U(0, 1)),
  pre-training and fine-tuning loops.
- `graphs`: molecules (RDKit) and random graphs for the triangle-counting structure task.
- `ogb_data`: the paper's datasets (PCQM4Mv2, ogbl-ppa) through the `ogb` loaders, full scale.
- `pipeline`: one function per DAG step (workflow/rules/graphgpt.smk); `figures`.

Checked against the authors' description only (the paper and the README of alibaba/graph-gpt);
no code was copied. Differences from the paper, by necessity of a CPU: a 2-layer, 64-wide model
instead of Llama-scale; a pool of `n_views` precomputed random serializations per graph instead of a
fresh one per step; fine-tuning reads the last token (decoder) or `<bos>` (encoder).
"""
