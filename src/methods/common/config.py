"""Configuration dataclasses built from plain dicts (Snakemake params), rejecting unknown keys."""

from __future__ import annotations

import dataclasses


def apply_override(section: dict, assignment: str, name: str) -> None:
    """`key.subkey=value` (the value parsed as YAML) into the config section `name`, in place; an unknown
    key is an error naming it (a command line's `--set`)."""
    import yaml

    path, _, raw = assignment.partition("=")
    keys = path.split(".")
    node = section
    for k in keys[:-1]:
        if k not in node:
            raise KeyError(f"--set {assignment}: {name} has no section {k!r}")
        node = node[k]
    if keys[-1] not in node:
        raise KeyError(f"--set {assignment}: {'.'.join([name, *keys[:-1]])} has no key {keys[-1]!r}")
    node[keys[-1]] = yaml.safe_load(raw)


def check_keys(cls, d: dict) -> None:
    """Raise ValueError naming any key of `d` that is not a field of dataclass `cls`."""
    allowed = [f.name for f in dataclasses.fields(cls)]
    for key in d:
        if key not in allowed:
            raise ValueError(f"{cls.__name__}: unknown key {key!r}; allowed keys: {', '.join(allowed)}")


def _strict_validator(schema: dict, registry):
    """The schema's validator class with strict types: `integer` rejects 1.0, `number` rejects NaN and inf
    (YAML's .nan / .inf pass plain JSON-schema number checks and would crash deep inside a job)."""
    import math

    import jsonschema

    base = jsonschema.validators.validator_for(schema)

    def is_integer(_, x):
        return isinstance(x, int) and not isinstance(x, bool)

    def is_number(_, x):
        return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)

    def properties_with_defaults(validator, properties, instance, schema):
        # as Snakemake's validate(set_default=True): a key left out takes the schema's default
        if isinstance(instance, dict):
            for key, sub in properties.items():
                if isinstance(sub, dict) and "default" in sub:
                    instance.setdefault(key, sub["default"])
        yield from base.VALIDATORS["properties"](validator, properties, instance, schema)

    def ordered_pair(validator, wanted, instance, schema):
        # `orderedPair: true` marks a [low, high] range: a reversed pair is an error naming the key
        if (
            wanted
            and isinstance(instance, list)
            and len(instance) == 2
            and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in instance)
            and instance[0] > instance[1]
        ):
            yield jsonschema.ValidationError(
                f"{instance} is not a range [low, high]: low {instance[0]} exceeds high {instance[1]}; swap them"
            )

    checker = base.TYPE_CHECKER.redefine_many({"integer": is_integer, "number": is_number})
    strict = jsonschema.validators.extend(
        base, validators={"properties": properties_with_defaults, "orderedPair": ordered_pair}, type_checker=checker
    )
    return strict(schema, registry=registry)


def validate_config(config: dict, schema_path) -> None:
    """Validate the workflow config against workflow/schemas/config.schema.yaml (and the per-paper files
    it references), filling in the schema's defaults, and raise ValueError naming each offending key
    and what it must be."""
    from pathlib import Path

    import yaml
    from referencing import Registry
    from referencing.jsonschema import specification_with

    schema_path = Path(schema_path)
    schema = yaml.safe_load(schema_path.read_text())
    spec = specification_with(schema["$schema"])

    def retrieve(uri: str):
        # without its own `$schema`, a referenced file is checked by the strict validator too
        part = yaml.safe_load((schema_path.parent / uri).read_text())
        part.pop("$schema", None)
        return spec.create_resource(part)

    validator = _strict_validator(schema, Registry(retrieve=retrieve))
    errors = sorted(validator.iter_errors(config), key=lambda e: [str(p) for p in e.absolute_path])
    if errors:
        lines = []
        for e in errors[:10]:
            key = ".".join(str(p) for p in e.absolute_path) or "(top level)"
            hint = ""
            if e.validator == "type" and e.validator_value in ("number", "integer"):
                hint = " (NaN and inf are not allowed; an integer is written without a decimal point)"
            lines.append(f"config key '{key}': {e.message}{hint}")
        more = f"\n... and {len(errors) - 10} more" if len(errors) > 10 else ""
        raise ValueError(
            "invalid configuration (config.yaml and overlays, checked against "
            f"{schema_path.name}):\n" + "\n".join(lines) + more
        )
