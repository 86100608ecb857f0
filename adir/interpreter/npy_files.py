"""Reading a `.npy` array that a user names (adir-run's arguments, quantize-int8's calibration
data), with one message per way the file can be wrong rather than numpy's exceptions."""

from __future__ import annotations

import numpy as np


def read_npy(path: str) -> np.ndarray:
    """The array in the `.npy` file at `path`; a ValueError says why there is none (missing,
    unreadable, empty, not a .npy file, truncated, objects that need pickle,
    a header that declares more than memory holds)."""
    try:
        with open(path, "rb") as stream:
            try:
                np.lib.format.read_magic(stream)
            except (ValueError, EOFError) as error:
                empty = stream.tell() == 0 and not stream.read(1)
                raise ValueError(
                    "the file is empty, not a .npy array"
                    if empty
                    else "not a .npy file (it does not start with NumPy's magic string)"
                ) from error
            stream.seek(0)
            try:
                return np.lib.format.read_array(stream, allow_pickle=False)
            except (ValueError, EOFError, MemoryError) as error:
                reason = str(error).strip().splitlines()[0] if str(error).strip() else ""
                raise ValueError(
                    f"cannot load the array: {reason or type(error).__name__}"
                ) from error
    except OSError as error:
        raise ValueError(f"cannot read the file: {error.strerror or error}") from error
