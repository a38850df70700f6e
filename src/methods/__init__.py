"""icml25-repro method library: one package per paper slug, shared pieces in `methods.common`."""
