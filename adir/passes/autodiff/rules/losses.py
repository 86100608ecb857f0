"""VJP rules of the losses family (being written)."""
