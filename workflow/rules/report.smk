# The combined report: results/REPORT.md gathers every selected paper's claims table, runtime
# and figures; `snakemake --report results/report.html` renders the same figures with captions.
# Config keys read: outdir, papers (through PAPERS).


rule report:
    input:
        claims=[claims_path(slug) for slug in PAPERS],
        code=script_code("common/report.py"),
    output:
        report=f"{OUTDIR}/REPORT.md",
        table=f"{OUTDIR}/papers_table.md",
    log:
        f"{OUTDIR}/logs/report.log",
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        benchmarks=f"{OUTDIR}/benchmarks",
    script:
        "../scripts/common/report.py"
