"""Where the tools write (`adir.output_files`): `-o` writes a path as the shell's `>` does, never
replacing a device, a FIFO or a symbolic link by a regular file; `--emit-c` is all or nothing;
a write error (a full disk, a closed pipe, a closed stdout) is a diagnostic with exit code 1.

Issue 17: `-o fakenull` turned a device node into a regular file (as root, the benchmark test's
`-o /dev/null` did that to the machine's /dev/null); a FIFO's reader got nothing; `-o -` wrote a
file named `-`; `> /dev/full` and a closed stdout were internal errors (exit 2); `--emit-c` with
a directory in the way overwrote the user's files before failing. Devices are made in tmp_path
(`mknod`, root only): a regression must never be able to damage the real ones.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from adir.output_files import DirectoryUpdate, OutputError, write_directory

ROOT = Path(__file__).parents[2]
EXAMPLE = ROOT / "examples" / "mnist_mlp.mlir"
ADIR_OPT = [sys.executable, "-m", "adir.tools.adir_opt"]
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="mknod needs root")


def adir_opt(*args: str, cwd: Path = ROOT, **kwargs) -> subprocess.CompletedProcess[str]:
    kwargs.setdefault("capture_output", True)
    return subprocess.run([*ADIR_OPT, *args], text=True, cwd=cwd, check=False, **kwargs)


@pytest.fixture(scope="module")
def example_ir() -> str:
    """What `adir-opt examples/mnist_mlp.mlir` prints: what every `-o` below must receive."""
    run = adir_opt(str(EXAMPLE))
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("builtin.module {")
    return run.stdout


def make_device(path: Path, minor: int) -> None:
    """A character device like /dev/null (1, 3) or /dev/full (1, 7), at `path`."""
    os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, minor))


@needs_root
def test_o_writes_a_null_device_in_place(tmp_path: Path) -> None:
    null = tmp_path / "fakenull"
    make_device(null, 3)
    run = adir_opt(str(EXAMPLE), "-o", str(null))
    assert run.returncode == 0, run.stderr
    assert stat.S_ISCHR(os.lstat(null).st_mode)  # still the device, not a regular file
    assert os.listdir(tmp_path) == ["fakenull"]  # and no temporary file left beside it


@needs_root
def test_o_on_a_full_device_is_a_diagnostic(tmp_path: Path) -> None:
    full = tmp_path / "fakefull"
    make_device(full, 7)
    run = adir_opt(str(EXAMPLE), "-o", str(full))
    assert run.returncode == 1
    assert run.stderr == f"{full}: error: cannot write the output: No space left on device\n"
    assert stat.S_ISCHR(os.lstat(full).st_mode)


def test_o_writes_into_a_fifo(tmp_path: Path, example_ir: str) -> None:
    """The reader gets the whole output. A second descriptor open for reading and writing
    lets the reader open without blocking; closing it ends the stream, also when adir-opt
    never opened the FIFO (the old rename), so the test cannot hang."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    keep_open = os.open(fifo, os.O_RDWR)
    received = bytearray()

    def read_all() -> None:
        with open(fifo, "rb") as stream:
            while chunk := stream.read(65536):
                received.extend(chunk)

    reader = threading.Thread(target=read_all, daemon=True)
    reader.start()
    try:
        run = adir_opt(str(EXAMPLE), "-o", str(fifo), timeout=120)
    finally:
        os.close(keep_open)
    reader.join(timeout=30)
    assert run.returncode == 0, run.stderr
    assert received.decode() == example_ir
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_o_follows_a_symlink_and_keeps_it(tmp_path: Path, example_ir: str) -> None:
    target = tmp_path / "target.mlir"
    target.write_text("old\n")
    target.chmod(0o640)
    link = tmp_path / "link.mlir"
    link.symlink_to(target.name)
    run = adir_opt(str(EXAMPLE), "-o", str(link))
    assert run.returncode == 0, run.stderr
    assert link.is_symlink() and os.readlink(link) == "target.mlir"
    assert target.read_text() == example_ir
    assert stat.S_IMODE(target.stat().st_mode) == 0o640  # the replaced file's permissions
    assert sorted(os.listdir(tmp_path)) == ["link.mlir", "target.mlir"]


@needs_root
def test_o_keeps_the_owner_of_the_file_it_replaces(tmp_path: Path) -> None:
    """Root writing a user's file (as `>` would) leaves it the user's, not root's."""
    out = tmp_path / "out.mlir"
    out.write_text("old\n")
    os.chown(out, 12345, 23456)
    run = adir_opt(str(EXAMPLE), "-o", str(out))
    assert run.returncode == 0, run.stderr
    assert (out.stat().st_uid, out.stat().st_gid) == (12345, 23456)


def test_o_on_a_symlink_to_stdout_prints(tmp_path: Path, example_ir: str) -> None:
    """Issue 17: the link to /proc/self/fd/1 became a mode-0600 file and nothing was printed."""
    link = tmp_path / "stdout-link"
    link.symlink_to("/proc/self/fd/1")
    run = adir_opt(str(EXAMPLE), "-o", str(link))
    assert run.returncode == 0, run.stderr
    assert run.stdout == example_ir
    assert link.is_symlink()


def test_o_dash_is_stdout(tmp_path: Path, example_ir: str) -> None:
    run = adir_opt(str(EXAMPLE), "-o", "-", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout == example_ir
    assert os.listdir(tmp_path) == []  # no file named "-"


def test_o_on_a_directory_is_a_diagnostic(tmp_path: Path) -> None:
    run = adir_opt(str(EXAMPLE), "-o", str(tmp_path))
    assert run.returncode == 1
    assert run.stderr == f"{tmp_path}: error: cannot write the output: Is a directory\n"
    assert os.listdir(tmp_path) == []


def test_o_leaves_the_previous_file_when_the_run_fails(tmp_path: Path) -> None:
    out = tmp_path / "out.mlir"
    out.write_text("previous\n")
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @f() {\n  %x = adir.nonsense\n}\n")
    run = adir_opt(str(bad), "-o", str(out))
    assert run.returncode == 1
    assert out.read_text() == "previous\n"
    assert sorted(os.listdir(tmp_path)) == ["bad.mlir", "out.mlir"]


def shell(command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["sh", "-c", command], capture_output=True, text=True, cwd=ROOT, check=False
    )


# adir-opt prints the IR; adir-run prints the loss (it was an internal error too, exit 2).
PRINTING_COMMANDS = {
    "adir-opt": [*ADIR_OPT, str(EXAMPLE)],
    "adir-run": [
        *(sys.executable, "-m", "adir.tools.adir_run", str(EXAMPLE)),
        *("--func", "loss", "--random-inputs", "0"),
    ],
}


@pytest.mark.parametrize("tool", PRINTING_COMMANDS)
def test_stdout_closed_is_a_diagnostic(tool: str) -> None:
    """`>&-` closes file descriptor 1 (stdout=DEVNULL would leave it open)."""
    run = shell(f"{shlex.join(PRINTING_COMMANDS[tool])} >&-")
    assert run.returncode == 1
    assert run.stderr == "stdout: error: cannot write the output: Bad file descriptor\n"


@pytest.mark.skipif(
    not (os.path.exists("/dev/full") and stat.S_ISCHR(os.stat("/dev/full").st_mode)),
    reason="no /dev/full",
)
@pytest.mark.parametrize("tool", PRINTING_COMMANDS)
def test_stdout_on_a_full_device_is_a_diagnostic(tool: str) -> None:
    """The shell opens /dev/full; the tool only writes to its stdout."""
    run = shell(f"{shlex.join(PRINTING_COMMANDS[tool])} > /dev/full")
    assert run.returncode == 1
    assert run.stderr == "stdout: error: cannot write the output: No space left on device\n"


def test_stdout_to_a_closed_pipe_is_a_diagnostic() -> None:
    """The reading end is closed before adir-opt writes (it takes most of a second to start):
    the write fails with EPIPE, which is reported once, with no "Exception ignored" after it."""
    process = subprocess.Popen(
        [*ADIR_OPT, str(EXAMPLE)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=120) == 1
    assert stderr == "stdout: error: cannot write the output: Broken pipe\n"


@needs_root
def test_adir_run_save_writes_a_null_device_in_place(tmp_path: Path) -> None:
    null = tmp_path / "fakenull"
    make_device(null, 3)
    command = [sys.executable, "-m", "adir.tools.adir_run", str(EXAMPLE), "--func", "loss"]
    command += ["--random-inputs", "0", "--save", str(null)]
    run = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)
    assert run.returncode == 0, run.stderr
    assert stat.S_ISCHR(os.lstat(null).st_mode)


def snapshot(directory: Path) -> dict[str, bytes | None]:
    """Every entry below `directory`: a file's bytes, None for a directory."""
    return {
        str(path.relative_to(directory)): None if path.is_dir() else path.read_bytes()
        for path in sorted(directory.rglob("*"))
    }


def test_emit_c_with_a_directory_in_the_way_changes_nothing(tmp_path: Path) -> None:
    """Issue 17's case: `out/adir_init.h` is a directory and `out/model.c` the user's own.
    The run names the file in the way and leaves every byte of `out` as it was."""
    out = tmp_path / "out"
    (out / "adir_init.h").mkdir(parents=True)
    (out / "model.c").write_bytes(b"/* the user's own model.c */\n")
    before = snapshot(out)
    run = adir_opt("--optimizer=sgd", f"--emit-c={out}", str(EXAMPLE))
    assert run.returncode == 1
    assert run.stderr == f"{out}/adir_init.h: error: cannot write the C output: Is a directory\n"
    assert snapshot(out) == before


def test_emit_c_refuses_to_replace_a_symlink(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "elsewhere.h").write_text("kept\n")
    (out / "model.h").symlink_to(tmp_path / "elsewhere.h")
    run = adir_opt("--optimizer=sgd", f"--emit-c={out}", "--c-prefix=", str(EXAMPLE))
    assert run.returncode == 1
    assert run.stderr.startswith(f"{out}/model.h: error: cannot write the C output: not a regular")
    assert os.listdir(out) == ["model.h"] and (out / "model.h").is_symlink()


def test_emit_c_names_each_existing_file_it_replaced(tmp_path: Path) -> None:
    """A first run creates `out` (no note); a second, identical one replaces nothing (no note,
    the files keep their modification time); after the user edits model.c, one note names it."""
    out = tmp_path / "out"
    command = ["--optimizer=sgd", f"--emit-c={out}", "--c-prefix=", str(EXAMPLE)]
    first = adir_opt(*command)
    assert first.returncode == 0 and first.stderr == ""
    files = snapshot(out)
    assert {"model.c", "model.h", "adir_init.h"} <= set(files)
    assert not any(name.startswith(".adir-") for name in os.listdir(out))
    os.utime(out / "model.h", (1, 1))
    again = adir_opt(*command)
    assert again.returncode == 0 and again.stderr == ""
    assert os.stat(out / "model.h").st_mtime == 1  # not rewritten
    (out / "model.c").write_text("/* edited */\n")
    third = adir_opt(*command)
    assert third.returncode == 0
    note = f"{out}/model.c: note: replaced the existing file (its content differed)\n"
    assert third.stderr == note
    assert snapshot(out) == files


def test_emit_c_into_a_path_under_a_file_is_a_diagnostic(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x\n")
    run = adir_opt("--optimizer=sgd", f"--emit-c={tmp_path}/file/out", str(EXAMPLE))
    assert run.returncode == 1
    assert run.stderr == f"{tmp_path}/file/out: error: cannot write the C output: Not a directory\n"
    assert os.listdir(tmp_path) == ["file"]


def test_a_directory_that_fails_half_way_is_not_created(tmp_path: Path) -> None:
    """A new `--emit-c` directory is built beside its place and renamed there: a file that
    cannot be written (here a name longer than a file system's 255 bytes) leaves neither it nor
    the parents it needed."""
    target = tmp_path / "a" / "b" / "out"
    long_name = "k" * 300 + ".c"
    with pytest.raises(OutputError) as caught:
        write_directory(str(target), {"model.c": "int x;\n", f"src/{long_name}": "int y;\n"})
    assert caught.value.path == f"{target}/src/{long_name}"
    assert caught.value.message == "cannot write the C output: File name too long"
    assert os.listdir(tmp_path) == []


def test_names_in_folders_are_written_and_a_file_in_the_way_changes_nothing(
    tmp_path: Path,
) -> None:
    """`src/model.c` (an Arduino library's layout) creates `src/` in a new or an existing
    directory; where `src` is a file of the user's, the run names it and writes nothing."""
    files = {"library.properties": "name=net\n", "src/model.c": "int x;\n"}
    write_directory(str(tmp_path / "new"), files)
    assert (tmp_path / "new" / "src" / "model.c").read_text() == "int x;\n"
    existing = tmp_path / "existing"
    existing.mkdir()
    assert write_directory(str(existing), files) == DirectoryUpdate()
    assert sorted(os.listdir(existing)) == ["adir-files.sha256", "library.properties", "src"]
    blocked = tmp_path / "blocked"
    blocked.mkdir()
    (blocked / "src").write_text("the user's own\n")
    with pytest.raises(OutputError) as caught:
        write_directory(str(blocked), files)
    assert caught.value.path == f"{blocked}/src/model.c"
    assert os.listdir(blocked) == ["src"] and (blocked / "src").read_text() == "the user's own\n"


def test_the_manifest_is_what_sha256sum_checks(tmp_path: Path) -> None:
    """`adir-files.sha256` lists every file of the emit, sorted by name, in `sha256sum`'s
    format; `sha256sum -c` run in the directory accepts it (the digests of the exact bytes)."""
    files = {"model.c": "int x;\n", "src/k.c": "int y;\n"}
    write_directory(str(tmp_path / "out"), files)
    manifest = (tmp_path / "out" / "adir-files.sha256").read_text()
    x, y = (hashlib.sha256(text).hexdigest() for text in (b"int x;\n", b"int y;\n"))
    assert manifest == f"{x}  model.c\n{y}  src/k.c\n"
    check = subprocess.run(
        ["sha256sum", "-c", "adir-files.sha256"], cwd=tmp_path / "out", capture_output=True
    )
    assert check.returncode == 0, check.stdout


def test_a_file_the_previous_emit_wrote_and_this_one_does_not_is_removed(tmp_path: Path) -> None:
    """A kernel file of the first emit (`src/old.c`, `gone.c`) that the second no longer writes
    would be linked beside its successor by a build of `DIR/*.c`: it goes, and so does its folder
    once empty; the user's own file, never in a manifest, stays."""
    out = tmp_path / "out"
    write_directory(str(out), {"model.c": "a\n", "gone.c": "b\n", "src/old.c": "c\n"})
    (out / "notes.txt").write_text("the user's\n")
    update = write_directory(str(out), {"model.c": "a2\n", "new.c": "d\n"})
    assert update == DirectoryUpdate(replaced=["model.c"], removed=["gone.c", "src/old.c"])
    assert sorted(os.listdir(out)) == ["adir-files.sha256", "model.c", "new.c", "notes.txt"]


def test_a_stale_file_the_user_edited_is_kept_and_said(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_directory(str(out), {"model.c": "a\n", "extra.c": "b\n"})
    (out / "extra.c").write_text("b, edited\n")
    update = write_directory(str(out), {"model.c": "a\n"})
    assert update == DirectoryUpdate(kept=["extra.c"])
    assert (out / "extra.c").read_text() == "b, edited\n"
    # the new manifest no longer names it: a third emit leaves it alone and says nothing
    assert write_directory(str(out), {"model.c": "a\n"}) == DirectoryUpdate()


def test_a_manifest_naming_files_outside_the_directory_removes_nothing(tmp_path: Path) -> None:
    """Only plain relative names are the emit's own: a manifest edited to name `../victim.c`,
    an absolute path or the manifest itself (with their true digests) removes none of them."""
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim.c"
    victim.write_text("v\n")
    digest = hashlib.sha256(b"v\n").hexdigest()
    (out / "adir-files.sha256").write_text(
        f"{digest}  ../victim.c\n{digest}  {victim}\n{digest}  ./victim.c\n"
    )
    (out / "victim.c").write_text("v\n")
    assert write_directory(str(out), {"model.c": "a\n"}) == DirectoryUpdate(replaced=[])
    assert victim.read_text() == "v\n" and (out / "victim.c").read_text() == "v\n"


def test_emit_c_without_c_main_removes_the_main_an_earlier_emit_wrote(tmp_path: Path) -> None:
    """The case that bit the demo: DIR/*.c built after a second emit with other options. Here
    the first emit has `--c-main`, the second not: main.c goes, with a note naming it (and
    CMakeLists.txt, which built the program, is replaced)."""
    out = tmp_path / "out"
    command = ["--optimizer=sgd", f"--emit-c={out}", "--c-prefix=", str(EXAMPLE)]
    first = adir_opt(*command, "--predict", "--c-main")
    assert first.returncode == 0 and (out / "main.c").exists()
    second = adir_opt(*command, "--predict")
    assert second.returncode == 0
    assert second.stderr == (
        f"{out}/CMakeLists.txt: note: replaced the existing file (its content differed)\n"
        f"{out}/main.c: note: removed: the previous emit wrote it, this one does not\n"
    )
    assert not (out / "main.c").exists()
