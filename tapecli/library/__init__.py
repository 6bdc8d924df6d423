"""The builtin library, a room above the interpreter: the TensorFlow vocabulary (core, tf_math, tf_nn, tf_linalg),
Python's builtins and methods (python) and Keras-lite (keras/, its names in keras_names). Each module registers its
names with ``@builtin`` (``interpreter/registry.py``), and the library answers the interpreter's questions through
the registry's hooks: the library imports the interpreter, the interpreter imports nothing of the library.

Importing this package registers them all (the api does, before it builds an Interpreter), but Keras-lite, whose
import is deferred to the first program that may use it (``registry.defer``, ``keras_words``); add a family by
adding its module here.
"""
from tapecli.library import core  # noqa: F401
from tapecli.library import tf_math  # noqa: F401
from tapecli.library import tf_nn  # noqa: F401
from tapecli.library import tf_linalg  # noqa: F401
from tapecli.library import tf_array  # noqa: F401
from tapecli.library import tf_nn_losses  # noqa: F401
from tapecli.library import tf_random  # noqa: F401
from tapecli.library import tf_random_generator  # noqa: F401
from tapecli.library import tf_linalg_more  # noqa: F401
from tapecli.library import tf_segments  # noqa: F401
from tapecli.library import tf_linear_operators  # noqa: F401
from tapecli.library import tf_array_more  # noqa: F401
from tapecli.library.keras_words import WORDS as _KERAS_WORDS
from tapecli.interpreter.registry import defer as _defer
from tapecli.library import python  # noqa: F401  (Python's sum/min/max rule, §11)
from tapecli.library import tf_scopes  # noqa: F401  (scopes and checks of eager TensorFlow)
from tapecli.library import control  # noqa: F401  (functional control flow, gradient wrappers)
from tapecli.library import data  # noqa: F401  (tf.data in memory)
from tapecli.library import numpy_forms  # noqa: F401  (NumPy beside the tape)
from tapecli.library import scope  # noqa: F401  (what is left out, and why)
from tapecli.library import replay_kinds  # noqa: F401  (what the common builtins are to a loop plan; last)

_defer("tapecli.library.keras_names", _KERAS_WORDS)
