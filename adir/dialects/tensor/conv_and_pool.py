"""The conv_and_pool family (being written)."""

CONV_AND_POOL_OPS: list[type] = []
