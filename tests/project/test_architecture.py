"""The layout the architecture promises (docs/architecture.md): rooms as subpackages, one-way doors
(a room imports only the rooms below it, and no import cycle; lazy imports inside functions included),
one concept per module: none over 1,000 lines, a warning past 800."""
from __future__ import annotations

import ast
import warnings
from pathlib import Path

import tapecli

PACKAGE = Path(tapecli.__file__).parent
# One concept per file, not a size to split at: a module may grow to MAX_LINES where one concept needs it;
# past WARN_LINES the test warns that it may hold two.
MAX_LINES = 1000
WARN_LINES = 800


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _imports(name: str, path: Path, modules: dict) -> set[str]:
    """Every tapecli module that ``name`` imports, anywhere in its body (a ``LazyModule("...")`` too)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            submodules = {f"{base}.{a.name}" for a in node.names} & modules.keys()   # `from pkg import module`
            found.update(submodules)
            if len(submodules) < len(node.names):
                found.add(base)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "LazyModule" and node.args \
                and isinstance(node.args[0], ast.Constant):      # lazymodule.py: an import on first use
            found.add(node.args[0].value)
    return {m for m in found if m in modules and m != name}


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _cycle(graph) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph[n]):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                found = visit(m)
                if found:
                    return found
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            found = visit(n)
            if found:
                return found
    return None


def test_the_import_graph_has_no_cycle():
    cycle = _cycle(import_graph())
    assert cycle is None, " -> ".join(cycle)


def test_the_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


# The rooms, lowest first: a module imports modules of its own room or of rooms below it, never above.
# Each room is the modules under its prefixes (the longest prefix wins); the library sits above the
# interpreter (it builds on the registry, program objects and conversions; the interpreter reaches it only
# through the registry), and fusion above autodiff (neither imports the other).
ROOMS = [
    ("leaves", ("tapecli.version", "tapecli.errors", "tapecli.cache", "tapecli.environment", "tapecli.recursion",
                "tapecli.lazymodule")),
    ("frontend", ("tapecli.frontend",)),
    ("runtime", ("tapecli.runtime",)),
    ("kernels", ("tapecli.kernels",)),
    ("ops", ("tapecli.ops",)),
    ("autodiff", ("tapecli.autodiff",)),
    ("fusion", ("tapecli.fusion",)),
    ("interpreter", ("tapecli.interpreter",)),
    ("library", ("tapecli.library",)),
    ("execution", ("tapecli.execution",)),
    ("api", ("tapecli.api", "tapecli.documents", "tapecli")),       # tapecli itself: the package's face, tapecli.run
    ("tools", ("tapecli.tools",)),
    ("cli", ("tapecli.cli", "tapecli.__main__")),
]


def room_of(module: str, rooms=ROOMS) -> tuple[int, str] | None:
    """(rank, room) of the room whose longest prefix names ``module``; None if no room does."""
    found = None
    for rank, (room, prefixes) in enumerate(rooms):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and (found is None or len(prefix) > found[0]):
                found = (len(prefix), rank, room)
    return found and found[1:]


def upward_imports(graph, rooms=ROOMS) -> list[str]:
    """Each import that runs from a room up to a higher one, as ``a (room) -> b (room)``."""
    out = []
    for name in sorted(graph):
        rank, room = room_of(name, rooms)
        for other in sorted(graph[name]):
            other_rank, other_room = room_of(other, rooms)
            if other_rank > rank:
                out.append(f"{name} ({room}) -> {other} ({other_room})")
    return out


def test_every_module_is_in_a_room():
    lost = sorted(name for name in _modules() if room_of(name) is None)
    assert not lost, f"modules in no room of ROOMS: {lost}"


def test_rooms_import_only_rooms_below_them():
    wrong = upward_imports(import_graph())
    assert not wrong, "imports up the room order:\n" + "\n".join(wrong)


def test_the_room_checker_finds_an_import_upwards():
    rooms = [("low", ("p.low",)), ("mid", ("p.mid",)), ("high", ("p.high", "p.mid.top"))]
    assert room_of("p.mid.top.x", rooms) == (2, "high") and room_of("p.mid.x", rooms) == (1, "mid")
    assert room_of("q", rooms) is None
    graph = {"p.low.a": {"p.low.b"}, "p.low.b": set(), "p.mid.c": {"p.low.a"}, "p.high.d": {"p.mid.c", "p.low.b"},
             "p.mid.top.e": {"p.mid.c"}}
    assert upward_imports(graph, rooms) == []
    graph["p.low.b"] = {"p.high.d"}                 # a lazy import from the bottom to the top, say
    graph["p.mid.c"] = {"p.low.a", "p.mid.top.e"}   # a module of mid reaching the high room's prefix inside it
    assert upward_imports(graph, rooms) == ["p.low.b (low) -> p.high.d (high)", "p.mid.c (mid) -> p.mid.top.e (high)"]


def test_the_graph_sees_lazy_imports(tmp_path):
    """The import graph reads imports inside functions too (what the room checker judges)."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("def f():\n    from pkg import b\n    from .c import g\nd = LazyModule('pkg.d')\n")
    (package / "b.py").write_text("")
    (package / "c.py").write_text("def g():\n    pass\n")
    modules = {"pkg": package / "__init__.py", "pkg.a": package / "a.py", "pkg.b": package / "b.py", "pkg.c": package / "c.py",
               "pkg.d": package / "d.py"}
    assert _imports("pkg.a", package / "a.py", modules) == {"pkg.b", "pkg.c", "pkg.d"}


def test_the_rooms_are_subpackages():
    rooms = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert {"frontend", "runtime", "ops", "autodiff", "kernels", "fusion", "interpreter", "library", "tools", "cli"} <= rooms


def test_no_module_is_over_the_line_limit():
    long = {name: n for name, path in _modules().items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"
    large = {name: n for name, path in _modules().items()
             if (n := len(path.read_text(encoding="utf-8").splitlines())) > WARN_LINES}
    if large:
        warnings.warn(f"modules over {WARN_LINES} lines (one concept each?): {large}")
