"""Writing the tools' outputs, the one place that does it: a failed run never leaves a
half-written file, and a path is written the way the shell's `>` writes it, never replaced by
something else.

`write_file(path, content)`, for `-o`, `--save`, `svg=`:
- `-` is stdout.
- An absent path or a regular file is replaced atomically: the content goes to a temporary file
  in the same directory, renamed over the target only when complete (the old file keeps its
  permissions; nothing is left behind on a failure).
- A symbolic link is followed: what it points to is written by these rules and the link stays
  (a link to `/proc/self/fd/1` writes stdout).
- A character device (`/dev/null`, `/dev/full`, a terminal), a FIFO or anything else that is not
  a directory is written in place. Renaming over it would replace the device node itself, for
  every user of the machine, and a FIFO's reader would get nothing.

`write_directory(directory, files)`, for `--emit-c`, is all or nothing: every name (a file
name, or a path into a folder of `directory`, e.g. `src/model.c`) must be absent or a regular
file in `directory` (itself followed if a link), every file is written to
a temporary directory inside it (beside it when it does not exist yet) and moved in only when
all were written. A file whose content is unchanged is not touched (a build does not redo it).

A directory's files change from one emit to the next (another `--c-kernels`, a kernel family
split in two, a newer adir), and a build that compiles `DIR/*.c` would link a file an earlier
emit wrote beside its successor. So `write_directory` also writes a manifest,
`adir-files.sha256` (one `<sha256>  <name>` line per file, what `sha256sum -c` reads), and,
once the new files are in place, removes the files the previous manifest names that this emit
does not write, but only those whose content is still what was written then: a file the user
edited is kept, and said.
A directory without a manifest (a user's, or one written by an adir before it) loses nothing.
It returns what it did (`DirectoryUpdate`): the existing files whose content it changed, the
stale ones it removed and the edited ones it kept, so that the tool can say so.

Every failure is an `OutputError`: the path that failed (a file of the directory, not the
directory) and the system's reason (`No space left on device`, `Broken pipe`, ...).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field

STDOUT = "-"
MANIFEST = "adir-files.sha256"


class OutputError(Exception):
    """An output that could not be written: `path: cannot write <what>: <reason>`."""

    def __init__(self, path: str, what: str, reason: str):
        self.path = path
        self.message = f"cannot write {what}: {reason}"
        super().__init__(f"{path}: {self.message}")


def write_file(path: str, content: str | bytes, what: str = "the output") -> None:
    """Write `content` to `path` by the rules of the module docstring, or raise `OutputError`
    with the target untouched."""
    if path == STDOUT:
        write_stdout(content, what)
        return
    data = _bytes(content)
    try:
        try:
            target = os.stat(path)  # follows symbolic links
        except FileNotFoundError:  # absent, or a link to an absent file: created
            target = None
        if target is None or stat.S_ISREG(target.st_mode):
            _replace(os.path.realpath(path), data)
        elif stat.S_ISDIR(target.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
        else:
            with open(path, "wb") as stream:
                stream.write(data)
    except OSError as error:
        raise OutputError(path, what, _reason(error)) from error


def write_stdout(content: str | bytes, what: str = "the output") -> None:
    """Write `content` to stdout and flush it, so that a full disk, a closed pipe or a closed
    stdout is an `OutputError` now, not an error Python prints at exit."""
    stream = sys.stdout
    if stream is None:  # what Python makes of a closed file descriptor 1
        raise OutputError("stdout", what, os.strerror(errno.EBADF))
    try:
        stream.flush()
        try:
            fd = stream.fileno()
        except (OSError, ValueError):  # a stream in memory (a test's capture)
            if isinstance(content, bytes):
                stream.buffer.write(content)
            else:
                stream.write(content)
            stream.flush()
        else:
            _write_all(fd, _bytes(content))
    except OSError as error:
        _discard_stdout()
        raise OutputError("stdout", what, _reason(error)) from error


def _write_all(fd: int, data: bytes) -> None:
    """Write `data` to a file descriptor, looping over partial writes: the one after a reader
    closed its end of a pipe is `EPIPE` (Python's buffered stdout can end such a write early
    without an error)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def flush_stdout() -> None:
    """Flush what was printed to stdout; a write error is an `OutputError`."""
    if sys.stdout is None:
        return
    try:
        sys.stdout.flush()
    except OSError as error:
        _discard_stdout()
        raise OutputError("stdout", "the output", _reason(error)) from error


@dataclass
class DirectoryUpdate:
    """What `write_directory` did to the files already in the directory (names relative to
    it): `replaced` had other content, `removed` were written by the previous emit and are not
    part of this one, `kept` were too but were edited since, so they stay."""

    replaced: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)


def write_directory(
    directory: str, files: Mapping[str, str | bytes], what: str = "the C output"
) -> DirectoryUpdate:
    """Write `files` (by name) and their manifest into `directory`, all or none, and remove
    the previous emit's files that this one does not write (see the module docstring)."""
    contents = {name: _bytes(content) for name, content in files.items()}
    contents[MANIFEST] = _manifest(contents)
    try:
        info = os.stat(directory)
    except FileNotFoundError:
        _create_directory(directory, contents, what)
        return DirectoryUpdate()
    except OSError as error:
        raise OutputError(directory, what, _reason(error)) from error
    if not stat.S_ISDIR(info.st_mode):
        raise OutputError(directory, what, os.strerror(errno.ENOTDIR))
    previous = _read_manifest(directory)
    changed, unchanged = _existing_files(directory, contents, what)
    staging = _staging_directory(directory, directory, what)
    try:
        for name, data in contents.items():
            if name not in unchanged:
                target = os.path.join(directory, name)
                _write_new(os.path.join(staging, name), data, target, what)
        for folder in sorted({os.path.dirname(name) for name in contents} - {""}):
            try:  # a name's folder (`src/model.c`), once every file was written
                os.makedirs(os.path.join(directory, folder), exist_ok=True)
            except OSError as error:
                raise OutputError(os.path.join(directory, folder), what, _reason(error)) from error
        for name in contents:
            if name not in unchanged:
                target = os.path.join(directory, name)
                try:
                    os.replace(os.path.join(staging, name), target)
                except OSError as error:
                    raise OutputError(target, what, _reason(error)) from error
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    update = DirectoryUpdate(replaced=[name for name in changed if name != MANIFEST])
    for name, digest in previous.items():
        if name not in contents:
            _remove_stale(directory, name, digest, update)
    return update


def _manifest(contents: Mapping[str, bytes]) -> bytes:
    lines = [f"{hashlib.sha256(data).hexdigest()}  {name}\n" for name, data in contents.items()]
    return "".join(sorted(lines, key=lambda line: line[66:])).encode("utf-8")


def _read_manifest(directory: str) -> dict[str, str]:
    """The previous emit's files (name to sha256) from its manifest; none when there is no
    manifest or it cannot be read. A line that is not a digest and a plain relative name (an
    absolute path, `..`, a manifest edited by hand) is ignored: only the emit's own files may
    be removed."""
    try:
        with open(os.path.join(directory, MANIFEST), encoding="utf-8") as stream:
            lines = stream.read().splitlines()
    except (OSError, UnicodeDecodeError):
        return {}
    files = {}
    for line in lines:
        digest, separator, name = line.partition("  ")
        parts = name.split("/")
        if (
            separator
            and len(digest) == 64
            and all(c in "0123456789abcdef" for c in digest)
            and all(part not in ("", ".", "..") for part in parts)
            and name != MANIFEST
        ):
            files[name] = digest
    return files


def _remove_stale(directory: str, name: str, digest: str, update: DirectoryUpdate) -> None:
    """Remove `name`, a file of the previous emit that this one does not write, if it is still
    a regular file with the content that emit wrote (then its folder too, once empty); a file
    edited since is kept. Failing to remove it is not an error: the new files are in place."""
    path = os.path.join(directory, name)
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return
        with open(path, "rb") as stream:
            if hashlib.sha256(stream.read()).hexdigest() != digest:
                update.kept.append(name)
                return
        os.unlink(path)
    except OSError:
        return
    update.removed.append(name)
    folder = os.path.dirname(name)
    while folder:
        try:
            os.rmdir(os.path.join(directory, folder))
        except OSError:  # not empty (or not ours to remove): stop there
            return
        folder = os.path.dirname(folder)


def _existing_files(
    directory: str, contents: Mapping[str, bytes], what: str
) -> tuple[list[str], set[str]]:
    """The names whose existing file differs and those whose file already holds the content;
    an `OutputError` for a name that is not a regular file (nothing is written then)."""
    changed, unchanged = [], set()
    for name, data in contents.items():
        path = os.path.join(directory, name)
        try:
            info = os.lstat(path)
            if stat.S_ISDIR(info.st_mode):
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
            if not stat.S_ISREG(info.st_mode):
                raise OutputError(path, what, "not a regular file (only those are replaced)")
            with open(path, "rb") as stream:
                old = stream.read()
        except FileNotFoundError:
            continue
        except OSError as error:
            raise OutputError(path, what, _reason(error)) from error
        if old == data:
            unchanged.add(name)
        else:
            changed.append(name)
    return changed, unchanged


def _create_directory(directory: str, contents: Mapping[str, bytes], what: str) -> None:
    """Build a directory that does not exist yet beside where it goes and rename it there; on
    a failure remove the parents this made too. A dangling link is followed, as for a file."""
    place = os.path.realpath(directory)
    parent = os.path.dirname(place)
    made = []
    ancestor = parent
    while not os.path.lexists(ancestor):
        made.append(ancestor)
        ancestor = os.path.dirname(ancestor)
    try:
        os.makedirs(parent, exist_ok=True)
    except OSError as error:
        raise OutputError(directory, what, _reason(error)) from error
    staging = ""
    try:
        staging = _staging_directory(parent, directory, what)
        for name, data in contents.items():
            target = os.path.join(directory, name)
            _write_new(os.path.join(staging, name), data, target, what)
        try:
            os.chmod(staging, 0o777 & ~_umask())
            os.rename(staging, place)
        except OSError as error:
            raise OutputError(directory, what, _reason(error)) from error
    except BaseException:
        if staging:
            shutil.rmtree(staging, ignore_errors=True)
        for path in made:  # innermost first
            with contextlib.suppress(OSError):
                os.rmdir(path)
        raise


def _staging_directory(parent: str, target: str, what: str) -> str:
    try:
        return tempfile.mkdtemp(dir=parent, prefix=".adir-")
    except OSError as error:
        raise OutputError(target, what, _reason(error)) from error


def _write_new(path: str, data: bytes, target: str, what: str) -> None:
    """Create `path` (and its folders in the staging directory) with `data`, to be renamed to
    `target`; a failure is reported under `target`."""
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "xb") as stream:
            stream.write(data)
        _take_over(path, target)
    except OSError as error:
        raise OutputError(target, what, _reason(error)) from error


def _replace(path: str, data: bytes) -> None:
    """Replace the regular file `path` (or create it) with `data`, atomically."""
    directory = os.path.dirname(path)
    fd, temporary = tempfile.mkstemp(dir=directory, prefix=".adir-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
        _take_over(temporary, path)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def _discard_stdout() -> None:
    """After a failed write to stdout, point file descriptor 1 at the null device, so that
    Python's flush at exit does not fail a second time with "Exception ignored"."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)


def _bytes(content: str | bytes) -> bytes:
    return content if isinstance(content, bytes) else content.encode("utf-8")


def _reason(error: OSError) -> str:
    return error.strerror or str(error)


def _take_over(new: str, old: str) -> None:
    """Give the file `new`, about to be renamed over `old`, what writing `old` in place would
    keep: its permissions and, where allowed, its owner and group. A new file gets what a plain
    `open(path, "w")` gives, 0666 less the umask (mkstemp's own 0600 would surprise)."""
    try:
        existing = os.stat(old)
    except FileNotFoundError:
        os.chmod(new, 0o666 & ~_umask())
        return
    with contextlib.suppress(PermissionError):  # only root may give a file away
        os.chown(new, existing.st_uid, existing.st_gid)
    os.chmod(new, stat.S_IMODE(existing.st_mode))


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask
