"""TensorFlow programs CPython runs (tapecli/execution/tensorflow.py): a program's Keras subclasses, PyDatasets
and derived classes, which the bridge takes where Keras would run them (the programs test_tf_bridge.py runs on both
runners, and recorded ones), and what a tf.function prints while it traces."""
from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from tapecli import api, documents, execution
from tapecli.errors import TdfError
from tapecli.execution import tensorflow

from execution.test_tf_bridge import PROGRAMS


def test_a_keras_subclass_on_cpython_answers_as_keras_does(monkeypatch):
    """What the interpreter does not give a program's Keras subclass, CPython's does as Keras 3 does (recorded in
    the development venv): its name, its layers, its weights in Keras's order, get/set_weights."""
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "1")
    result = api.run_source(PROGRAMS["a_keras_subclass_in_a_custom_loop"] + (
        "print(model.name, [type(l).__name__ for l in model.layers], [w.shape for w in model.get_weights()])\n"
        "model.set_weights([w * 0 for w in model.get_weights()])\nprint(float(tf.reduce_sum(model(x))))\n"), "p.py")
    assert isinstance(result.interpreter, execution.PythonRun)
    assert result.output[-2:] == ["mlp ['Linear', 'Dense'] [(1, 8), (8,), (8, 1), (1,)]", "0.0"]


def test_a_program_fitting_its_keras_subclass_runs_on_cpython(monkeypatch):
    """compile and fit of a program's Model subclass are the library Trainer's on CPython too (keras_fitting.py)."""
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "1")
    source = ("import tensorflow as tf\nimport numpy as np\nclass M(tf.keras.Model):\n    def __init__(self):\n"
              "        super().__init__()\n        self.d = tf.keras.layers.Dense(1, kernel_initializer='ones')\n"
              "    def call(self, x):\n        return self.d(x)\n"
              "m = M()\nm.compile(optimizer='sgd', loss='mse')\n"
              "h = m.fit(np.ones((4, 2)), np.zeros((4, 1)), epochs=2, verbose=0)\n"
              "print([round(v, 4) for v in h.history['loss']], m.count_params())\n")
    assert tensorflow.why_not_on_cpython(source) is None
    result = api.run_source(source, "p.py")
    assert isinstance(result.interpreter, execution.PythonRun)
    assert result.output == ["[4.0, 3.5344] 3"]


def test_a_class_derived_from_tensorflows_through_a_name_is_judged_by_what_the_name_holds():
    """``Base = keras.callbacks.EarlyStopping`` then ``class X(Base)``: the interpreter's, as ``class X(keras.
    callbacks.EarlyStopping)`` is (CPython's run would fail at the class statement); a Keras base the bridge gives
    stays CPython's."""
    head = "import tensorflow as tf\nimport keras\n"
    assert "line 4 derives the class X" in tensorflow.why_not_on_cpython(
        head + "Base = keras.callbacks.EarlyStopping\nclass X(Base):\n    pass\n")
    assert tensorflow.why_not_on_cpython(
        head + "Base = keras.regularizers.Regularizer\nclass X(Base):\n    pass\nBase = object\n") is None


def test_a_class_derived_from_a_concrete_keras_optimizer_or_metric_runs_on_cpython_only(monkeypatch):
    """``class C(keras.optimizers.SGD)`` is CPython's (its overrides called back: keras_derived.py); the interpreter
    refuses it saying so, and a concrete class whose overrides the library cannot call (a callback) is refused."""
    head = "import tensorflow as tf\nimport keras\n"
    source = head + ("class C(keras.optimizers.SGD):\n    def apply(self, grads, variables=None):\n"
                     "        return super().apply([2.0 * g for g in grads], variables)\n"
                     "v = tf.Variable([1.0])\nC(0.5).apply_gradients([(tf.constant([1.0]), v)])\nprint(v.numpy())\n")
    assert tensorflow.why_not_on_cpython(source) is None and tensorflow.interpreter_refuses(ast.parse(source))
    assert api.run_source(source, "p.py").output == ["[0.]"]
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "0")
    with pytest.raises(TdfError) as e:
        api.run_source(source, "p.py")
    assert (e.value.kind, e.value.line) == ("TypeError", 3) and "cannot derive a class from Keras's SGD" in \
        e.value.message and "CPython" in e.value.hint
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "auto")
    assert "line 3 derives the class D" in tensorflow.why_not_on_cpython(
        head + "class D(keras.callbacks.EarlyStopping):\n    pass\n")
    assert tensorflow.why_not_on_cpython(head + "class D(keras.layers.Dense):\n    pass\n") is None


def test_a_class_derived_from_a_concrete_keras_layer_holds_the_library_layer(monkeypatch):
    """``class D(keras.layers.Dense)`` is a program's layer holding the library's Dense (keras_derived.DerivedLayer):
    not one of the layers it holds; a model is not a layer to derive from (a program's model derives keras.Model);
    the interpreter refuses a concrete layer as a base, saying CPython runs it."""
    head = "import tensorflow as tf\nimport keras\n"
    source = head + ("class D(keras.layers.Dense):\n    pass\nd = D(2)\nd(tf.ones((1, 3)))\n"
                     "print(d.layers, len(d.weights), d.kernel.shape)\n")
    assert api.run_source(source, "p.py").output == ["[] 2 (3, 2)"]
    assert "line 3 derives the class S" in tensorflow.why_not_on_cpython(
        head + "class S(keras.Sequential):\n    pass\n")
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "0")
    with pytest.raises(TdfError) as e:
        api.run_source(source, "p.py")
    assert "cannot derive a class from Keras's Dense" in e.value.message and "layers" in e.value.hint


@pytest.mark.parametrize("body, line, message", [
    ("class S(keras.optimizers.SGD):\n    def update_step(self, g, v, lr):\n        pass\n", 3,
     "tapecli cannot run S.update_step: Keras's SGD calls update_step itself, which tapecli's does not call back"),
    ("class M(keras.metrics.Mean):\n    def __init__(self):\n        self.k = 1\nM().update_state([1.0])\n", 6,
     "M.__init__ must call super().__init__() before the object is used"),
    ("m = keras.metrics.Mean()\nm.update_state([1.0], [1.0], sample_weight=[1.0])\n", 4,
     "update_state got multiple values for argument 'sample_weight'"),
])
def test_a_derived_keras_class_that_keras_would_run_otherwise_is_an_error_at_its_line(body, line, message):
    with pytest.raises(TdfError) as e:
        api.run_source("import tensorflow as tf\nimport keras\n" + body, "p.py")
    assert (e.value.kind, e.value.line) == ("TypeError", line) and message in e.value.message


def test_the_interpreter_refuses_keras_saving_registry_lookups(monkeypatch):
    """The interpreter takes ``@register_keras_serializable`` on a class as the class itself: a lookup in the
    registry it never filled is an error naming CPython, not a name as if nothing were registered."""
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "0")
    with pytest.raises(TdfError) as e:
        api.run_source("import tensorflow as tf\nimport keras\n@keras.saving.register_keras_serializable('p')\n"
                       "class R(keras.regularizers.Regularizer):\n    def get_config(self):\n        return {}\n"
                       "print(keras.saving.get_registered_name(R))\n", "p.py")
    assert (e.value.kind, e.value.line) == ("TypeError", 7) and "CPython" in e.value.hint
    assert tensorflow.interpreter_refuses(ast.parse("import keras\nprint(keras.saving.get_registered_object('p>R'))\n"))


KERAS_ON_CPYTHON = json.loads((Path(__file__).parents[1] / "data" / "tf_programs_keras_cpython.json").read_text())


@pytest.mark.parametrize("name", sorted(KERAS_ON_CPYTHON))
def test_a_program_fitting_its_keras_classes_is_one_the_bridge_accepts(name):
    """A program's Model subclass fitted, and its Loss, Metric, Callback, LearningRateSchedule, Regularizer and
    Constraint (recorded in tests/data/tf_programs_keras_cpython.json, whose outputs both runners match): CPython's
    to run."""
    assert tensorflow.why_not_on_cpython(KERAS_ON_CPYTHON[name]["program"]) is None


PYDATASETS = json.loads((Path(__file__).parents[1] / "data" / "tf_programs_pydataset.json").read_text())


@pytest.mark.parametrize("name", sorted(PYDATASETS))
def test_a_program_s_pydataset_is_one_the_bridge_accepts(name):
    """A program's keras.utils.PyDataset or Sequence subclass, and a Python generator, as fit's data (recorded in
    tests/data/tf_programs_pydataset.json, whose outputs both runners match): CPython's to run."""
    assert tensorflow.why_not_on_cpython(PYDATASETS[name]["program"]) is None


def test_a_pydataset_on_cpython_has_keras_s_defaults_and_warning(monkeypatch):
    """A Sequence subclass whose __init__ does not call super().__init__: Keras's options, with its warning, and
    its batches iterated."""
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "1")
    source = ("import numpy as np\nimport keras\nclass S(keras.utils.Sequence):\n    def __init__(self):\n"
              "        self.n = 1\n    def __len__(self):\n        return self.n\n    def __getitem__(self, i):\n"
              "        return np.ones((2, 1)), np.ones((2, 1))\n"
              "s = S()\nprint(s.workers, s.max_queue_size, s.num_batches, [b[0].shape for b in s])\n")
    result = api.run_source(source, "p.py")
    assert isinstance(result.interpreter, execution.PythonRun)
    assert result.output == ["1 10 1 [(2, 1)]"]
    [warning] = documents.run_doc(result)["warnings"]
    assert warning["message"].startswith("Your `PyDataset` class should call `super().__init__(**kwargs)`")


@pytest.mark.parametrize("source, reason", [
    ("class Cell(tf.keras.layers.Layer):\n    def __init__(self):\n        super().__init__()\n"
     "        self.state_size = 4\n",
     "line 5 gives a class derived from Keras's a state_size"),
])
def test_what_a_program_s_keras_model_does_on_the_interpreter_only_keeps_it_there(source, reason):
    found = tensorflow.why_not_on_cpython("import tensorflow as tf\n" + source)
    assert found is not None and found.startswith(reason)


@pytest.mark.parametrize("source", [
    "class M(tf.keras.Model):\n    def __init__(self, i, o):\n        super().__init__(i, o)\n",
    "class M(tf.keras.Model):\n    pass\nm = M(inputs=1, outputs=2)\n",
])
def test_a_functional_keras_model_subclass_runs_on_cpython(source):
    """Its graph is the library's functional model, held by the program's instance (keras_classes.Model); the
    recorded program functional_subclass_train_step checks what it computes."""
    assert tensorflow.why_not_on_cpython("import tensorflow as tf\n" + source) is None


def test_a_keras_model_subclass_s_summary_runs_on_cpython():
    """keras_classes.Model.summary; the recorded programs summary_subclassed_model and summary_functional_subclass
    check what it prints."""
    assert tensorflow.why_not_on_cpython("import tensorflow as tf\nclass M(tf.keras.Model):\n    pass\n"
                                         "M().summary()\n") is None


TRACING = """import tensorflow as tf

@tf.function
def f(x):
    print("Tracing")
    tf.print("Executing", x)
    return x * 2

f(tf.constant(1.0))
f(tf.constant(2.0))
f(tf.constant([1.0, 2.0]))
f(2.0)
f(2.0)
f(3.0)
w = tf.Variable(1.0)
for i in range(3):
    y = f(w * i)
g = tf.function(lambda v: print("lambda traced") or v + 1)
g(tf.constant(1))
g(tf.constant(2))
print(float(y))
"""


def test_a_tf_function_prints_while_tracing_as_tensorflow_does(monkeypatch):
    """A tf.function's Python print runs when TensorFlow traces it (a new shape or dtype of a tensor, a new
    Python value), not on the calls that run the traced graph; tf.print runs on every call. TensorFlow 2.21's
    output, on both runners (loop plans on)."""
    tensorflow_printed = ["Tracing", "Executing 1", "Executing 2", "Tracing", "Executing [1 2]", "Tracing",
                          "Executing 2.0", "Executing 2.0", "Tracing", "Executing 3.0", "Executing 0", "Executing 1",
                          "Executing 2", "lambda traced", "4.0"]
    for on in ("0", "1"):
        monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on)
        assert api.run_source(TRACING, "p.py").output == tensorflow_printed


KEYWORDS = """\
import tensorflow as tf
losses = [tf.constant(0.5), tf.constant(0.25), tf.constant(0.75)]
print(min(losses, key=float).numpy(), max(losses, key=lambda t: float(t)).numpy())
print(round(sum(float(l) for l in losses), 2), sorted([3, 1, 2], reverse=True))
"""


def test_a_keyword_the_interpreters_builtin_lacks_sends_the_program_to_cpython():
    """min(xs, key=float): Python's keyword, which the interpreter's min (TensorFlow's reduction too) does not
    take; such a program runs on CPython, as every program whose builtins the interpreter refuses. The lines
    are what TensorFlow 2.21 under CPython printed."""
    from tapecli.execution.tensorflow import interpreter_refuses
    assert interpreter_refuses(ast.parse(KEYWORDS))
    assert not interpreter_refuses(ast.parse("import tensorflow as tf\nprint(1, sep='', end='\\n')\n"))
    assert api.run(KEYWORDS).output == ["0.25 0.75", "1.5 [3, 2, 1]"]
