"""Golden checks: the outputs a refactor must not change, pinned byte for byte (docs/golden.md)."""
