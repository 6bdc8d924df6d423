"""The console script's code cache (tapecli/cli/code_cache.py): a module comes from it only while its source file is
the one stored, and a run adds what it imported the usual way."""
import importlib
import importlib.util
import inspect
import json
import os
import shutil
import subprocess
import sys
from importlib.machinery import SourceFileLoader
from pathlib import Path

import pytest

from tapecli.cli import code_cache

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "01_first_gradient.tdf"


@pytest.fixture
def demo(tmp_path, monkeypatch):
    """A package `democache` (with a submodule) on sys.path, and a function that makes a code cache over it,
    the only one on sys.meta_path's way to PathFinder; each import is a fresh one."""
    root = tmp_path / "site"
    (root / "democache").mkdir(parents=True)
    (root / "democache" / "__init__.py").write_text("VALUE = 1\n")
    (root / "democache" / "part.py").write_text('"""A part."""\ndef answer():\n    return 42\n')
    monkeypatch.syspath_prepend(str(root))
    importlib.invalidate_caches()
    path = tmp_path / "cache" / "modules.bin"

    def forget():
        for name in ("democache", "democache.part"):
            sys.modules.pop(name, None)

    def cache(key="key"):
        forget()
        made = code_cache.CodeCache(str(path), key)
        finders = [f for f in sys.meta_path if not isinstance(f, code_cache.CodeCache)]
        finders.insert(finders.index(importlib.machinery.PathFinder), made)
        monkeypatch.setattr(sys, "meta_path", finders)
        return made

    yield root / "democache", path, cache
    forget()


def test_a_module_imported_the_usual_way_is_stored_then_served(demo):
    package, path, cache = demo
    first = cache()
    part = importlib.import_module("democache.part")
    assert type(part.__spec__.loader) is SourceFileLoader
    assert first.store() == 2 and path.exists()
    assert first.store() == 0                             # nothing new: nothing written

    second = cache()
    part = importlib.import_module("democache.part")
    loader = part.__spec__.loader
    assert isinstance(loader, code_cache._StoredLoader)
    assert part.answer() == 42 and sys.modules["democache"].VALUE == 1
    assert part.__file__ == str(package / "part.py")
    # __cached__ as importlib gives it (stored with the code)
    assert part.__cached__ == importlib.util.cache_from_source(str(package / "part.py"))
    assert sys.modules["democache"].__cached__ == importlib.util.cache_from_source(str(package / "__init__.py"))
    assert part.answer.__code__.co_filename == str(package / "part.py")
    assert sys.modules["democache"].__path__ == [str(package)]
    assert inspect.getsource(part.answer).startswith("def answer")
    assert second.missed == [] and second.store() == 0


def test_a_changed_source_is_imported_again_and_stored_again(demo):
    package, path, cache = demo
    made = cache()
    importlib.import_module("democache.part")
    made.store()
    (package / "part.py").write_text("def answer():\n    return 43\n")
    third = cache()
    part = importlib.import_module("democache.part")
    assert type(part.__spec__.loader) is SourceFileLoader and part.answer() == 43
    assert third.store() == 1
    cache()
    part = importlib.import_module("democache.part")
    assert isinstance(part.__spec__.loader, code_cache._StoredLoader) and part.answer() == 43


def test_the_code_stored_is_the_pycs_where_python_would_take_it(demo):
    import marshal
    import py_compile
    from importlib.util import cache_from_source
    package, path, cache = demo
    source = str(package / "part.py")
    pyc = Path(py_compile.compile(source, cfile=cache_from_source(source), doraise=True))
    loader = SourceFileLoader("democache.part", source)
    assert code_cache._compiled(loader, source)[2] == pyc.read_bytes()[16:]
    other = marshal.dumps(compile("X = 0", source, "exec"))
    pyc.write_bytes(pyc.read_bytes()[:12] + b"\x00\x00\x00\x00" + other)     # a .pyc of a source of another size
    stored = code_cache._compiled(loader, source)[2]
    assert stored != other and marshal.loads(stored).co_names == ("__doc__", "answer")


def test_a_deleted_source_is_not_served(demo):
    package, path, cache = demo
    made = cache()
    importlib.import_module("democache.part")
    made.store()
    (package / "part.py").unlink()
    cache()
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("democache.part")


def test_a_submodule_under_another_parent_is_not_served(demo):
    package, path, cache = demo
    made = cache()
    importlib.import_module("democache.part")
    made.store()
    other = cache()
    assert other.find_spec("democache.part", [str(package.parent)]) is None
    assert other.find_spec("democache.part", [str(package)]) is not None


def test_another_key_or_a_damaged_file_stores_anew(demo):
    package, path, cache = demo
    made = cache()
    importlib.import_module("democache")
    made.store()
    assert cache("another key").entries == {}
    path.write_bytes(b"\x05\x00\x00\x00\x00\x00\x00\x00xx")
    damaged = cache()
    assert damaged.entries == {}
    importlib.import_module("democache")
    assert damaged.store() == 1 and cache().entries.keys() == {"democache"}


def test_a_file_cut_short_or_damaged_imports_as_python_does_and_stores_anew(demo):
    package, path, cache = demo
    made = cache()
    importlib.import_module("democache.part")
    made.store()
    whole = path.read_bytes()
    for damaged in (whole[:-20], whole[:-20] + b"\x00" * 20):     # a module's code cut short, or overwritten
        path.write_bytes(damaged)
        again = cache()
        assert importlib.import_module("democache.part").answer() == 42
        assert again.store() == 1 and path.read_bytes() == whole


def test_a_folder_that_cannot_be_written_stores_nothing(demo, tmp_path):
    package, path, cache = demo
    made = cache()
    blocked = tmp_path / "a file"
    blocked.write_text("")
    made.path = str(blocked / "modules.bin")               # its folder is a file
    importlib.import_module("democache")
    assert made.store() == 0


def test_a_module_another_finder_gives_from_another_file_is_not_stored(demo, monkeypatch):
    # (the cache comes first on sys.meta_path: it may serve only what PathFinder would find in the same file)
    package, path, cache = demo
    (package / "elsewhere.py").write_text("def answer():\n    return 7\n")

    class Redirect:
        @staticmethod
        def find_spec(name, path=None, target=None):
            if name == "democache.part":
                return importlib.util.spec_from_file_location(name, package / "elsewhere.py")
            return None

    made = cache()
    sys.meta_path.insert(sys.meta_path.index(made) + 1, Redirect)
    assert importlib.import_module("democache.part").answer() == 7
    assert made.store() == 1 and cache().entries.keys() == {"democache"}


def test_the_cache_comes_first_and_its_key_names_the_finders(monkeypatch, tmp_path):
    monkeypatch.setenv("TAPECLI_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("TAPECLI_CODE_CACHE", raising=False)
    finders = list(sys.meta_path)
    monkeypatch.setattr(sys, "meta_path", list(finders))
    made = code_cache.install()
    assert sys.meta_path[0] is made and sys.meta_path[1:] == finders
    assert "_frozen_importlib.BuiltinImporter" in made.key.split("\0")


def test_the_switch_leaves_the_finders_alone(monkeypatch):
    monkeypatch.setenv("TAPECLI_CODE_CACHE", "0")
    finders = list(sys.meta_path)
    assert code_cache.install() is None and sys.meta_path == finders


def test_the_console_script_stores_once_and_answers_the_same(tmp_path):
    script = shutil.which("tapecli", path=os.path.dirname(sys.executable))
    if script is None:
        pytest.skip("the tapecli console script is not installed beside this Python")
    env = {**os.environ, "TAPECLI_CACHE_DIR": str(tmp_path)}
    env.pop("TAPECLI_CODE_CACHE", None)

    def run(**extra):
        done = subprocess.run([script, "grad", "--json", str(EXAMPLE)], capture_output=True, text=True,
                              env={**env, **extra}, timeout=120)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    plain = run(TAPECLI_CODE_CACHE="0")
    assert not any(tmp_path.rglob("modules"))
    assert run() == plain
    (stored,) = (tmp_path / next(tmp_path.iterdir()).name / "modules").iterdir()
    written = stored.stat().st_mtime_ns
    assert run() == plain
    assert stored.stat().st_mtime_ns == written           # every module came from it: nothing to add
