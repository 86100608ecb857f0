"""The size limits adir enforces, and why each is what it is.

The parser (`adir/context.py`), `plan-memory` and the C backend each check one of them at
their entry, so a model past a limit gets a located error instead of a `MemoryError`, C that
silently wraps a size to a negative `int32_t`, or a link-time relocation failure.
"""

from __future__ import annotations

# The reference kernels take every dimension, count, stride and window size as `int32_t`
# (adir/backends/c/runtime/*.h), so each must be at most this.
INT32_MAX = 2**31 - 1

# The most bytes of static data (the arena, the parameters and optimizer state, the constant
# tables) the C backend prints for a host build. On x86-64 the default (small) code model, PIE
# or not, reaches static data with 32-bit signed displacements, so everything static must lie
# within 2 GiB of the code: more fails at link time ("relocation truncated to fit"). AArch64's
# small model reaches 4 GiB, so 2 GiB holds there too; on a 32-bit target no object may be
# larger than PTRDIFF_MAX = 2^31 - 1 (GCC refuses the array). One bound serves them all. A
# Cortex-M build (--c-board) is held to the board's RAM budget and flash instead.
MAX_STATIC_BYTES = 2**31 - 1

# The most bytes a dense literal may describe (`dense<1.0> : tensor<...>`). Past this it could
# not be printed as C (MAX_STATIC_BYTES), and the interpreter would need as much memory again;
# the parser checks the type before it builds any data.
MAX_DENSE_BYTES = MAX_STATIC_BYTES


def human_bytes(size: int) -> str:
    """`size` bytes for a message: `2.0 GiB`, `236.0 KiB`, `100 bytes`."""
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} bytes"


def parse_size(text: str) -> int:
    """Bytes of a size written `262144` (bytes), `256K` (KiB, 1024 bytes) or `1M` (MiB), as
    `--c-ram`, `--sram` and `plan-memory{sram=...}` take it; a ValueError says what is wrong."""
    units = {"K": 2**10, "M": 2**20}
    size = text.strip().upper()
    scale = units.get(size[-1:], 1)
    digits = size[:-1] if size[-1:] in units else size
    if not digits.isdigit() or int(digits) == 0:
        raise ValueError(f"{text!r} is not a size in bytes (e.g. 262144, 256K, 1M)")
    return int(digits) * scale
