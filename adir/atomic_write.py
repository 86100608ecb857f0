"""Writing a file so that a failure never leaves it half-written: the content goes to a
temporary file in the same directory, which is renamed over the target only when complete."""

from __future__ import annotations

import os
import tempfile


def replace_file(path: str, content: str | bytes) -> None:
    """Replace `path` with `content`; on any failure (an OSError, or an interruption) the
    previous file is untouched and no temporary file is left."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, temporary = tempfile.mkstemp(dir=directory, prefix=".adir-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb" if isinstance(content, bytes) else "w") as stream:
            stream.write(content)
        os.chmod(temporary, _mode_for(path))
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def _mode_for(path: str) -> int:
    """The permissions a plain `open(path, "w")` would give: the existing file's, or 0666 less
    the umask (mkstemp's own 0600 would surprise)."""
    try:
        return os.stat(path).st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
