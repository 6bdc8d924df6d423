"""The builtin library, a room above the interpreter: the TensorFlow vocabulary (core, tf_math, tf_nn, tf_linalg),
Python's builtins and methods (python) and Keras-lite (keras/, its names in keras_names). Each module registers its
names with ``@builtin`` (``interpreter/registry.py``), and the library answers the interpreter's questions through
the registry's hooks: the library imports the interpreter, the interpreter imports nothing of it.

Importing this package registers the core family and its hook (a tensor's, variable's or tape's attributes) and
defers the others (``registry.defer``) to the first program that may use them: a family listed in
``families.WORDS`` (generated from the names it registers and checked by tests/interpreter/test_deferred_families.py)
is imported for a program whose text has one of its words (the last word of one of its names, or its module's),
Keras-lite for one with a first word of its names (``families.KERAS``), a family that answers a hook (``HOOKS``) when
the interpreter first asks it, and every family for a name no loaded family has. Add a family by adding its module
to the table (``python tests/interpreter/test_deferred_families.py``), and its hooks to ``HOOKS``.
"""
from tapecli import ops as _ops
from tapecli.library import core  # noqa: F401
from tapecli.library.families import KERAS as _KERAS_WORDS, WORDS as _WORDS
from tapecli.interpreter.registry import defer as _defer

# The hooks each deferred family answers: the interpreter's first question imports it (checked against what the
# families register by tests/interpreter/test_deferred_families.py). The last two register no builtin: NumPy's
# arrays written in place, and what is left out of tapecli, and why.
HOOKS = {"numpy_forms": ("host_module_name",), "python": ("python_attribute",),
         "numpy_writes": ("numpy_item", "numpy_set_item", "numpy_in_place"), "scope": ("out_of_scope", "tensorflow_lacks")}
# NumPy's forms for a program that reads a name of np (classes.Namespace: also where it imports numpy as onp)
_MORE_WORDS = {"numpy_forms": ("np",)}

# The op families whose ops have builtin names: imported for a program that names one (core registers them then)
for _family, _builtins in _ops.BUILTINS.items():
    _defer(f"tapecli.ops.{_family}", _builtins)
for _module, _words in _WORDS.items():      # in the order they import each other
    _defer(f"tapecli.library.{_module}", [*_words.split(), *_MORE_WORDS.get(_module, ())], HOOKS.get(_module, ()))
for _module in HOOKS.keys() - _WORDS.keys():
    _defer(f"tapecli.library.{_module}", (), HOOKS[_module])
_defer("tapecli.library.keras_names", _KERAS_WORDS.split())

from tapecli.library import replay_kinds  # noqa: F401,E402  (what the common builtins are to a loop plan; last)
