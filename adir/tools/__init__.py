"""The command-line tools: `adir-opt` (the driver) and `adir-run` (the interpreter)."""
