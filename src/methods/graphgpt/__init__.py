"""GraphGPT: Generative Pre-trained Graph Eulerian Transformer (Zhao et al., ICML 2025, arXiv 2401.00529).

What is implemented, and where:
- `serialize`: graph (simple or multigraph, self-loops allowed) -> token sequence and back
  (Section 3.1), as the official code does it: node ids permuted afresh for every draw (so networkx
  walks a new adjacency order), every non-Eulerian component eulerized (semi-Eulerian ones too), a
  walk from a random node drawn as Eulerian path or circuit, cut once every edge is covered,
  components in random order; nodes named by first appearance, shifted by a
  random cyclic offset at training time; the "short" stacked layout (node id, link, node and edge
  attributes summed at one position) and a `<gsum>` read-out position. The edge-list baseline. `decode`.
- `model`: GET, a pre-norm transformer with rotary positions, as decoder (NTP) or encoder (SMTP),
  one output layer per stacked token; `GETPredictor` reads `<gsum>`; `GINE`, the GNN baseline on
  PyTorch Geometric's `GINEConv`; `MODELS`, the models compared.
- `train`: NTP and SMTP (mask ratio uniform as the official PCQM4Mv2 run, cosine as an option;
  that share of the stacked tokens, each chosen on its own, -> [MASK] 80% / random 0% / unchanged
  20%), pre-training and fine-tuning loops (L1 loss for regression, as the official fine-tuning).
- `checkpoint`: the resumable state of a pre-training or fine-tuning job (model, optimizer, step,
  every random state), saved every `checkpoint_every` steps; a killed job rerun continues from it.
- `graphs`: molecules (RDKit) and random graphs for the triangle-counting structure task.
- `ogb_data`: the paper's datasets (PCQM4Mv2, ogbl-ppa) through the `ogb` loaders, full scale.
- One module per DAG step (workflow/rules/graphgpt.smk): `data` (a domain's graphs and pools),
  `pretraining` (a domain's pre-trained models: all in one job at tiny scale, one per job at paper
  scale), `finetuning` (every model of a task for a group of seeds), `figures`, `results` (claims,
  no torch).

Read against the paper and the official code (alibaba/graph-gpt); no code was copied. Differences,
by necessity of a CPU: a 2-layer, 64-wide model instead of Base (113M) and larger; a pool of
`n_views` precomputed random walks per graph (offsets drawn fresh per step) instead of a fresh
walk per step; summed (not gated) stacked embeddings; the same `<gsum>` read-out for the
edge-level task, whose node pair is given as two `<query>` positions.
"""
