"""x3audit's claims.json: measured metrics, verdicts computed by each claim's criterion."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.x3audit.pipeline import write_paper_claims

write_paper_claims(
    bd_files=list(snakemake.input.bd),
    pa_files=list(snakemake.input.pa),
    op_json=snakemake.input.op,
    kn_files=list(snakemake.input.kn),
    zoom_files=list(snakemake.input.zoom),
    bt_files=list(snakemake.input.bt),
    scale=snakemake.params.scale,
    claims_path=snakemake.output.claims,
    summary_path=snakemake.output.summary,
)
