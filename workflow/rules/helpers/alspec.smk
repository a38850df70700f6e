# Config checks and input functions used by workflow/rules/alspec.smk (the rules live there).

AL = config["alspec"]
AL_OUT = paper_dir("alspec")
AL_TASKS = ["local", "recall", "copy"]
if 0.10 not in [round(x, 4) for x in AL["lams"]]:
    raise ValueError(
        f"config alspec.lams: {AL['lams']} must contain 0.10 (the paper's default λ; the claims read it)"
    )
if (
    AL["lm"]["context"] > config["lm"]["model"]["max_position_embeddings"]
    and LM["source"] == "train"
):
    raise ValueError(
        f"config alspec.lm.context ({AL['lm']['context']}) exceeds lm.model.max_position_embeddings "
        f"({config['lm']['model']['max_position_embeddings']}); lower alspec.lm.context"
    )


def al_task_metrics():
    return expand(f"{AL_OUT}/metrics/{{task}}.json", task=AL_TASKS)


def al_figures():
    return [f"{AL_OUT}/figures/quality.png", f"{AL_OUT}/figures/timing.png"]
