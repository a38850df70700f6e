"""A synthetic English-like grammar with synonym sets, whose sentence and word similarities are known.

Every sentence expresses a frame of semantic slots (agent, action, patient, optional adjectives of agent and
patient, optional place); each slot holds a concept, and each concept is written with one of its synonyms.
Sentences come in active or passive voice with random determiners. Gold sentence similarity is the Jaccard
overlap of the two frames' (slot, concept) sets; gold word similarity is 2 for synonyms, 1 for different
concepts of the same category, 0 otherwise. Project construction (the note's CPU experiment), not the paper's.
"""

from __future__ import annotations

import numpy as np

# category -> concepts -> synonyms
NOUNS = {
    "animal": [
        ["dog", "hound", "puppy"],
        ["cat", "kitten", "feline"],
        ["horse", "pony", "stallion"],
        ["bird", "sparrow", "finch"],
        ["wolf", "coyote", "jackal"],
        ["fish", "trout", "salmon"],
    ],
    "person": [
        ["man", "gentleman", "guy"],
        ["woman", "lady", "madam"],
        ["child", "kid", "youngster"],
        ["doctor", "physician", "medic"],
        ["teacher", "tutor", "instructor"],
        ["soldier", "warrior", "trooper"],
    ],
    "vehicle": [
        ["car", "automobile", "sedan"],
        ["boat", "ship", "vessel"],
        ["bicycle", "bike", "cycle"],
        ["truck", "lorry", "van"],
        ["plane", "aircraft", "jet"],
        ["train", "locomotive", "railcar"],
    ],
    "food": [
        ["bread", "loaf", "bun"],
        ["apple", "pippin", "crabapple"],
        ["soup", "broth", "stew"],
        ["cake", "pastry", "tart"],
        ["cheese", "cheddar", "brie"],
        ["meat", "beef", "steak"],
    ],
    "object": [
        ["book", "novel", "volume"],
        ["stone", "rock", "pebble"],
        ["box", "crate", "chest"],
        ["rope", "cord", "cable"],
        ["cup", "mug", "goblet"],
        ["hat", "cap", "bonnet"],
    ],
}
VERBS = {
    "motion": [
        ["chased", "pursued", "hunted"],
        ["carried", "hauled", "lugged"],
        ["pushed", "shoved", "nudged"],
        ["pulled", "dragged", "tugged"],
        ["threw", "tossed", "hurled"],
        ["lifted", "raised", "hoisted"],
    ],
    "perception": [
        ["saw", "spotted", "noticed"],
        ["heard", "overheard", "detected"],
        ["watched", "observed", "viewed"],
        ["smelled", "sniffed", "scented"],
    ],
    "attitude": [
        ["loved", "adored", "cherished"],
        ["hated", "loathed", "despised"],
        ["feared", "dreaded", "avoided"],
        ["liked", "enjoyed", "fancied"],
    ],
    "contact": [
        ["hit", "struck", "smacked"],
        ["kicked", "booted", "punted"],
        ["bit", "nipped", "chewed"],
        ["touched", "patted", "stroked"],
    ],
}
ADJECTIVES = {
    "size": [["big", "large", "huge"], ["small", "little", "tiny"], ["tall", "lofty", "towering"]],
    "colour": [
        ["red", "crimson", "scarlet"],
        ["blue", "azure", "navy"],
        ["green", "emerald", "olive"],
        ["black", "dark", "ebony"],
    ],
    "mood": [
        ["happy", "cheerful", "merry"],
        ["sad", "gloomy", "unhappy"],
        ["angry", "furious", "irate"],
        ["calm", "quiet", "serene"],
    ],
}
PLACES = {
    "place": [
        ["park", "garden"],
        ["house", "home"],
        ["forest", "woods"],
        ["river", "stream"],
        ["city", "town"],
        ["field", "meadow"],
        ["market", "bazaar"],
        ["school", "academy"],
    ]
}
DETERMINERS = ["the", "a", "this", "that"]
FUNCTION_WORDS = DETERMINERS + ["was", "by", "in", "near"]
SLOTS = ("agent", "action", "patient", "agent_adj", "patient_adj", "place")


def _concepts(table: dict) -> list[tuple[str, list[str]]]:
    return [(cat, syns) for cat, concepts in table.items() for syns in concepts]


NOUN_CONCEPTS, VERB_CONCEPTS = _concepts(NOUNS), _concepts(VERBS)
ADJ_CONCEPTS, PLACE_CONCEPTS = _concepts(ADJECTIVES), _concepts(PLACES)
SLOT_CONCEPTS = {
    "agent": NOUN_CONCEPTS,
    "action": VERB_CONCEPTS,
    "patient": NOUN_CONCEPTS,
    "agent_adj": ADJ_CONCEPTS,
    "patient_adj": ADJ_CONCEPTS,
    "place": PLACE_CONCEPTS,
}
OPTIONAL = ("agent_adj", "patient_adj", "place")


def vocabulary() -> list[str]:
    """Every word of the grammar, sorted (the token id is the index)."""
    words = set(FUNCTION_WORDS)
    for table in (NOUNS, VERBS, ADJECTIVES, PLACES):
        for _, syns in _concepts(table):
            words.update(syns)
    return sorted(words)


def sample_frame(rng: np.random.Generator, p_optional: float) -> dict[str, int]:
    """Slot -> concept index; optional slots are present with probability p_optional."""
    frame = {s: int(rng.integers(len(SLOT_CONCEPTS[s]))) for s in ("agent", "action", "patient")}
    for s in OPTIONAL:
        if rng.random() < p_optional:
            frame[s] = int(rng.integers(len(SLOT_CONCEPTS[s])))
    return frame


def perturb_frame(rng: np.random.Generator, frame: dict[str, int], p_change: float, p_optional: float) -> dict:
    """A second frame: each slot independently re-drawn (or, if optional, re-decided) with prob p_change."""
    other = sample_frame(rng, p_optional)
    out = {}
    for s in SLOTS:
        if rng.random() < p_change:
            if s in other:
                out[s] = other[s]
        elif s in frame:
            out[s] = frame[s]
    return out


def realise(rng: np.random.Generator, frame: dict[str, int], p_passive: float) -> list[str]:
    """Words of one sentence for the frame: random synonyms, determiners and voice."""
    word = lambda s: str(rng.choice(SLOT_CONCEPTS[s][frame[s]][1]))  # noqa: E731

    def np_(noun, adj):
        return [str(rng.choice(DETERMINERS))] + ([word(adj)] if adj in frame else []) + [word(noun)]

    agent, patient = np_("agent", "agent_adj"), np_("patient", "patient_adj")
    if rng.random() < p_passive:
        words = patient + ["was", word("action"), "by"] + agent
    else:
        words = agent + [word("action")] + patient
    if "place" in frame:
        words += [str(rng.choice(["in", "near"])), str(rng.choice(DETERMINERS)), word("place")]
    return words


def frame_similarity(a: dict[str, int], b: dict[str, int]) -> float:
    """Jaccard overlap of the (slot, concept) sets: the gold similarity of two sentences."""
    sa, sb = set(a.items()), set(b.items())
    return len(sa & sb) / len(sa | sb)


def corpus(n: int, seed: int, p_optional: float, p_passive: float) -> list[list[str]]:
    """n training sentences from independent random frames."""
    rng = np.random.default_rng(seed)
    return [realise(rng, sample_frame(rng, p_optional), p_passive) for _ in range(n)]


def sentence_pairs(n: int, seed: int, p_optional: float, p_passive: float):
    """n held-out pairs with gold similarity; the change probability of each pair is uniform in [0, 1]."""
    rng = np.random.default_rng(seed)
    a_words, b_words, gold = [], [], []
    for _ in range(n):
        fa = sample_frame(rng, p_optional)
        fb = perturb_frame(rng, fa, float(rng.random()), p_optional)
        a_words.append(realise(rng, fa, p_passive))
        b_words.append(realise(rng, fb, p_passive))
        gold.append(frame_similarity(fa, fb))
    return a_words, b_words, gold


def word_pairs(seed: int, n: int) -> tuple[list[str], list[str], list[float]]:
    """n word pairs with gold 2 (synonyms), 1 (same category) or 0, drawn in equal thirds."""
    rng = np.random.default_rng(seed)
    concepts = NOUN_CONCEPTS + VERB_CONCEPTS + ADJ_CONCEPTS + PLACE_CONCEPTS
    a, b, gold = [], [], []
    while len(gold) < n:
        kind = len(gold) % 3
        i = int(rng.integers(len(concepts)))
        cat, syns = concepts[i]
        if kind == 0:
            w1, w2 = rng.choice(syns, size=2, replace=False)
        else:
            pool = [j for j, (c, _) in enumerate(concepts) if (c == cat) == (kind == 1) and j != i]
            j = int(rng.choice(pool))
            w1, w2 = rng.choice(syns), rng.choice(concepts[j][1])
        a.append(str(w1))
        b.append(str(w2))
        gold.append(float(2 - kind))
    return a, b, gold
