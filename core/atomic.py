"""Outputs replace what was there whole, or not at all.

A report killed while writing, or a disk that fills up, must not destroy the previous good
report: every file is written under a temporary name in its own folder and renamed into place
(a rename within one folder is atomic). A report that is a set of files (a chargeback with its
CSV and team statements) is staged in a folder of its own and published by switching one
symlink, so the folder shows either the whole earlier set or the whole new one, never the
statements of one warehouse state beside the report of another.

MB_FAULT_WRITES="<action>:<n>:<counter file>" stops the process at the n-th fault point (a file
written, renamed, a set switched): action `kill` sends SIGKILL to the process group (no cleanup,
like a power cut), an errno name (ENOSPC, EROFS, EACCES, EDQUOT) fails that write as the file
system would, `count` only counts. The counter file is shared by a command's render processes.
"""
from __future__ import annotations

import ctypes
import errno
import os
import secrets
import shutil
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

FAULT_ENV = "MB_FAULT_WRITES"
CURRENT = "current"
RENAME_EXCHANGE = 2     # renameat2(2) flag: swap two names in one step
AT_FDCWD = -100


def fault_point(where: str | os.PathLike[str]) -> None:
    """One step of writing an output: where MB_FAULT_WRITES stops the process (tests only)."""
    spec = os.environ.get(FAULT_ENV)
    if not spec:
        return
    action, n, counter = spec.split(":", 2)
    fd = os.open(counter, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, b".")   # O_APPEND: one byte per point, atomically, from every process
        seen = os.fstat(fd).st_size
    finally:
        os.close(fd)
    # >=: render processes append at once, and each may see the others' bytes
    if action == "count" or seen < int(n):
        return
    if action == "kill":
        os.killpg(os.getpgid(0), signal.SIGKILL)
    code = getattr(errno, action)
    raise OSError(code, os.strerror(code), str(where))


def temporary_name(path: Path) -> Path:
    """A hidden name beside `path`, same suffix (writers pick the format by it), unique per process."""
    return path.with_name(f".{path.stem}.tmp-{os.getpid()}{path.suffix}")


def replace_file(path: Path, write: Callable[[Path], object]) -> Path:
    """Run write(tmp) for a temporary file beside `path`, flush it to disk, rename it to `path`.
    Whatever fails or kills the process on the way, `path` holds its old content or the new."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_name(path)
    try:
        write(tmp)
        _fsync(tmp)
        fault_point(tmp)
        os.replace(tmp, path)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if (renamed := _named(exc, tmp, path, whole=True)) is None:
            raise
        raise renamed from exc
    fault_point(path)
    return path


def _named(exc: BaseException, inner: Path, shown: Path, whole: bool = False) -> OSError | None:
    """An OSError about a file below `inner` (a temporary name, a stage) renamed for the path the
    user asked for; a writer's OSError that names no file (`whole`) is about `shown` too. None
    when `exc` is no such error."""
    if not isinstance(exc, OSError) or exc.errno is None:
        return None
    named = Path(exc.filename) if exc.filename else (inner if whole else None)
    if named is None or not named.is_relative_to(inner):
        return None
    return OSError(exc.errno, exc.strerror, str(shown / named.relative_to(inner)))


def write_text(path: Path, text: str) -> Path:
    """Text (UTF-8, line ends as given) written whole to `path`."""
    return replace_file(path, lambda tmp: tmp.write_text(text, encoding="utf-8", newline=""))


@contextmanager
def replacing_set(out: Path, name: str, members: Sequence[str]) -> Iterator[Path]:
    """Stage a set of outputs in a fresh folder (yielded) and publish it as out/<member> for each
    member, in one step. Each out/<member> is a symlink through out/.<name>/current, so switching
    that one link switches the set; a member the stage lacks is published as an empty folder (the
    statements of an earlier run with --per-team are gone from a run without). The earlier set is
    removed once the new one is published; a failure before that leaves the earlier set as it was."""
    store = out / f".{name}"
    try:
        store.mkdir(parents=True, exist_ok=True)
        stage = _new_folder(store)
    except OSError as exc:
        if (renamed := _named(exc, store, out)) is None:
            raise
        raise renamed from exc
    try:
        yield stage
        for m in members:
            if not (stage / m).exists():
                (stage / m).mkdir()
    except BaseException as exc:
        shutil.rmtree(stage, ignore_errors=True)
        if not any(store.iterdir()):
            store.rmdir()   # a first run that failed leaves nothing behind
        if (renamed := _named(exc, stage, out)) is None:
            raise
        raise renamed from exc
    _adopt_files(out, store, members)
    for m in members:
        _symlink(out / m, Path(store.name) / CURRENT / m)
    _symlink(store / CURRENT, Path(stage.name))
    for old in store.iterdir():
        if old.name not in (CURRENT, stage.name):
            shutil.rmtree(old, ignore_errors=True)
            fault_point(old)


def _adopt_files(out: Path, store: Path, members: Sequence[str]) -> None:
    """Members that are plain files and folders (written before sets were published as links)
    move into the store as the current set, each replaced by its link in one step: what the
    folder shows does not change on the way."""
    plain = [m for m in members if (out / m).exists() and not (out / m).is_symlink()]
    if not plain:
        return
    adopted = _new_folder(store)
    for m in plain:
        src = out / m
        if src.is_dir():
            shutil.copytree(src, adopted / m, copy_function=os.link)
        else:
            os.link(src, adopted / m)
    for m in members:
        if not (adopted / m).exists():
            (adopted / m).mkdir()
    fault_point(adopted)
    _symlink(store / CURRENT, Path(adopted.name))
    for m in plain:
        link = Path(store.name) / CURRENT / m
        if (out / m).is_dir():
            tmp = temporary_name(out / m)
            tmp.unlink(missing_ok=True)
            tmp.symlink_to(link)
            _exchange(tmp, out / m)
            shutil.rmtree(tmp)
        else:
            _symlink(out / m, link)
        fault_point(out / m)


def _new_folder(store: Path) -> Path:
    """A fresh folder in the store, with the permissions any folder the user makes gets."""
    folder = store / f"set-{os.getpid()}-{secrets.token_hex(4)}"
    folder.mkdir()
    return folder


def _symlink(path: Path, target: Path) -> None:
    """Point `path` at `target` in one step (a new link renamed over the old)."""
    if path.is_symlink() and Path(os.readlink(path)) == target:
        return
    tmp = temporary_name(path)
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(target)
    os.replace(tmp, path)
    _fsync_dir(path.parent)
    fault_point(path)


def _exchange(a: Path, b: Path) -> None:
    """Swap two names in one step (Linux renameat2); elsewhere, move b aside and a in its place."""
    libc = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None
    swap = getattr(libc, "renameat2", None)
    if swap is not None and swap(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) == 0:
        return
    aside = temporary_name(a.with_name(a.name + "-old"))
    os.rename(b, aside)
    os.rename(a, b)
    os.rename(aside, a)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    """The rename itself on disk: a folder's entries are made durable by syncing the folder."""
    try:
        _fsync(path)
    except OSError:     # not every file system syncs a folder; the rename stands regardless
        pass
