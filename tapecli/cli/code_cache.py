"""The command line's modules from one mapped file: start-up without a search and a .pyc read per module.

A small run imports about 230 pure-Python modules (tapecli's, NumPy's, the standard library's) before its first
statement. Finding each on sys.path, then opening, reading and checking its .pyc, took about 9 ms of the 96 ms of
`tapecli grad` on a four-line program: more than all that separated it from `python -c "import numpy"`.
The console script keeps those modules' code (the bytes of their .pyc, or what importlib compiles from their
source) in one file per interpreter, flags and module path, maps it, and imports a module from it when its source
file still has the size and modification time it had when stored. Anything else (a changed, moved or deleted
file, a module asked for under another parent, an extension module, a name not stored yet) is imported as Python
imports it, and a run that imported stored-able modules that way adds them to the file at its end, so the next
run finds them.

Only the console script's process uses it: `import tapecli` in a user's program, `python -m tapecli` and the
pytest plugin leave sys.meta_path alone. The finder comes first on sys.meta_path (the finders before PathFinder,
asked in vain for each of ~180 modules, took ~0.3 ms), and stores only the modules PathFinder itself finds in the
same file, so it serves none that a built-in, frozen or other package's finder would: those finders are part of
the file's key. TAPECLI_CODE_CACHE=0 turns it off.
"""
from __future__ import annotations

import marshal
import mmap
import os
import sys
import zlib
from importlib.machinery import ModuleSpec, PathFinder, SourceFileLoader

import _imp

from tapecli.cache import versioned_root

# At most this many bytes of code in one file: past it, a run's store starts the file again with its own modules
# (tapecli, NumPy and the standard library's modules a run may import come to about 30 MB).
LARGEST = 64 << 20
# The index's layout: a file of another layout is another key's, stored anew
_LAYOUT = "2"


class _StoredLoader(SourceFileLoader):
    """Python's loader for a source file, whose first ``get_code`` returns the stored code (its source, resources
    and any reload are the file's, as for a module imported the usual way)."""

    def __init__(self, fullname: str, path: str, code: memoryview, missed: list):
        super().__init__(fullname, path)
        self._code = code
        self._missed = missed

    def get_code(self, fullname):
        code, self._code = self._code, None
        if code is None or fullname != self.name:
            return super().get_code(fullname)
        try:
            loaded = marshal.loads(code)
        except (EOFError, ValueError, TypeError):
            loaded = None
        if loaded.__class__ is not _CODE:               # a damaged file: Python's import, and stored anew at the end
            self._missed.append(fullname)
            return super().get_code(fullname)
        _imp._fix_co_filename(loaded, self.path)        # as importlib does for a .pyc whose source has moved
        return loaded


_CODE = _StoredLoader.get_code.__code__.__class__


class CodeCache:
    """A sys.meta_path finder over one mapped file of stored modules, and what this process adds to it.

    The file: the length of its index (8 bytes, little-endian), the index (marshalled: this process's ``key``
    and {module: (source path, is a package, source mtime_ns, source size, offset, length, .pyc path)}), then the
    code of each module (marshalled), at its offset. The .pyc path is the module's ``__cached__``, which importlib
    would otherwise work out from the source path for every module of every run."""

    def __init__(self, path: str, key: str):
        self.path = path
        self.key = key
        self.entries: dict[str, tuple] = {}
        self.code = memoryview(b"")
        self.missed: list[str] = []
        try:
            self._map()
        except (OSError, ValueError, EOFError, TypeError):
            self.entries = {}                 # none yet, unreadable, or another layout: stored anew at the end

    def _map(self):
        with open(self.path, "rb") as file:
            mapped = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
        view = memoryview(mapped)
        length = int.from_bytes(view[:8], "little")
        key, entries = marshal.loads(view[8:8 + length])
        if key == self.key:
            self.entries, self.code = entries, view[8 + length:]

    def find_spec(self, fullname, path=None, target=None):
        entry = self.entries.get(fullname)
        if entry is not None:
            origin, package, mtime_ns, size, start, length, cached = entry
            folder = os.path.dirname(origin)
            # A submodule is stored for the parent it was found under (top-level names: the key's sys.path).
            if path is None or (os.path.dirname(folder) if package else folder) in path:
                try:
                    stat = os.stat(origin)
                except OSError:
                    stat = None
                if stat is not None and stat.st_mtime_ns == mtime_ns and stat.st_size == size:
                    loader = _StoredLoader(fullname, origin, self.code[start:start + length], self.missed)
                    spec = ModuleSpec(fullname, loader, origin=origin, is_package=package)
                    spec.has_location = True
                    spec.cached = cached
                    if package:
                        spec.submodule_search_locations = [folder]
                    return spec
        self.missed.append(fullname)
        return None

    def store(self) -> int:
        """Add the modules this process imported from their source folders (once each); the number added. Nothing
        is written where none are new; a folder that cannot be written stores nothing, silently."""
        new = {}
        for name in self.missed:
            spec = getattr(sys.modules.get(name), "__spec__", None)
            if spec is None or type(spec.loader) not in (SourceFileLoader, _StoredLoader) or not spec.origin \
                    or not _found_by_path(name, spec.origin):
                continue                      # not imported, an extension or built-in, another finder's or loader's
            compiled = _compiled(spec.loader, spec.origin)
            if compiled is not None:
                new[name] = (spec.origin, spec.submodule_search_locations is not None, *compiled, spec.cached)
        self.missed = []
        if not new:
            return 0
        kept = {name: entry for name, entry in self.entries.items() if name not in new}
        if sum(entry[5] for entry in kept.values()) + sum(len(entry[4]) for entry in new.values()) > LARGEST:
            kept = {}
        index, chunks, offset = {}, [], 0
        for name, (origin, package, mtime_ns, size, start, length, cached) in kept.items():
            index[name] = (origin, package, mtime_ns, size, offset, length, cached)
            chunks.append(self.code[start:start + length])
            offset += length
        for name, (origin, package, mtime_ns, size, code, cached) in new.items():
            index[name] = (origin, package, mtime_ns, size, offset, len(code), cached)
            chunks.append(code)
            offset += len(code)
        header = marshal.dumps((self.key, index))
        temporary = f"{self.path}.{os.getpid()}.tmp"
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            with open(temporary, "wb") as file:
                file.write(len(header).to_bytes(8, "little"))
                file.write(header)
                for chunk in chunks:
                    file.write(chunk)
            os.replace(temporary, self.path)  # a process that mapped the old file keeps reading the old file
        except OSError:
            try:
                os.unlink(temporary)
            except OSError:
                pass
            return 0
        return len(new)


def _found_by_path(name: str, origin: str) -> bool:
    """Whether PathFinder finds module ``name`` in the file ``origin`` (under its parent's __path__)."""
    parent, _, _ = name.rpartition(".")
    path = getattr(sys.modules.get(parent), "__path__", None) if parent else None
    try:
        spec = PathFinder.find_spec(name, path)
    except (ImportError, ValueError):
        return False
    return spec is not None and spec.origin == origin


def _compiled(loader: SourceFileLoader, origin: str):
    """(mtime_ns, size, marshalled code) of a module's source as it is now: its .pyc's bytes where importlib
    would take that .pyc for this source, else the source compiled as importlib compiles it; None where the source
    cannot be read or compiled."""
    from importlib.util import MAGIC_NUMBER, cache_from_source
    try:
        stat = os.stat(origin)
        try:
            pyc = loader.get_data(cache_from_source(origin))
        except OSError:
            pyc = b""
        if (pyc[:4] == MAGIC_NUMBER and pyc[4:8] == b"\0\0\0\0"      # a timestamp .pyc of this Python, checked as
                and int.from_bytes(pyc[8:12], "little") == int(stat.st_mtime) & 0xFFFFFFFF     # importlib checks it
                and int.from_bytes(pyc[12:16], "little") == stat.st_size & 0xFFFFFFFF):
            return stat.st_mtime_ns, stat.st_size, pyc[16:]
        code = loader.source_to_code(loader.get_data(origin), origin)
        return stat.st_mtime_ns, stat.st_size, marshal.dumps(code)
    except (OSError, SyntaxError, ValueError):
        return None


def install() -> CodeCache | None:
    """Put this process's code cache first on sys.meta_path; None where TAPECLI_CODE_CACHE=0."""
    if os.environ.get("TAPECLI_CODE_CACHE", "").strip() == "0":
        return None
    # What decides which file a module name is found in (the finders, sys.path) and its __cached__ path, and the
    # index's layout: which stored file serves this process.
    finders = [f if isinstance(f, type) else type(f) for f in sys.meta_path]
    key = "\0".join((_LAYOUT, sys.version, str(sys.flags.optimize), str(sys.pycache_prefix), sys.executable,
                     *(f"{f.__module__}.{f.__qualname__}" for f in finders), *sys.path))
    digest = zlib.crc32(key.encode("utf-8", "surrogateescape"))
    cache = CodeCache(os.path.join(versioned_root(), "modules", f"{sys.implementation.cache_tag}-{digest:08x}"), key)
    sys.meta_path.insert(0, cache)
    return cache
