"""The builtin library, a room above the interpreter: the TensorFlow vocabulary (core, tf_math, tf_nn, tf_linalg),
Python's builtins and methods (python) and Keras-lite (keras/, its names in keras_names). Each module registers its
names with ``@builtin`` (``interpreter/registry.py``), and the library answers the interpreter's questions through
the registry's hooks: the library imports the interpreter, the interpreter imports nothing of it.

Importing this package registers the core family and its hook (a tensor's, variable's or tape's attributes) and
defers the others (``registry.defer``) to the first program that may use them: a family listed in
``families.DEFERRED`` (every name it registers, generated from the modules and checked by
tests/interpreter/test_deferred_families.py) is imported for a program whose text has the last word of one of its
names (its module's word, for a name whose last word is a flat name too), Keras-lite for one with a first word of
its names (``keras_words``), a family that answers a hook (``HOOKS``) when the interpreter first asks it, and every
family for a name no loaded family has. Add a family by adding its module to the table
(``python tests/interpreter/test_deferred_families.py``), and its hooks to ``HOOKS``.
"""
from tapecli.library import core  # noqa: F401
from tapecli.library.families import DEFERRED as _DEFERRED
from tapecli.library.keras_words import WORDS as _KERAS_WORDS
from tapecli.interpreter.classes import Namespace as _Namespace
from tapecli.interpreter.registry import BUILTINS as _BUILTINS
from tapecli.interpreter.registry import defer as _defer

# A module's name is looked up by its last word (tf.image.resize: "resize"), but one whose last word is a flat name
# too (tf.sparse.add, tf.strings.split) by its module's: a program that adds need not import tf.sparse. The names of
# a module that has no flat names (classes.Namespace.CLOSED: tf.experimental.numpy.var, .array, .diff) are looked
# up by its first word, which a program reads before them: one whose variables are named so need not import it.
_FLAT = {name for names in _DEFERRED.values() for name in names if "." not in name} | _BUILTINS.keys()


def _word(module: str, last: str) -> str:
    if f"tf.{module}" in _Namespace.CLOSED:
        return module.partition(".")[0]
    return module if module and last in _FLAT else last


# The hooks each deferred family answers: the interpreter's first question imports it (checked against what the
# families register by tests/interpreter/test_deferred_families.py). The last two register no builtin: NumPy's
# arrays written in place, and what is left out of tapecli, and why.
HOOKS = {"numpy_forms": ("host_module_name",), "python": ("python_attribute",),
         "numpy_writes": ("numpy_item", "numpy_set_item", "numpy_in_place"), "scope": ("out_of_scope", "tensorflow_lacks")}
# NumPy's forms for a program that reads a name of np (classes.Namespace: also where it imports numpy as onp)
_WORDS = {"numpy_forms": {"np"}}

for _module, _names in _DEFERRED.items():      # in the order they import each other
    _defer(f"tapecli.library.{_module}", {_word(module, last) for module, _, last in
                                          (name.rpartition(".") for name in _names)} | _WORDS.get(_module, set()),
           HOOKS.get(_module, ()))
for _module in HOOKS.keys() - _DEFERRED.keys():
    _defer(f"tapecli.library.{_module}", (), HOOKS[_module])
_defer("tapecli.library.keras_names", _KERAS_WORDS)

from tapecli.library import replay_kinds  # noqa: F401,E402  (what the common builtins are to a loop plan; last)
