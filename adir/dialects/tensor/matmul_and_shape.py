"""The matmul_and_shape family (to be filled in)."""

MATMUL_AND_SHAPE_OPS: list[type] = []
