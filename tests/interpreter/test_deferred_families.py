"""Builtin families imported on first use (``interpreter/registry.py``: defer, load_deferred).

``tapecli/library/families.py`` lists the words that import each deferred family (Keras-lite's apart), derived from
the names it registers: these tests import every family and compare, so the table cannot go stale
(``python tests/interpreter/test_deferred_families.py`` writes it again). A program must see the same builtins,
values, errors and hints whether a family was imported before it ran or not.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "tapecli" / "library" / "families.py"

# Imports the library with the registry watched: for each name, the family module (tapecli.library.X) whose import
# registered it last, the families that replaced a name, those that registered hooks, and the deferred families.
OWNERS = textwrap.dedent("""\
    import json, sys
    from tapecli.interpreter import registry

    def family():
        frame = sys._getframe(2)
        while frame is not None:
            name = frame.f_globals.get("__name__", "")
            if frame.f_code.co_name == "<module>" and name.startswith("tapecli.library.") and name.count(".") == 2:
                return name
            frame = frame.f_back
        return None

    owners, replaced, hooks = {}, [], {}
    register, hook = registry.register, registry.hook

    def watched_register(name, value, replaces=False):
        if replaces:
            replaced.append([owners[name], family(), name])
        owners[name] = family()
        return register(name, value, replaces)

    def watched_hook(name):
        hooks[name] = family()
        return hook(name)
    registry.register, registry.hook = watched_register, watched_hook
    import tapecli.library
    deferred = list(registry._ORDER)
    registry.load_deferred()
    print(json.dumps({"owners": owners, "replaced": replaced, "hooks": hooks, "deferred": deferred}))
    """)


def registrations() -> dict:
    proc = subprocess.run([sys.executable, "-c", OWNERS], capture_output=True, text=True, timeout=120, check=True)
    return json.loads(proc.stdout)


KERAS = "tapecli.library.keras_names"


def family_words(found: dict) -> dict:
    """Each deferred family (Keras-lite has its words) and the words of a program's text that import it: the last word
    of each name it registers, its module's for a name whose last word is a flat name too, the first word of a module
    that has no flat names (classes.Namespace.CLOSED)."""
    from tapecli.interpreter.classes import Namespace
    rows = {module: [name for name, owner in found["owners"].items() if owner == module]
            for module in found["deferred"] if module != KERAS}
    first = {}                  # a name -> the family that registered it first
    for old, _, name in found["replaced"]:
        first.setdefault(name, old)
    flat = {name for names in rows.values() for name in names if "." not in name} | {
        name for name, owner in found["owners"].items() if first.get(name, owner) not in found["deferred"]}

    def word(module: str, last: str) -> str:
        if f"tf.{module}" in Namespace.CLOSED:
            return module.partition(".")[0]
        return module if module and last in flat else last
    return {module: sorted({word(m, last) for m, _, last in (name.rpartition(".") for name in names)})
            for module, names in rows.items() if names}      # (a family of hooks alone: library/__init__.py's HOOKS)


def keras_words(found: dict) -> list[str]:
    """The words that import Keras-lite: the first word of each name it registers (``layers.add`` gives ``layers``)."""
    return sorted({name.partition(".")[0] for name, owner in found["owners"].items() if owner == KERAS})


def _spaced(words: list[str], indent: str) -> list[str]:
    """``words`` as one string of words separated by spaces, written as adjacent literals in lines of 118 characters
    at most (one string unmarshals faster than a tuple of them)."""
    rows, row = [], ""
    for word in words:
        if row and len(indent) + len(repr(f"{row} {word} ")) > 118:
            rows.append(row + " ")
            row = ""
        row = f"{row} {word}" if row else word
    return [f"{indent}{text!r}" for text in [*rows, row]]


def table_text(found: dict) -> str:
    """families.py as it should read."""
    lines = ['"""The builtin families imported on first use (``library/__init__.py``, ``registry.defer``): each module,',
             "in the order the modules are imported, and the words of a program's text that import it. A family's words",
             "are the last word of each name it registers; a name whose last word is a flat name too gives its module's",
             "(tf.sparse.add is looked up by ``sparse``: a program that adds need not import tf.sparse); a module that",
             "has no flat names (classes.Namespace.CLOSED: tf.experimental.numpy.var, .array, .diff) gives its first",
             "word, which a program reads before them. Keras-lite (``keras_names``: its layers, models, losses, optimizers,",
             "metrics, initializers, schedules and base classes, about 20 ms of imports) has the first word of each of",
             "its names. Each family's words are one string, separated by spaces. Generated from what the modules",
             'register by ``python tests/interpreter/test_deferred_families.py``, which checks it."""', "", "WORDS = {"]
    for module, words in family_words(found).items():
        lines += [f"    {module.rpartition('.')[2]!r}: (", *_spaced(words, " " * 8), "    ),"]
    return "\n".join([*lines, "}", "", "KERAS = (", *_spaced(keras_words(found), " " * 4), ")", ""])


@pytest.fixture(scope="module")
def found():
    return registrations()


def test_the_table_lists_the_words_of_the_names_each_deferred_family_registers(found):
    assert TABLE.read_text() == table_text(found), "families.py is stale: python tests/interpreter/test_deferred_families.py"
    assert len(found["deferred"]) > 10 and found["deferred"][-1] == KERAS


def test_the_words_that_import_keras_lite_are_those_of_the_names_it_registers(found):
    names = [name for name, owner in found["owners"].items() if owner == KERAS]
    assert len(names) > 300 and "Dense" in names and "layers.add" in names
    from tapecli.library.families import KERAS as words
    assert words.split() == keras_words(found) and {"Dense", "layers", "mse"} <= set(words.split())


def test_a_deferred_family_that_answers_a_hook_is_imported_by_it(found):
    """A hook must be there when a run asks it: the deferred families that register one declare it
    (library/__init__.py's HOOKS), and the interpreter's first question imports them (registry.HOOKS); Keras-lite's
    hooks are asked only of Keras-lite's own objects."""
    from tapecli.library import HOOKS
    declared = {name: f"tapecli.library.{family}" for family, names in HOOKS.items() for name in names}
    assert {name: owner for name, owner in found["hooks"].items()
            if owner in found["deferred"] and owner != KERAS} == declared
    assert {"attribute", "python_attribute", "out_of_scope", "host_module_name"} <= found["hooks"].keys()


def test_the_expectations_are_imported_by_the_builtins_they_register():
    """interpreter/expectations.py (expect's checks) defers itself by the names of its builtins (interpreter/core.py)."""
    script = textwrap.dedent("""\
        import tapecli.interpreter.core
        from tapecli.interpreter import registry
        before = set(registry.BUILTINS)
        import tapecli.interpreter.expectations
        print(sorted(set(registry.BUILTINS) - before))
        print(sorted(w for w, modules in registry._DEFERRED.items() if "tapecli.interpreter.expectations" in modules))
        """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    registered, deferred = proc.stdout.splitlines()
    assert registered == deferred == "['allclose', 'gradcheck', 'gradgradcheck']"


def test_a_name_a_deferred_family_replaces_is_in_its_row(found):
    """tf_math's reduce_sum takes over core's: a program naming reduce_sum imports tf_math before it runs."""
    assert ["tapecli.library.core", "tapecli.library.tf_math", "reduce_sum"] in found["replaced"]
    for _, replacing, name in found["replaced"]:
        assert found["owners"][name] == replacing


def test_the_library_looks_up_by_name_only_builtins_no_family_defers(found):
    """``BUILTINS["set_seed"]`` in library code fails while set_seed's family is not imported yet (it raised
    KeyError from keras.utils.set_random_seed): such code imports the function itself."""
    import ast
    deferred = {name for name, owner in found["owners"].items() if owner in found["deferred"]}
    looked_up = []
    for path in (ROOT / "tapecli").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "BUILTINS" \
                    and isinstance(node.slice, ast.Constant) and isinstance(node.ctx, ast.Load):
                module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
                looked_up.append((module, node.slice.value))
    assert looked_up and not [(module, name) for module, name in looked_up     # (a family's own names: there)
                              if name in deferred and found["owners"][name] != module]


def test_every_name_the_loop_plans_know_is_marked_once_its_family_loads():
    script = textwrap.dedent("""\
        import tapecli.library
        from tapecli.interpreter.registry import BUILTINS, load_deferred
        from tapecli.library import replay_kinds as r
        names = r._ALL_DATA + r._FIRST_DATUM + r._LOGITS + r._LISTS + r._DRAWS + ("print",)
        before = sorted(name for name in names if name not in BUILTINS)
        load_deferred(["reduce_sum"])
        marked = BUILTINS["reduce_sum"].replay_data
        load_deferred()
        print(bool(before), marked, sorted(name for name in names if not hasattr(BUILTINS[name], "replay")))
        """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert proc.stdout.split() == ["True", "(1,", "())", "[]"]


def test_a_run_in_another_thread_waits_for_the_family_being_imported():
    script = textwrap.dedent("""\
        import threading, time
        import tapecli.library
        from tapecli.interpreter import registry
        real = registry.importlib.import_module

        def slow(name):
            time.sleep(0.3)             # the first thread is inside the family's import
            return real(name)
        registry.importlib.import_module = slow
        first = threading.Thread(target=registry.load_deferred, args=(["cholesky"],))
        first.start()
        time.sleep(0.1)
        registry.load_deferred(["cholesky"])
        print("cholesky" in registry.BUILTINS)
        first.join()
        """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert proc.stdout.split() == ["True"]


# Runs each program in a new process: the deferred families it imported, its result or error.
RUNNER = textwrap.dedent("""\
    import sys, tapecli
    from tapecli.errors import TdfError
    try:
        result = tapecli.run(sys.argv[1])
        out = sorted((k, repr(v)) for k, v in result.values.items() if not k.startswith("_"))
    except TdfError as e:
        out = f"{type(e).__name__}: {e} ({e.hint})"
    loaded = sorted(m.rpartition(".")[2] for m in sys.modules if m.startswith("tapecli.library.")
                    and m.count(".") == 2 and m.rpartition(".")[2] not in (
                        "core", "python", "numpy_forms", "numpy_writes", "scope", "replay_kinds", "families",
                        "draws", "keras"))
    print(loaded)
    print(out)
    """)


def run_fresh(program: str, preload: str = "", env=None) -> tuple[str, str]:
    code = RUNNER if not preload else RUNNER.replace("import sys, tapecli\n", f"import sys, tapecli\n{preload}\n")
    proc = subprocess.run([sys.executable, "-c", code, program], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})
    assert proc.returncode == 0, proc.stderr
    loaded, out = proc.stdout.strip().splitlines()
    return loaded, out


EVERYTHING = "from tapecli.interpreter.registry import load_deferred; import tapecli.library; load_deferred()"


@pytest.mark.parametrize("program, loaded", [
    ("var x = 3.0\ntape t:\n    y = x ** 2\ng = t.gradient(y, x)\n", "[]"),
    ("x = reduce_sum([[1.0, 2.0], [3.0]])\n", "['tf_math']"),            # tf_math's reduce_sum stacks a list
    ("import tensorflow as tf\ny = tf.reduce_sum([1.0, 2.0])\n", "['tf_math']"),
    ("import tensorflow as tf\nx = tf.linalg.cholesky([[4.0, 2.0], [2.0, 3.0]])\n", "['tf_linalg']"),
    ("import tensorflow as tf\ng = tf.random.Generator.from_seed(1)\nx = g.normal([2])\n",
     "['tf_random', 'tf_random_generator']"),
    ("import tensorflow as T\nr = T.range(3)\n", None),                  # tf.range: not Python's range
    ("x = relu(-1.0) + squared_difference(1.0, 3.0)\n", None),
    ("x = realdiv(1.0, 4.0)\n", None),                                   # an alias: the lookup misses, all load
    ("x = chlesky([[1.0]])\n", None),                                    # a hint sees every family's names
    ("import tensorflow as tf\nx = tf.linalg.choleski([[1.0]])\n", None),
    ("import tensorflow as tf\nd = tf.data.Dataset.from_tensor_slices([1.0, 2.0])\nxs = [e for e in d]\n", None),
    ("import tensorflow as tf\ntf.keras.utils.set_random_seed(7)\nx = tf.random.uniform([2])\n", None),  # set_seed's
])
def test_a_program_sees_what_it_would_with_every_family_loaded(program, loaded):
    lazy_loaded, lazy = run_fresh(program)
    _, eager = run_fresh(program, preload=EVERYTHING)
    assert lazy == eager
    if loaded is not None:
        assert lazy_loaded == loaded


@pytest.mark.parametrize("program", [
    "import tensorflow as tf\nx = tf.reduce_sum([tf.ones(2), tf.ones(3)])\n",     # tf_math's, not core's
    "import tensorflow as tf\nx = tf.reduce_sum([[1.0, 2.0], [3.0, 4.0]], axis=1)\n",
    "import tensorflow as tf\nx = tf.random.Generator.from_seed(1).normal([2])\n",
])
def test_a_tensorflow_program_cpython_runs_finds_the_family_of_each_name_it_reads(program):
    """The bridge reads ``tf.X`` through classes.Namespace, which imports the families that register X."""
    bridged = {"TAPECLI_TF_ON_CPYTHON": "1"}
    lazy_loaded, lazy = run_fresh(program, env=bridged)
    _, eager = run_fresh(program, preload=EVERYTHING, env=bridged)
    assert lazy == eager and "tf_" in lazy_loaded


if __name__ == "__main__":
    TABLE.write_text(table_text(registrations()))
