"""The activations family (to be filled in)."""

ACTIVATIONS_OPS: list[type] = []
