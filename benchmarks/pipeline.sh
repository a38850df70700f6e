#!/usr/bin/env bash
# Pipeline benchmarks (the workflow's speed targets), written to benchmarks/results/pipeline.md and
# spliced into benchmarks/README.md. Wall-clock medians; this machine is shared, so rerun before trusting.
#
#   benchmarks/pipeline.sh            dry run (5x), smoke run from scratch (3x)
#   benchmarks/pipeline.sh --tiny     + `snakemake --cores all timemcl` from scratch (once)
#   benchmarks/pipeline.sh --setup    + README set-up from a fresh clone (`make venv`, once)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.venv/bin}
OUT=benchmarks/results
mkdir -p "$OUT"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

seconds() { local s=$(date +%s.%N); "$@" > "$tmp/last.log" 2>&1; awk -v a="$s" -v b="$(date +%s.%N)" "BEGIN {print b - a}"; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

rows=()
dry=$(for i in 1 2 3 4 5; do seconds "$BIN/snakemake" -n --cores 1 --config "outdir=$tmp/dry"; done | median)
rows+=("| \`snakemake -n\` over the whole workflow | $(printf %.1f "$dry") s | ≤ 5 s | median of 5 |")

smoke=$(for i in 1 2 3; do rm -rf "$tmp/smoke"; seconds "$BIN/snakemake" --cores all --configfile config/smoke.yaml --config "outdir=$tmp/smoke"; done | median)
rows+=("| smoke run, every paper, from scratch (downloads cached) | $(printf %.1f "$smoke") s | ≤ 60 s | median of 3 |")

for arg in "$@"; do
  case "$arg" in
    --tiny)
      t=$(seconds "$BIN/snakemake" --cores all --config "outdir=$tmp/tiny" -- timemcl)
      rows+=("| \`snakemake --cores all timemcl\`, tiny, from scratch | $(printf %.0f "$t") s | ≤ 240 s | once |")
      ;;
    --setup)
      git clone -q . "$tmp/clone"
      t=$(seconds make -C "$tmp/clone" venv)
      rows+=("| README set-up from a fresh clone (\`make venv\`, pip cache warm) | $(printf %.0f "$t") s | ≤ 300 s | once |")
      ;;
    *) echo "unknown argument $arg (use --tiny, --setup)" >&2; exit 2 ;;
  esac
done

{
  echo "| what | measured | target | runs |"
  echo "|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "$(nproc) cores, $(date -u +%Y-%m-%d), \`benchmarks/pipeline.sh $*\`."
} > "$OUT/pipeline.md"
cat "$OUT/pipeline.md"
"$BIN/python" -m methods.common.report pipeline-benchmark "$OUT/pipeline.md" benchmarks/README.md
