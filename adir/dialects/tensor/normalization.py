"""The normalization family (being written)."""

NORMALIZATION_OPS: list[type] = []
