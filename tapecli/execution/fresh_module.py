"""CPython's own module executed afresh into a new module object (a run's own ``logging`` and ``traceback``,
run_logging.py and run_traceback.py): what its code imports by the names given is handed the run's stand-ins."""
from __future__ import annotations

import builtins
import functools
import importlib.util
import types


@functools.cache
def _code(name: str) -> types.CodeType:
    """The module's compiled code, as CPython's import reads it (its cached bytecode)."""
    return importlib.util.find_spec(name).loader.get_code(name)


def source_file(name: str) -> str:
    """The file of the module's code (its frames' ``co_filename``)."""
    return _code(name).co_filename


def executed(name: str, stand_ins: dict) -> types.ModuleType:
    """A new module ``name`` holding what CPython's module code makes, its imports of ``stand_ins``' names
    given those."""
    def import_(imported, globals=None, locals=None, fromlist=(), level=0):
        found = stand_ins.get(imported)
        return found if found is not None else builtins.__import__(imported, globals, locals, fromlist, level)

    module = types.ModuleType(name)
    module.__dict__["__builtins__"] = {**vars(builtins), "__import__": import_}
    exec(_code(name), module.__dict__)
    return module
