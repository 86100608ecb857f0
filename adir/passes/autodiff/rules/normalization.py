"""VJP rules of the normalization family (being written)."""
