"""adir: a compiler from neural networks to standalone C99 that trains them, built on xDSL."""

# The one place that holds adir's version: pyproject.toml reads it (`dynamic`), the drivers'
# `--version` prints it.
__version__ = "0.1.0"
