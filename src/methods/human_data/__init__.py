"""human_data: "Position: When Incentives Backfire, Data Stops Being Human" (Santy, Bhattacharya,
Horta Ribeiro, Allen, Oh; ICML 2025 position track, arXiv 2502.07732).

The paper has no experiments, no code and no numbers of its own. What is implemented here is the
project's operationalisation of its argument, labelled as such everywhere: an agent-based model of a
data-collection platform (`model.py`: contributors with intrinsic motivation, skill and effort cost; a
cheap LLM shortcut; motivation crowding-out by controlling rewards and crowding-in by autonomy and
feedback; four platform designs) and the claims the argument predicts, checked inside the model
(`claims.yaml`). Every assumption is a config key (config.yaml `human_data`) with its source in a
comment; the sensitivity sweep shows which assumption carries each prediction.

Sources of the model's structure: motivation crowding theory (Frey & Jegen 2001, J. Econ. Surveys),
self-determination theory (Deci & Ryan), the overjustification effect (Lepper, Greene & Nisbett 1973),
which the paper cites (its Section 5, per a third-party review; not verified here). The only figure
quoted is from the cited study, not the paper: 33-46 % of MTurk workers used LLMs on a summarisation
task (Veselovsky, Horta Ribeiro & West 2023, abstract).

- `model.py`: the model (utilities, logit choices, crowding dynamics, `simulate`).
- `jobs.py`: every design and the sweep for the seeds of one seed group; `summary.py`: the seed groups merged
  and the claims' metrics; `figures.py`; `claims.py`: the claims step.
"""
