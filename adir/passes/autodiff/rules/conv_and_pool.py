"""VJP rules of the conv_and_pool family (being written)."""
