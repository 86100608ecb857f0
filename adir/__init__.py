"""adir: a compiler from neural networks to standalone C99 that trains them, built on xDSL."""
