"""The losses family (to be filled in)."""

LOSSES_OPS: list[type] = []
