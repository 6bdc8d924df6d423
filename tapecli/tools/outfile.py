"""Files the command line writes (`check --junit PATH`, `plot -o PATH`, `--out FILE.npz`): only regular files or
new paths, and never a file the command reads (the program, a `--set`/`--sweep` file, a file `check` checks).

A symlink is written through to its target. A device node, a FIFO or a socket is refused (a usage error):
the file would be replaced by a regular one (as root, `--junit /dev/null` would replace the system's
/dev/null), and standard output is the way to write into a pipe. A file is written whole or not at all: under
a temporary name beside its target, then renamed over it. Every failure (a directory as the target, a
read-only or full disk, a name too long, the file size limit) is an :class:`OutputFileError`, a usage error
(exit 2) that names the option, the path and the reason.
"""
from __future__ import annotations

import errno
import os
import stat

from tapecli.errors import UsageError

_KINDS = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"),
          (stat.S_ISSOCK, "a socket"))


class OutputFileError(UsageError):
    """An output file that cannot be written where it was asked for (exit 2)."""


# The temporaries this process is writing: where it must end at once (the command line's time-limit watchdog,
# the timer after a Ctrl-C), remove_temporaries deletes them, so that no half file is left beside its target.
# Process state, as the files themselves are; a thread adds and removes its own.
_TEMPORARIES: set[str] = set()


def remove_temporaries() -> None:
    """Delete the temporaries being written now (their targets stay as they were)."""
    for temporary in list(_TEMPORARIES):
        try:
            os.unlink(temporary)
        except OSError:
            pass


def _reason(error: OSError) -> str:
    if error.errno == errno.ENOSPC:
        return "the disk is full"
    if error.errno == errno.EROFS:
        return "the file system is read-only"
    if error.errno == errno.EFBIG:
        return "the file would be larger than the file size limit (ulimit -f)"
    if error.errno == errno.ENAMETOOLONG:
        return "the file name is too long"
    return error.strerror or str(error)


def read_paths(files=(), specs=()) -> list[str]:
    """The files a command reads: ``files`` (``-``, standard input, is none) and the ``@PATH`` of each
    ``NAME=@PATH`` in ``specs`` (--set, --sweep)."""
    paths = [f for f in files if f and f != "-"]
    for spec in specs:
        value = spec.partition("=")[2].strip()
        if value.startswith("@") and len(value) > 1:
            paths.append(value[1:])
    return paths


def _read_by_the_command(path: str, info: os.stat_result, option: str, reads) -> None:
    """An OutputFileError where ``path`` (whose file's stat is ``info``) is one of the files the command reads
    (``reads``), under any name: the same path, a symlink or a hard link to it."""
    for read in reads:
        try:
            other = os.stat(read)
        except (OSError, ValueError):
            continue
        if (other.st_dev, other.st_ino) == (info.st_dev, info.st_ino):
            also = "" if os.path.abspath(read) == os.path.abspath(path) else f" (as {read})"
            raise OutputFileError(f"{option} {path}: this command reads that file{also}; writing it would replace "
                                  f"it: give another file name")


def target(path: str, option: str, reads=()) -> str:
    """The file that writing ``path`` writes (a symlink's target), checked to be a regular file or a new
    path in an existing folder, and none of the files the command reads (``reads``: read_paths); an
    OutputFileError otherwise. Called before the work, to fail early, and again just before writing."""
    try:
        real = os.path.realpath(path)
        info = os.stat(real)
    except FileNotFoundError:
        info = None
    except OSError as e:
        raise OutputFileError(f"{option} {path}: cannot write there: {_reason(e)}") from None
    if info is None:
        folder = os.path.dirname(real)
        if not os.path.isdir(folder):
            raise OutputFileError(f"{option} {path}: no such folder: {folder}")
        return real
    if stat.S_ISDIR(info.st_mode):
        raise OutputFileError(f"{option} {path}: is a directory; give a file name")
    if not stat.S_ISREG(info.st_mode):
        kind = next((word for test, word in _KINDS if test(info.st_mode)), "not a regular file")
        raise OutputFileError(f"{option} {path}: is {kind}, not a regular file; tapecli writes its files only to "
                              f"regular files or new paths (to write into a pipe, use standard output)")
    _read_by_the_command(path, info, option, reads)
    return real


def write(path: str, data: bytes | str, option: str, reads=()) -> None:
    """Write ``data`` to ``path`` (through a symlink), whole or not at all; never over one of ``reads``."""
    write_with(path, lambda f: f.write(data.encode("utf-8") if isinstance(data, str) else data), option, reads)


def write_with(path: str, fill, option: str, reads=()) -> None:
    """``fill(binary_file)`` writes the contents; they land in ``path`` (through a symlink) whole or not at all,
    never over one of ``reads``."""
    real = target(path, option, reads)
    import tempfile
    folder = os.path.dirname(real)
    try:
        fd, temporary = tempfile.mkstemp(dir=folder, prefix=".tapecli-", suffix=".tmp")
    except OSError as e:
        if e.errno in (errno.EACCES, errno.EPERM) and os.path.isfile(real) and os.access(real, os.W_OK):
            _write_in_place(real, fill, path, option)       # a writable file in a folder we may not add to
            return
        raise OutputFileError(f"{option} {path}: cannot write there: {_reason(e)}") from None
    _TEMPORARIES.add(temporary)
    try:
        try:
            with os.fdopen(fd, "wb") as f:
                fill(f)
            _keep_mode(temporary, real)
            target(path, option, reads)     # (still a regular file or a new path: never rename over anything else)
            os.replace(temporary, real)
        except OSError as e:
            raise OutputFileError(f"{option} {path}: cannot write there: {_reason(e)}") from None
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
    finally:
        _TEMPORARIES.discard(temporary)


def _keep_mode(temporary: str, real: str) -> None:
    """The mode the file would have had: the existing file's, else what the umask gives a new file
    (mkstemp makes its files readable by their owner only)."""
    try:
        mode = stat.S_IMODE(os.stat(real).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    os.chmod(temporary, mode)


def _write_in_place(real: str, fill, path: str, option: str) -> None:
    try:
        with open(real, "wb") as f:
            fill(f)
    except OSError as e:
        raise OutputFileError(f"{option} {path}: cannot write there: {_reason(e)}") from None
