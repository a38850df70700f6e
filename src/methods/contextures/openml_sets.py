"""The 28 OpenML datasets of the paper's correlation table (Section 5.3), as config/full.yaml lists them.

The paper reports Pearson / distance correlation of tau vs err_{d*} on 28 OpenML datasets (mean Pearson
0.431, median 0.587) but its text names only five of them: breast-w, abalone, brazilian_houses and
fifa (its failure cases) and cps88wages. The other 23 rows of its table could not be read here and no
official code for the metric was found (the repository named to us, Dongyue-Wang/contextures, is not in
the stored index; RuntianZ/contextures-dissertation, the first author's tabular benchmark, has no metric
code). So the table below is:

- `paper`: the name appears in the paper's text (its June-2025 arXiv version);
- `unverified`: a candidate, not checked against the paper's table: a regression set of the first
  author's own OpenML benchmark list (RuntianZ/contextures-dissertation, config/openml.yaml, group
  `reg`, which names OpenML *task* ids), taken in the OpenML-CTR23 version (suite 353) where it has one.

Ids are OpenML *dataset* ids (what `sklearn.datasets.fetch_openml(data_id=...)` takes). `id_source`
says where the dataset id comes from: `openml-15` (breast-w's original upload, task 15 = dataset 15),
`ctr23` (the dataset behind the author's CTR23 task id, from the suite's task-to-dataset listing),
`amlb` (likewise in the AutoML regression suite 269) or `memory` (recalled, not looked up: check
before relying on it).
"""

from __future__ import annotations

# OpenML dataset id -> (name, in the paper's text or not, author's task id, source of the dataset id)
PAPER_OPENML: dict[int, tuple[str, str, int | None, str]] = {
    15: ("breast-w", "paper", 15, "openml-15"),
    44956: ("abalone", "paper", 361234, "ctr23"),
    44990: ("brazilian_houses", "paper", 361267, "ctr23"),
    45012: ("fifa", "paper", 361272, "ctr23"),
    44984: ("cps88wages", "paper", 361261, "ctr23"),
    41021: ("Moneyball", "unverified", 361616, "ctr23"),
    44957: ("airfoil_self_noise", "unverified", 361235, "ctr23"),
    44958: ("auction_verification", "unverified", 361236, "ctr23"),
    44977: ("california_housing", "unverified", 361255, "ctr23"),
    44959: ("concrete_compressive_strength", "unverified", 361237, "ctr23"),
    44978: ("cpu_activity", "unverified", 361256, "ctr23"),
    44979: ("diamonds", "unverified", 361257, "ctr23"),
    44973: ("grid_stability", "unverified", 361251, "ctr23"),
    44993: ("health_insurance", "unverified", 361269, "ctr23"),
    44980: ("kin8nm", "unverified", 361258, "ctr23"),
    44989: ("kings_county", "unverified", 361266, "ctr23"),
    44983: ("miami_housing", "unverified", 361260, "ctr23"),
    44969: ("naval_propulsion_plant", "unverified", 361247, "ctr23"),
    44963: ("physiochemical_protein", "unverified", 361241, "ctr23"),
    44981: ("pumadyn32nh", "unverified", 361259, "ctr23"),
    44972: ("red_wine", "unverified", 361250, "ctr23"),
    44976: ("sarcos", "unverified", 361254, "ctr23"),
    44987: ("socmob", "unverified", 361264, "ctr23"),
    44974: ("video_transcoding", "unverified", 361252, "ctr23"),
    44971: ("white_wine", "unverified", 361249, "ctr23"),
    42727: ("colleges", "unverified", 359942, "amlb"),
    562: ("cpu_small", "unverified", 4883, "memory"),
    344: ("mv", "unverified", 4774, "memory"),
}
N_PAPER_SETS = 28  # rows of the paper's correlation table
