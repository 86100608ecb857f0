"""The IR: the `adir` tensor dialect (and, later, the kernel-level buffer dialect)."""
