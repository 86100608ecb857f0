"""VJP rules of the activations family (being written)."""
