"""The reductions family (to be filled in)."""

REDUCTIONS_OPS: list[type] = []
