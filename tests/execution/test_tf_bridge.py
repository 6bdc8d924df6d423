"""TensorFlow programs that CPython runs (tapecli/execution/tensorflow.py), against the interpreter.

Each program of the table runs twice: on CPython (TAPECLI_TF_ON_CPYTHON=1) and on the interpreter (=0).
What it prints, the JSON of its values (``run --json``'s ``values``) and its gradient requests (``grad --json``'s
``gradients``) must be the same. Routing is decided from the text: a program that uses what the bridge does not
give stays on the interpreter. And Python's forms that the interpreter does not have run as CPython runs them."""
from __future__ import annotations

import ast
import contextlib
import io
import textwrap

import numpy as np
import pytest

from tapecli import api, documents, execution
from tapecli.errors import TdfError

from conftest import fast_paths

PROGRAMS = {
    "first_gradient": """
import tensorflow as tf
x = tf.Variable(3.0)
with tf.GradientTape() as tape:
    y = x ** 2
dy_dx = tape.gradient(y, x)
print(dy_dx, dy_dx.numpy())
""",
    "lists_and_dicts_of_sources": """
import tensorflow as tf
w = tf.Variable([[1.0, -2.0], [0.5, 3.0], [-1.5, 0.25]], name='w')
b = tf.Variable(tf.zeros(2, dtype=tf.float32), name='b')
x = [[1., 2., 3.]]
with tf.GradientTape(persistent=True) as tape:
    y = x @ w + b
    loss = tf.reduce_mean(y ** 2)
[dl_dw, dl_db] = tape.gradient(loss, [w, b])
grad = tape.gradient(loss, {'w': w, 'b': b})
print(loss, dl_db)
""",
    "watch_and_constants": """
import tensorflow as tf
x = tf.constant(3.0)
k = tf.constant(2.0)
with tf.GradientTape(persistent=True) as g:
    g.watch(x)
    y = x * x + tf.sin(x) - 1 / x + k
dy = g.gradient(y, x)
dk = g.gradient(y, k)
print(f"{float(dy):.4f}", dy.shape, dy.dtype)
""",
    "nested_tapes": """
import tensorflow as tf
x = tf.Variable(1.5)
with tf.GradientTape() as outer:
    with tf.GradientTape() as inner:
        y = x ** 3 + tf.exp(x)
    dy = inner.gradient(y, x)
d2y = outer.gradient(dy, x)
print(dy, d2y)
""",
    "model_class_training_loop": """
import tensorflow as tf
class Model:
    def __init__(self):
        self.w = tf.Variable([0.5, -0.5])
        self.b = tf.Variable(0.0)
    def __call__(self, x):
        return tf.reduce_sum(self.w * x, axis=1) + self.b
model = Model()
xs = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
ys = tf.constant([1.0, 2.0, 3.0])
losses = []
for step in range(4):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(xs) - ys))
    dw, db = tape.gradient(loss, [model.w, model.b])
    model.w.assign_sub(0.01 * dw)
    model.b.assign_sub(0.01 * db)
    losses.append(float(loss))
w = model.w.numpy()
print(model.w, losses[-1])
""",
    "indexing_and_comparisons": """
import tensorflow as tf
import numpy as np
x = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
v = tf.Variable(2.0)
with tf.GradientTape() as t:
    t.watch(x)
    z = x[0] * v + x[:, 1] @ x[1, :2] - (-x[1, 2])
    big = x > 3.0
s = t.gradient(z, [x, v])
first, second = s
print(z, big, x.shape[0], len(x), x[1][2])
n = np.sum(x.numpy()) + 1
def as_f32(a):
    return tf.constant(a, dtype=tf.float32)
converted = as_f32(np.array([1, 2])) * 2.0
""",
    "nn_and_math": """
import tensorflow as tf
x = tf.Variable([[-1.0, 0.5], [2.0, -3.0]])
with tf.GradientTape() as t:
    h = tf.nn.relu(x) + tf.math.log(tf.nn.sigmoid(x)) + tf.nn.softmax(x, axis=-1)
    out = tf.reduce_sum(tf.matmul(h, tf.transpose(x)))
g = t.gradient(out, x)
stacked = tf.stack([1.0, 2.0]) + tf.concat([[1.0], [2.0]], 0)
print(out.numpy(), g, stacked)
""",
    "assign_and_stop_recording": """
import tensorflow as tf
v = tf.Variable([1.0, 2.0])
u = tf.Variable(3.0)
with tf.GradientTape(persistent=True) as t:
    a = v * u
    with t.stop_recording():
        b = a * 2.0
    c = tf.reduce_sum(a + b)
gv = t.gradient(c, v).numpy()
gu = t.gradient(c, u)
v.assign_add([1.0, 1.0])
u.assign(5.0)
print(v, u, gv, gu)
""",
    "unconnected_is_none": """
import tensorflow as tf
x = tf.constant(1.0)
v0 = tf.Variable(2.0)
v1 = tf.Variable(2.0)
with tf.GradientTape(persistent=True) as tape:
    tape.watch(x)
    if x > 0.0:
        result = v0
    else:
        result = v1 ** 2
dv0, dv1 = tape.gradient(result, [v0, v1])
dx = tape.gradient(result, x)
print(dv0, dv1, dx)
""",
    "jacobians": """
import tensorflow as tf
x = tf.Variable([1.0, 2.0, 3.0])
with tf.GradientTape(persistent=True) as t:
    y = tf.tanh(x) * x
    s = tf.reduce_sum(y)
j = t.jacobian(y, x)
g = t.gradient(s, [x])
xs = tf.constant([[1.0, 2.0], [3.0, 4.0]])
with tf.GradientTape() as tb:
    tb.watch(xs)
    ys = xs ** 2
bj = tb.batch_jacobian(ys, xs)
print(j.shape, bj.shape)
""",
    "rebinding_a_variable_warns": """
import tensorflow as tf
x = tf.Variable(1.0)
y = x
with tf.GradientTape() as t:
    y = tf.sin(y)
g = t.gradient(y, x)
x = x - 0.1 * g
""",
    "add_n_of_numbers_and_rows": """
import tensorflow as tf
v = tf.Variable([1.0, 2.0])
with tf.GradientTape() as t:
    y = tf.add_n(v) + tf.add_n([1.0, 2.0])
g = t.gradient(y, v)
print(y, g, tf.add_n([[1., 2.], [3., 4.]]), tf.add_n([1, 2]), tf.add_n([tf.constant(1.0), 2.0]))
""",
    "random_draws_as_the_interpreters": """
import tensorflow as tf
a = tf.random.normal([3])
b = tf.random.uniform([2], minval=1.0, maxval=2.0)
tf.random.set_seed(7)
c = tf.random.normal([2], seed=3)
d = tf.random.truncated_normal([2])
e = tf.random.shuffle(tf.constant([1, 2, 3, 4]))
gen = tf.random.Generator.from_seed(5)
f = gen.normal([2])
h = gen.uniform([2], maxval=10, dtype=tf.int32)
k = tf.random.get_global_generator().normal([2])
m = tf.random.categorical(tf.math.log([[0.5, 0.5]]), 3)
n = tf.random.stateless_normal([2], seed=[1, 2])
w = tf.Variable(tf.random.normal([2]))
with tf.GradientTape() as t:
    y = tf.reduce_sum(w * tf.random.uniform([2]))
gr = t.gradient(y, w)
print(a, b, c, d, e, f, h, k, m, n, gr)
""",
    "tf_function_forms": """
import tensorflow as tf
log = []
@tf.function
def square(x):
    return x * x
@tf.function(input_signature=[tf.TensorSpec(shape=[None], dtype=tf.float32)], reduce_retracing=True)
def scaled(x):
    log.append(1)
    return 2.0 * tf.reduce_sum(x)
@tf.function(jit_compile=True)
def cube(x):
    return x ** 3
cubed = tf.function(cube)
x = tf.Variable([1.0, 2.0])
with tf.GradientTape(persistent=True) as tape:
    y = tf.reduce_sum(square(x)) + scaled(x) + tf.reduce_sum(cubed(x))
g = tape.gradient(y, x)
print(y, g, len(log))
""",
    "custom_gradient_forms": """
import tensorflow as tf
@tf.custom_gradient
def clip_grad(x):
    y = tf.identity(x)
    def grad(dy):
        return tf.clip_by_value(dy, -0.5, 0.5)
    return y, grad
@tf.custom_gradient
def log1pexp(x):
    e = tf.exp(x)
    def grad(upstream):
        return upstream * (1 - 1 / (1 + e))
    return tf.math.log(1 + e), grad
w = tf.Variable(2.0)
@tf.custom_gradient
def scaled(x):
    def grad(dy, variables=None):
        return dy * w, [dy * x * 10.0]
    return x * w, grad
def double(x):
    return x * 2.0, lambda dy: dy * 3.0
tripled = tf.custom_gradient(double)
@tf.custom_gradient
def square(x):
    def grad(dy):
        return dy * 2.0 * x
    return x * x, grad
x = tf.Variable([1.0, 100.0])
with tf.GradientTape(persistent=True) as t:
    with tf.GradientTape() as inner:
        a = tf.reduce_sum(clip_grad(x * 3.0)) + tf.reduce_sum(log1pexp(x))
        b = scaled(x[0]) + tripled(x[1])
        s = tf.reduce_sum(square(x))
    ga = inner.gradient(s, x)
da = t.gradient(a, x)
db = t.gradient(b, [x, w])
d2 = t.gradient(ga, x)
print(a, b, da, db, d2)
""",
    "tf_data_pipelines": """
import tensorflow as tf
xs = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]])
ys = tf.constant([1.0, 2.0, 3.0, 4.0])
ds = tf.data.Dataset.from_tensor_slices((xs, ys)).map(lambda x, y: (x * 2.0, y)).batch(2).prefetch(1)
w = tf.Variable([0.5, -0.5])
losses = []
for bx, by in ds:
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((tf.reduce_sum(bx * w, axis=1) - by) ** 2)
    g = tape.gradient(loss, w)
    w.assign_sub(0.01 * g)
    losses.append(float(loss))
r = [int(v) for v in tf.data.Dataset.range(10).filter(lambda v: v % 3 == 0).take(3)]
it = tf.data.Dataset.range(3).as_numpy_iterator()
first = next(it)
card = tf.data.Dataset.range(5).skip(1).repeat(2).cardinality()
pairs = list(tf.data.Dataset.zip((tf.data.Dataset.range(2), tf.data.Dataset.range(2).map(lambda v: v * 10))))
print(losses, r, first, card, w, pairs)
""",
    "keras_built_ins_in_a_custom_loop_and_fit": """
import numpy as np
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import layers
x = np.linspace(-1, 1, 16, dtype="float32")[:, None]
y = 3 * x + 1
model = keras.Sequential([layers.Dense(4, activation="relu"), layers.Dense(1)])
opt = tf.keras.optimizers.SGD(learning_rate=0.1)
loss_fn = keras.losses.MeanSquaredError()
for step in range(3):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
model.compile(optimizer="adam", loss="mse")
history = model.fit(x, y, epochs=2, batch_size=8, verbose=0)
kinds = [isinstance(model, keras.Model), isinstance(model.layers[0], layers.Layer),
         isinstance(model.layers[0], layers.Dense), isinstance(loss_fn, keras.losses.Loss),
         isinstance(model.layers[0], tf.Module)]
print(float(loss), sorted(history.history), len(model.layers), kinds)
""",
    "a_keras_subclass_in_a_custom_loop": """
import numpy as np
import tensorflow as tf
from tensorflow import keras
class Linear(keras.layers.Layer):
    def __init__(self, units=4, **kwargs):
        super().__init__(**kwargs)
        self.units = units
    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer="random_normal", name="w")
        self.b = self.add_weight(shape=(self.units,), initializer="zeros", name="b")
    def call(self, inputs):
        self.add_loss(1e-3 * tf.reduce_sum(tf.square(self.w)))
        return tf.matmul(inputs, self.w) + self.b
class MLP(keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = Linear(8)
        self.out = keras.layers.Dense(1)
    def call(self, x, training=False):
        return self.out(tf.nn.relu(self.hidden(x)))
model = MLP()
x = tf.constant(np.linspace(-1, 1, 16, dtype=np.float32)[:, None])
y = 2.0 * x + 1.0
opt = keras.optimizers.SGD(0.1)
for step in range(3):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(x, training=True) - y) ** 2) + sum(model.losses)
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
print(round(float(loss), 4), [v.name for v in model.trainable_variables], len(model.layers), len(model.losses),
      isinstance(model, keras.Model), isinstance(model.hidden, keras.layers.Layer), isinstance(model.hidden, keras.Model))
""",
    "a_tf_module_holding_variables_and_modules": """
import tensorflow as tf
class Dense(tf.Module):
    def __init__(self, d_in, d_out, name=None):
        super().__init__(name=name)
        self.w = tf.Variable(tf.ones([d_in, d_out]), name="w")
        self.b = tf.Variable(tf.zeros([d_out]), name="b")
    def __call__(self, x):
        return tf.nn.relu(x @ self.w + self.b)
class Stack(tf.Module):
    def __init__(self):
        super().__init__()
        self.first = Dense(3, 2)
        self.second = Dense(2, 1, name="out")
        self.frozen = tf.Variable(2.0, trainable=False)
    def __call__(self, x):
        return self.second(self.first(x)) * self.frozen
net = Stack()
with tf.GradientTape() as tape:
    y = tf.reduce_sum(net(tf.constant([[1.0, 2.0, 3.0]])))
grads = tape.gradient(y, net.trainable_variables)
print(net.name, net.second.name, len(net.variables), len(net.trainable_variables), len(net.submodules),
      isinstance(net, tf.Module), isinstance(net.first, Dense))
""",
}


@pytest.fixture(params=sorted(PROGRAMS))
def program(request):
    return PROGRAMS[request.param]


def _documents(source: str, monkeypatch, on: bool) -> tuple:
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "1" if on else "0")
    result = api.run_source(source.lstrip(), "<test>")
    assert (isinstance(result.interpreter, execution.PythonRun)) == on
    run = documents.run_doc(result)
    grad = documents.requests_doc("grad", result, ("gradient",))
    jacobian = documents.requests_doc("jacobian", result, ("jacobian", "batch_jacobian"))
    return run["output"], run["values"], grad["gradients"], run["warnings"], jacobian["jacobians"]


def _same(bridged, interpreted) -> bool:
    """JSON values alike; a float CPython holds as a Python float (``float(t)`` of a float32 tensor) may be
    written with more digits than the interpreter's float32 literal: equal once rounded to float32."""
    if isinstance(bridged, list) and isinstance(interpreted, list):
        return len(bridged) == len(interpreted) and all(map(_same, bridged, interpreted))
    if isinstance(bridged, dict) and isinstance(interpreted, dict):
        return bridged.keys() == interpreted.keys() and all(_same(bridged[k], interpreted[k]) for k in bridged)
    if isinstance(bridged, float) and isinstance(interpreted, float):
        return bridged == interpreted or np.float32(bridged) == np.float32(interpreted)
    return bridged == interpreted and type(bridged) is type(interpreted)


def test_bridged_as_the_interpreter_runs_it(program, monkeypatch):
    bridged = _documents(program, monkeypatch, True)
    interpreted = _documents(program, monkeypatch, False)
    assert "\n".join(bridged[0]) == "\n".join(interpreted[0])     # printed output (as lines, or one a print)
    objects = {k for k in bridged[1].keys() - interpreted[1].keys() if bridged[1][k] is None}
    assert _same({k: v for k, v in bridged[1].items() if k not in objects}, interpreted[1])    # values
    assert bridged[2] == interpreted[2]             # gradient requests: names, labels, lines, values
    assert bridged[2]                               # (every program asks for gradients)
    assert bridged[3] == interpreted[3]             # warnings
    assert bridged[4] == interpreted[4]             # jacobian requests
    first = bridged[2][0]
    options = api.Options(of=first["target"], wrt=[first["source"]])
    explained = []
    for on in ("1", "0"):
        monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on)
        explained.append(api.explain(program.lstrip(), "<test>", options))
    assert explained[0] == explained[1]             # tapecli explain: the chain of lines and ops, or why None


@pytest.mark.parametrize("source", [
    "import tensorflow as tf\nclass M(tf.keras.Sequential):\n    pass\n",        # a Keras class not a base here
    "import tensorflow as tf\nm = tf.math\ny = m.exp(1.0)\n",                     # a module as a value
    "import tensorflow as tf\nr = tf.random\n",                                    # (one whose objects are held)
    "import tensorflow as tf\nn = tf.data.NOT_A_NAME\n",                           # a name the library lacks
    "from tensorflow import *\nx = constant(1.0)\n",                             # a star import
    "import tensorflow as tf\nimport tf_keras\nx = tf.constant(1.0)\n",           # another framework
])
def test_routing_is_conservative(source, monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "1")
    assert execution.python_only(source) is None


def test_routed_when_every_name_is_supported(monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "1")
    tree = execution.python_only("import tensorflow as tf\nx = tf.math.exp(tf.constant(1.0))\n")
    assert isinstance(tree, ast.Module)
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "0")
    assert execution.python_only("import tensorflow as tf\nx = tf.math.exp(tf.constant(1.0))\n") is None


PYTHON_FORMS = """
import tensorflow as tf

class Base:
    @staticmethod
    def scale():
        return 2.0

class Child(Base):
    pass

def squares(n):
    for i in range(n):
        yield tf.constant(float(i)) ** 2

x = tf.Variable(3.0)
c = Child()
kind = isinstance(c, Base) and not isinstance(x, tf.Tensor) and isinstance(x * 1.0, tf.Tensor)
steps = []
try:
    with tf.GradientTape() as tape:
        y = x * Child.scale() + sum(squares(3))
        raise ValueError("stop")
except ValueError as e:
    steps.append(str(e))
finally:
    steps.append("finally")
g = tape.gradient(y, x)
big = 2 ** 100 + 1
print(kind, steps, g, big)
"""


def test_python_forms_in_a_tensorflow_program(monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "1")
    result = api.run_source(PYTHON_FORMS, "<test>")
    assert isinstance(result.interpreter, execution.PythonRun)
    assert result.output == ["True ['stop', 'finally'] tf.Tensor(2.0, shape=(), dtype=float32) "
                             "1267650600228229401496703205377"]
    [request] = result.requests
    assert (request.target_text, request.labels, request.names, request.line) == ("y", ["x"], ["g"], 28)
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "0")
    with pytest.raises(TdfError):                   # the interpreter has no try/raise, nor yield
        api.run_source(PYTHON_FORMS, "<test>")


def test_tensor_internals_stay_out_of_reach(monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "1")
    for line in ("y = g._of", "y = g.rng", "y = vars(g)", "g.rng = 1", "y = type(g)(x, None)", "y = d.source",
                 "y = d.interp", "y = d._of.source", "y = next(d)", "y = x.value",
                 "y = x.id", "x.weak = True", "y = x._value", "y = v.version", "y = t.tape", "y = t.interp",
                 "y = t.method", "t.persistent = True"):
        source = (f"import tensorflow as tf\nx = tf.constant([1.0])\nv = tf.Variable(1.0)\nt = tf.GradientTape()\n"
                  f"g = tf.random.Generator.from_seed(1); d = tf.data.Dataset.range(2)\n{line}\n")
        with pytest.raises(TdfError) as caught:
            api.run_source(source, "<test>")
        assert caught.value.line == 6


def test_a_programs_keras_objects_lead_to_no_run_internals(monkeypatch):
    """A program's Loss, Metric, Callback or schedule holds nothing of the run's: the library's view of it, which
    holds the run's Eager (whose methods read attributes unguarded), is the library's alone."""
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "1")
    classes = ("class L(tf.keras.losses.Loss):\n    def call(self, a, b):\n        return a - b\n"
               "class C(tf.keras.callbacks.Callback):\n    pass\n"
               "class S(tf.keras.optimizers.schedules.LearningRateSchedule):\n    def __call__(self, step):\n"
               "        return 0.1\n")
    for line in ("y = vars(L())['_keras_eager']", "y = L()._library_view()", "y = [v for v in vars(C()).values()]"
                 "[0]", "y = S()._library_view", "y = L().__dict__['_keras_eager']"):
        with pytest.raises(TdfError) as caught:
            api.run_source(f"import tensorflow as tf\n{classes}{line}\n", "<test>")
        assert caught.value.line == 10, line


def _limited(source: str, monkeypatch):
    """The LimitError of running ``source`` on CPython within 1,000 steps."""
    from tapecli.errors import LimitError
    from tapecli.runtime.limits import Limits
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "1")
    with pytest.raises(LimitError) as caught:
        api.run_source(source, "<test>", api.Options(limits=Limits(max_steps=1000)))
    return caught.value


def test_limits_hold_in_a_tensorflow_program(monkeypatch):
    source = "import tensorflow as tf\nx = tf.constant(1.0)\nwhile x > 0.0:\n    x = x * 1.0\n"
    assert _limited(source, monkeypatch).line == 3


TRAINING_LOOP = """
import tensorflow as tf
w = tf.Variable(1.0)
for step in range(8):
    with tf.GradientTape() as tape:
        loss = w * w
    g = tape.gradient(loss, w)
    w.assign_sub(0.1 * g)
"""


@fast_paths        # (its training loops are told apart by their replayed iterations)
def test_by_default_cpython_runs_what_the_bridge_takes_but_a_training_loop_only_the_interpreter_plans(monkeypatch):
    """TAPECLI_TF_ON_CPYTHON=auto (the default): CPython runs every program the bridge takes, those the
    interpreter's parser refuses (try/raise, yield, @staticmethod) and those it could run (Python's values are
    Python's: 2**100 is Python's int; a tensor has no NumPy method, as in TensorFlow), a training loop too, whose
    iterations its loop plans replay (execution/planned_loops.py; one in a function too), but one with a training
    loop the interpreter's loop plans run and CPython's do not. =1: CPython runs that one too; =0: the interpreter
    runs what it can."""
    monkeypatch.delenv("TAPECLI_TF_ON_CPYTHON", raising=False)
    assert isinstance(api.run_source(PYTHON_FORMS, "<test>").interpreter, execution.PythonRun)
    plain = api.run_source("import tensorflow as tf\nx = tf.math.exp(tf.constant(1.0))\nprint(2**100, 10**20 // 10**19)\n",
                           "<test>")
    assert isinstance(plain.interpreter, execution.PythonRun)
    assert plain.output == ["1267650600228229401496703205376 10"]
    with pytest.raises(TdfError, match="'EagerTensor' object has no attribute 'T'"):
        api.run_source("import tensorflow as tf\nx = tf.ones([2, 3])\ny = x.T\n", "<test>")
    loop = api.run_source(TRAINING_LOOP, "<test>")
    assert isinstance(loop.interpreter, execution.PythonRun) and loop.context.loop_replayed > 0
    head, body = TRAINING_LOOP.split("for step")
    in_a_function = head + "def train():\n" + textwrap.indent("for step" + body, "    ") + "train()\n"
    function_loop = api.run_source(in_a_function, "<test>")
    assert isinstance(function_loop.interpreter, execution.PythonRun) and function_loop.context.loop_replayed > 0
    # (in a function a try may call: what a planned iteration that raises leaves, a handler would see)
    caught = api.run_source(in_a_function.replace("train()\n", "try:\n    train()\nexcept ValueError:\n    pass\n"),
                            "<test>")
    assert isinstance(caught.interpreter, execution.PythonRun) and caught.context.loop_replayed == 0
    # (the loop's step in arithmetic: a Python number on CPython, which its plans do not take)
    scheduled = TRAINING_LOOP.replace("w.assign_sub(0.1 * g)", "w.assign_sub(0.1 / (step + 1) * g)")
    kept = api.run_source(scheduled, "<test>")
    assert not isinstance(kept.interpreter, execution.PythonRun) and kept.context.loop_replayed > 0
    # (a class of NumPy's the interpreter lacks: CPython's NumPy has it)
    numpy_class = api.run_source("import numpy as np\nr = np.random.RandomState(0)\n" + scheduled, "<test>")
    assert isinstance(numpy_class.interpreter, execution.PythonRun)
    # (a function of NumPy's whose results may be complex, which no value of the interpreter holds)
    complex_results = api.run_source("import numpy as np\ne = np.linalg.eigvals([[0.0, 1.0], [-1.0, 0.0]])\n"
                                     + scheduled, "<test>")
    assert isinstance(complex_results.interpreter, execution.PythonRun)
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "1")
    assert isinstance(api.run_source(scheduled, "<test>").interpreter, execution.PythonRun)
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "0")
    assert not isinstance(api.run_source("import tensorflow as tf\nx = tf.constant(1.0)\n", "<test>").interpreter,
                          execution.PythonRun)


@pytest.mark.parametrize("expression, value", [
    ("10 ** -3", "0.001"), ("2 ** -1", "0.5"), ("-7 // 2", "-4"), ("-7 % 3", "2"), ("7 % -3", "-2"),
    ("2 ** 62 + (2 ** 62 - 1)", "9223372036854775807"), ("-(2 ** 62) * 2", "-9223372036854775808"),
    ("abs(-5)", "5"), ("5 // 0 if False else 1", "1"), ("isinstance(True, int)", "True"),
    ("isinstance(False, bool)", "True"), ("isinstance(1, bool)", "False"),
    ("'abcdef'[1:3] + 'abcdef'[-1] + 'abcdef'[::2]", "bcface"), ("''[3:-5] + 'x'[5:9] + 'y'", "y"),
    ("-True", "-1"), ("~True", "-2"), ("-(1 == 1) + 2", "1"), ("abs(True) + round(True)", "2"),
    # (a bool is Python's int in arithmetic: Python's remainder's sign, not TensorFlow's FloorMod's +0.0)
    ("True % -1.0", "-0.0"), ("isinstance(0, int) % -1.0", "-0.0"), ("True // -1.0", "-1.0"), ("True + True", "2"),
    ("0 == [1, 2]", "False"), ("[1, 2] != 1", "True"), ("633789.868331192 ** 4", "1.613545324981115e+23"),
    ("2 ** 0.5", "1.4142135623730951")])
def test_the_interpreters_integers_are_pythons_within_64_bits(expression, value, monkeypatch):
    """On the interpreter (TAPECLI_TF_ON_CPYTHON=0; by default a program whose training loop only it plans), integer
    literals compute as Python's integers do, where their results fit 64 bits, and its bools and strings are
    Python's (CPython's printed values)."""
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "0")
    result = api.run_source(f"import tensorflow as tf\nprint({expression})\n", "<test>")
    assert not isinstance(result.interpreter, execution.PythonRun)
    assert result.output == [value] == [str(eval(expression))]


OWN_TEXT = """
class B:
    def __init__(self, v):
        self.v = v
    def __repr__(self):
        return f"B({self.v})"
class C(B):
    def __str__(self):
        return "C!"
b = B(1)
print(b, [b], C(2), repr(C(2)), str(b), f"{b} {b!r} {C(3)}", {"k": C(4)})
"""


@pytest.mark.parametrize("expression, kind", [("(8 ** 4)[-16]", "int"), ("2.5[0]", "float"), ("(1 == 1)[0]", "bool")])
def test_a_python_number_is_not_subscriptable_on_the_interpreter(expression, kind, monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "0")
    with pytest.raises(TdfError, match=f"'{kind}' object is not subscriptable") as e:
        api.run_source(f"import tensorflow as tf\nx = {expression}\n", "<test>")
    assert e.value.kind == "TypeError"


def test_pythons_sum_of_a_tensor_on_the_interpreter_adds_its_rows(monkeypatch):
    """Python's sum iterates a tensor: its rows added to the start, 0 (TensorFlow printed these lines)."""
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "0")
    result = api.run_source("import tensorflow as tf\nt = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.5]])\n"
                            "print(sum(t))\nprint(sum(t, 10))\nprint(sum([1, 2], 10))\n", "<test>")
    assert not isinstance(result.interpreter, execution.PythonRun)
    assert result.output == ["tf.Tensor([5.  7.  9.5], shape=(3,), dtype=float32)",
                             "tf.Tensor([15.  17.  19.5], shape=(3,), dtype=float32)", "13"]
    with pytest.raises(TdfError, match="'float' object is not iterable"):
        api.run_source("import tensorflow as tf\nx = sum(0.1)\n", "<test>")


def test_the_interpreter_prints_a_program_object_by_its_classs_str_and_repr(monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "0")
    result = api.run_source("import tensorflow as tf\n" + OWN_TEXT, "<test>")
    assert not isinstance(result.interpreter, execution.PythonRun)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(OWN_TEXT, {})              # (CPython's own)
    assert result.output == printed.getvalue().splitlines() == ["B(1) [B(1)] C! B(2) B(1) B(1) B(1) C! {'k': B(4)}"]


@pytest.mark.parametrize("program", ["print(2 ** 63)", "n = 1\nfor i in range(1, 25):\n    n *= i\n",
                                     "print(2 ** 10 ** 12)", "print(-(-2 ** 63))"])
def test_an_integer_past_64_bits_on_the_interpreter_is_an_error_not_a_wrapped_number(program, monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "0")
    with pytest.raises(TdfError, match="past the 64-bit integers of tapecli's interpreter"):
        api.run_source(f"import tensorflow as tf\n{program}\n", "<test>")
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "1")        # (CPython's integers are Python's)
    api.run_source(f"import tensorflow as tf\n{program.replace('10 ** 12', '100')}\n", "<test>")


@pytest.mark.parametrize("on", ["1", "0"])
def test_add_n_of_a_list_of_numbers_adds_them(on, monkeypatch):
    """tf.add_n([1.0, 2.0]) is 3.0, as TensorFlow gives it: the list is the inputs, not one [2] input."""
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on)
    result = api.run_source("import tensorflow as tf\nprint(tf.add_n([1.0, 2.0]), tf.add_n(tf.constant([[1., 2.], "
                            "[3., 4.]])))\n", "<test>")
    assert result.output == ["tf.Tensor(3.0, shape=(), dtype=float32) tf.Tensor([4. 6.], shape=(2,), dtype=float32)"]


CATCHING = """
import tensorflow as tf
x = tf.constant([1.0, 2.0, 3.0])
caught = []
try:
    tf.reshape(x, [7])
except tf.errors.InvalidArgumentError as e:
    caught.append((type(e).__name__, e.error_code, isinstance(e, tf.errors.OpError), e.op, e.message))
try:
    y = x + tf.constant([1.0, 2.0])
except tf.errors.OpError:
    caught.append("op error")
try:
    tf.constant(1) + tf.constant(1.0)
except TypeError:
    caught.append("wrong: TensorFlow's mixed dtypes are InvalidArgumentError")
except tf.errors.InvalidArgumentError:
    caught.append("dtypes")
try:
    tf.constant([[1.0], [1.0, 2.0]])
except (TypeError, ValueError) as e:
    caught.append(type(e).__name__)
try:
    x[7]
except ValueError:
    caught.append("wrong: an index out of range is InvalidArgumentError")
except Exception as e:
    caught.append(type(e).__name__)
v = tf.Variable(1.0)
with tf.GradientTape() as t:
    w = v * v
g = t.gradient(w, v)
try:
    t.gradient(w, v)
except RuntimeError:
    caught.append("tape")
try:
    raise tf.errors.NotFoundError(None, None, "mine")
except tf.errors.OpError as e:
    caught.append((str(e), e.error_code == tf.errors.NOT_FOUND))
for item in caught:
    print(item)
"""


def test_library_errors_are_caught_as_tensorflow_and_python_classes(monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "1")
    result = api.run_source(CATCHING, "<test>")
    assert isinstance(result.interpreter, execution.PythonRun)
    assert result.output == [
        "('InvalidArgumentError', 3, True, None, 'cannot reshape a tensor of shape [3] (3 elements) to [7]')",
        "op error", "dtypes", "ValueError", "InvalidArgumentError", "tape", "('mine', True)"]


@pytest.mark.parametrize("line", ["x + tf.constant([1.0, 2.0])", "tf.reshape(x, [7])", "tf.constant(1) + x",
                                  "tf.constant([[1.0], [1.0, 2.0]])"])
def test_an_uncaught_library_error_ends_the_run_as_on_the_interpreter(line, monkeypatch):
    """Caught or not, the error is the library's: uncaught, its kind, message, line and exit are as before."""
    source = f"import tensorflow as tf\nx = tf.constant([1.0, 2.0, 3.0])\nprint(1)\ny = {line}\n"
    errors = []
    for on in ("1", "0"):
        monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on)
        with pytest.raises(TdfError) as caught:
            api.run_source(source, "<test>")
        errors.append((caught.value.kind, caught.value.message, caught.value.line))
    assert errors[0] == errors[1]
    assert errors[0][0] != "Error" and errors[0][2] == 4


@pytest.mark.parametrize("line", ["y = e.hint", "y = e.line", "y = e.kind", "y = e.spell_cast", "y = e.locate",
                                  "y = getattr(e, 'hint')", "y = vars(e)", "y = e.__traceback__",
                                  "y = e.__context__", "y = type(e).about",
                                  "y = [c for c in type(e).__mro__ if 'tapecli' in c.__module__ or 'Mismatch' in c.__name__][0]",
                                  "e.hint = 'x'",
                                  "y = vars(t)", "y = vars(v)"])
def test_a_caught_error_keeps_tapecli_internals_out_of_reach(line, monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "1")
    source = (f"import tensorflow as tf\nv = tf.Variable(1.0)\nt = tf.GradientTape()\ntry:\n"
              f"    tf.constant(1) + tf.constant(1.0)\nexcept tf.errors.InvalidArgumentError as e:\n    {line}\n")
    with pytest.raises(TdfError) as caught:
        api.run_source(source, "<test>")
    assert caught.value.line == 7


def test_the_runs_own_stops_are_not_caught(monkeypatch):
    """A limit, or what the guards refuse, ends the run whatever the handlers."""
    source = ("import tensorflow as tf\nx = tf.constant(1.0)\ntry:\n    while x > 0.0:\n        x = x * 1.0\n"
              "except Exception:\n    print('caught')\n")
    assert _limited(source, monkeypatch).line == 4
    source = "try:\n    x = [1][5]\nexcept Exception as e:\n    y = e.__traceback__.tb_frame\n"      # plain Python too
    with pytest.raises(TdfError) as caught:
        api.run_source(source, "<test>")
    assert caught.value.line == 4


@pytest.mark.parametrize("source, kind, message", [
    ("@tf.function(retrace=True)\ndef f(x):\n    return x\n", "TypeError", "unexpected keyword argument 'retrace'"),
    ("w = tf.Variable(1.0)\n@tf.custom_gradient\ndef f(x):\n    return x * w, lambda dy: dy\n"
     "with tf.GradientTape() as t:\n    y = f(tf.constant(1.0))\n", "TypeError", "must accept keyword argument 'variables'"),
    ("@tf.custom_gradient\ndef f(x):\n    return x\ny = f(tf.constant(1.0))\n", "TypeError", "must return (value, grad_fn)"),
])
def test_tf_function_and_custom_gradient_refuse_as_tensorflow(source, kind, message, monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "1")
    assert execution.python_only("import tensorflow as tf\n" + source) is not None
    with pytest.raises(TdfError) as caught:
        api.run_source("import tensorflow as tf\n" + source, "<test>")
    assert caught.value.kind == kind and message in caught.value.message


# A tf.function's statements that are only Python side effects on objects from outside it run while it traces,
# as TensorFlow's; one inside a statement that computes more runs on every call, warned of. Printed by TensorFlow
# 2.21: count 2 and the log [0, 1] (two traces: a scalar, then a vector), calls 1 (one trace), the variable updated
# on every call.
TRACE_ONLY = """
import tensorflow as tf
seen = {}
log = []
class Counter(tf.Module):
    def __init__(self):
        self.calls = 0
        self.v = tf.Variable(1.0)
    @tf.function
    def __call__(self, x):
        self.calls += 1
        self.v.assign_add(tf.reduce_sum(x))
        parts = []
        for i in range(2):
            parts.append(x * i)
            if i == 1:
                seen[len(log)] = i
        log.append(len(log))
        return tf.add_n(parts)
c = Counter()
for value in [1.0, 2.0, 3.0]:
    y = c(tf.constant(value))
c(tf.constant([1.0, 2.0]))
print(y, c.calls, c.v.numpy(), log, seen)
"""


@pytest.mark.parametrize("on", ["1", "0"])
def test_tf_function_python_side_effects_run_while_it_traces(on, monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on)
    result = api.run_source(TRACE_ONLY.lstrip(), "<test>")
    assert isinstance(result.interpreter, execution.PythonRun) == (on == "1")
    assert result.output == ["tf.Tensor(3.0, shape=(), dtype=float32) 2 10.0 [0, 1] {0: 1, 1: 1}"]
    assert documents.run_doc(result)["warnings"] == []


@pytest.mark.parametrize("on", ["1", "0"])
def test_a_side_effect_the_function_reads_again_runs_on_every_call(on, monkeypatch):
    """``cache["y"] = x * 2.0`` then ``return cache["y"] + 1.0``: the traced graph computes what the read gives on
    every call (TensorFlow printed 3.0, 5.0, 7.0), so the statement is not left to the trace alone."""
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on)
    source = ("import tensorflow as tf\ncache = {}\n@tf.function\ndef f(x):\n    cache['y'] = x * 2.0\n"
              "    return cache['y'] + 1.0\nfor v in (1.0, 2.0, 3.0):\n    print(float(f(tf.constant(v))))\n")
    result = api.run_source(source, "<test>")
    assert isinstance(result.interpreter, execution.PythonRun) == (on == "1")
    assert result.output == ["3.0", "5.0", "7.0"]


@pytest.mark.parametrize("on", ["1", "0"])
def test_a_python_value_made_from_outside_objects_is_the_traces(on, monkeypatch):
    """``self.scale = self.scale * 2.0``, read again: the graph holds the trace's value (TensorFlow printed
    4.0 2.0, 6.0 2.0, 8.0 2.0), beside an item computed from the argument on every call."""
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on)
    source = ("import tensorflow as tf\nclass M(tf.Module):\n    def __init__(self):\n        self.scale = 1.0\n"
              "        self.cache = {}\n    @tf.function\n    def __call__(self, x):\n"
              "        self.scale = self.scale * 2.0\n        self.cache['h'] = x + 1.0\n"
              "        return self.cache['h'] * self.scale\nm = M()\nfor v in (1.0, 2.0, 3.0):\n"
              "    print(float(m(tf.constant(v))), m.scale)\n")
    assert api.run_source(source, "<test>").output == ["4.0 2.0", "6.0 2.0", "8.0 2.0"]


@pytest.mark.parametrize("on", ["1", "0"])
def test_a_function_a_traced_graph_calls_counts_only_while_it_traces(on, monkeypatch):
    """A count of calls in a function the tf.function calls: TensorFlow printed 1 after each of three calls
    (its graph runs without the function's Python), then 2 after an eager call of the function."""
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on)
    source = ("import tensorflow as tf\ncalls = {'n': 0}\ndef block(x):\n    calls['n'] += 1\n    return x * 2.0\n"
              "@tf.function\ndef f(x):\n    return block(x) + 1.0\nfor v in (1.0, 2.0, 3.0):\n"
              "    print(float(f(tf.constant(v))), calls['n'])\nprint(float(block(tf.constant(1.0))), calls['n'])\n")
    assert api.run_source(source, "<test>").output == ["3.0 1", "5.0 1", "7.0 1", "2.0 2"]


def test_a_global_a_tf_function_counts_in_counts_its_traces():
    """``global n; n += 1`` (CPython's run alone: the interpreter has no ``global``). TensorFlow printed 2."""
    source = ("import tensorflow as tf\nn = 0\n@tf.function\ndef f(x):\n    global n\n    n += 1\n    return x\n"
              "for v in [1.0, 2.0, [1.0]]:\n    f(tf.constant(v))\nprint(n)\n")
    assert api.run_source(source, "<test>").output == ["2"]
    read = ("import tensorflow as tf\nstep = 0\n@tf.function\ndef f(x):\n    global step\n    step += 1\n"
            "    return x * step\nfor v in (1.0, 2.0, 3.0):\n    print(float(f(tf.constant(v))), step)\n")
    assert api.run_source(read, "<test>").output == ["1.0 1", "2.0 1", "3.0 1"]     # (TensorFlow's)


@pytest.mark.parametrize("on", ["1", "0"])
def test_a_python_side_effect_inside_a_computing_statement_is_warned_of(on, monkeypatch):
    """``n = log.pop('a', 0.0)`` computes more than its side effect, so it runs on every call, and tapecli says so at the
    decorator; TensorFlow pops once, at its trace."""
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on)
    source = ("import tensorflow as tf\nlog = {'a': 1.0}\n@tf.function\ndef f(x):\n    n = log.pop('a', 0.0)\n"
              "    return x + n\nprint(f(tf.constant(1.0)))\n")
    result = api.run_source(source, "<test>")
    assert isinstance(result.interpreter, execution.PythonRun) == (on == "1")
    [warning] = documents.run_doc(result)["warnings"]
    assert warning["line"] == 3 and warning["message"].startswith(
        "@tf.function f: tapecli runs this Python side effect on every call (.pop() at line 5, inside a statement")


def test_by_default_a_program_with_try_and_tf_random_runs(monkeypatch):
    """What failed both ways before: the interpreter refuses try, and the bridge had no tf.random. Its draws are
    the interpreter's."""
    draws = "import tensorflow as tf\ntf.random.set_seed(1)\nx = tf.random.normal([3])\n"
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "0")
    expected = api.run_source(draws + "print(x)\n", "<test>").output
    monkeypatch.delenv("TAPECLI_TF_ON_CPYTHON")
    source = draws + "try:\n    tf.reshape(x, [7])\nexcept tf.errors.InvalidArgumentError:\n    print('caught')\nprint(x)\n"
    result = api.run_source(source, "<test>")
    assert isinstance(result.interpreter, execution.PythonRun)
    assert result.output == ["caught"] + expected


@pytest.mark.parametrize("module", ["gc", "inspect"])
def test_a_program_tdf_cannot_read_is_refused_at_the_import_no_program_may_make(module):
    """The interpreter refuses the generator, the bridge the import: the error a user can act on is the import's."""
    source = f"import tensorflow as tf\nimport {module}\ndef g():\n    yield tf.constant(1.0)\nprint(list(g()))\n"
    with pytest.raises(TdfError) as e:
        api.run_source(source, "<test>")
    assert (e.value.kind, e.value.line) == ("NameError", 2) and f"cannot import {module}" in e.value.message


def test_names_and_classes_of_variables_as_tensorflow_gives_them(monkeypatch):
    """``v.name`` and ``type(v)`` as TensorFlow 2.21 and Keras 3 give them (recorded there), on both runners;
    the class is TensorFlow's name, never tapecli's own."""
    source = ("import tensorflow as tf\nv = tf.Variable(1.0)\nw = tf.Variable(2.0, name='w')\n"
              "d = tf.keras.layers.Dense(2)\nd.build((None, 3))\n"
              "print(v.name, w.name, [x.name for x in d.weights])\n")
    for on in ("0", "1"):
        monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on)
        assert api.run_source(source, "p.py").output == ["Variable:0 w:0 ['kernel', 'bias']"]
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "auto")
    classes = api.run_source(source + "try:\n    pass\nfinally:\n    print(type(v), type(v).__name__, "
                             "type(d.kernel).__name__, type(tf.constant(1.0)).__name__, type(v.shape).__name__, "
                             "isinstance(w, type(v)))\n", "p.py")
    assert isinstance(classes.interpreter, execution.PythonRun)
    assert classes.output[-1] == ("<class 'tensorflow.python.ops.resource_variable_ops.ResourceVariable'> "
                                  "ResourceVariable Variable EagerTensor TensorShape True")
    with pytest.raises(TdfError) as e:
        api.run_source("import tensorflow as tf\nt = type(tf.constant(1.0))\ntry:\n    t()\nfinally:\n    pass\n", "p.py")
    assert e.value.kind == "TypeError"


@pytest.mark.parametrize("body, why", [
    ("class M(tf.keras.Sequential):\n    pass\n", "line 3 derives the class M from a class of TensorFlow's other "
                                                 "than tf.Module, keras.layers.Layer, keras.Model, "
                                                 "keras.losses.Loss, keras.metrics.Metric, keras.callbacks.Callback, "
                                                 "keras.optimizers.schedules.LearningRateSchedule, "
                                                 "keras.regularizers.Regularizer, keras.constraints.Constraint, "
                                                 "keras.initializers.Initializer, keras.utils.PyDataset "
                                                 "(keras.utils.Sequence) and Keras's concrete layers, optimizers and "
                                                 "metrics"),
    ("m = __import__('keras')\n", "line 3 imports with __import__"),
    ("tf = None\n", "line 3 binds tf again"),
])
def test_a_form_only_cpython_runs_says_what_keeps_the_program_from_it(body, why):
    """A form the interpreter refuses (here ``try``) in a TensorFlow program CPython cannot take: the interpreter's
    error, its hint naming what keeps the program from CPython."""
    with pytest.raises(TdfError) as e:
        api.run_source("import tensorflow as tf\nx = 1\n" + body + "try:\n    x = 2\nexcept ValueError:\n    pass\n",
                       "p.py")
    assert e.value.kind == "SyntaxError" and "try/except" in e.value.message
    assert e.value.hint == f"CPython runs this form in a TensorFlow program, but not in this one: {why}"


def test_a_name_cpython_lacks_is_its_lines_error_after_what_ran():
    """A program the interpreter cannot read (a ``try``) that names what the bridge lacks runs on CPython up to
    that line, as TensorFlow's would up to a name it lacks: the error is the name's, at its line."""
    with pytest.raises(TdfError) as e:
        api.run_source("import tensorflow as tf\nprint('ran')\ntry:\n    x = 2\nexcept ValueError:\n    pass\n"
                       "y = tf.image.extract_glimpse(tf.ones([1, 2, 2, 3]), [1, 1], [[0.0, 0.0]])\n", "p.py")
    assert (e.value.kind, e.value.line) == ("NameError", 7) and "tf.image.extract_glimpse" in e.value.message
    assert e.value.output == ["ran"]
    with pytest.raises(TdfError) as e:
        api.run_source("import tensorflow as tf\ntry:\n    x = 2\nexcept ValueError:\n    pass\n"
                       "y = tf.constant([1], dtype=tf.qint8)\n", "p.py")
    assert e.value.line == 6 and "out of scope" in e.value.message


MULTI_OUTPUT_CUSTOM_GRADIENT = """
import tensorflow as tf
@tf.custom_gradient
def polar(r, th):
    x = r * tf.cos(th)
    y = r * tf.sin(th)
    def grad(dx, dy):
        return dx * tf.cos(th) + dy * tf.sin(th), -dx * r * tf.sin(th) + dy * r * tf.cos(th)
    return (x, y), grad
r = tf.constant([1.0, 2.0])
th = tf.constant([0.5, 1.0])
with tf.GradientTape(persistent=True) as t:
    t.watch([r, th])
    x, y = polar(r, th)
    loss = tf.reduce_sum(x * 2.0 + y)
    only_x = tf.reduce_sum(x)
gr, gth = t.gradient(loss, [r, th])
print("grads:", gr.numpy(), gth.numpy())
print("only x:", [g.numpy() for g in t.gradient(only_x, [r, th])])
out = polar(r, th)
print(type(out).__name__, len(out), out[0].shape)
print("jacobian:", t.jacobian(x, r).numpy())
"""


@pytest.mark.parametrize("on_cpython", ["0", "1"])
def test_a_custom_gradient_of_several_outputs(on_cpython, monkeypatch):
    """A custom_gradient function returning a tuple of tensors: grad_fn takes one upstream gradient per output
    (zeros for an output the target does not read), in a gradient and in a jacobian (TensorFlow 2.21 printed these)."""
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on_cpython)
    result = api.run_source(MULTI_OUTPUT_CUSTOM_GRADIENT, "p.py")
    assert "\n".join(str(line) for line in result.output).split("\n") == [
        "grads: [2.2345905 1.9220755] [-0.08126855 -2.2852793 ]",
        "only x: [array([0.87758255, 0.5403023 ], dtype=float32), array([-0.47942555, -1.6829419 ], dtype=float32)]",
        "tuple 2 (2,)",
        "jacobian: [[0.87758255 0.        ]", " [0.         0.5403023 ]]"]


GRADIENT_ERRORS = """
import tensorflow as tf
def attempt(label, fn):
    try:
        fn()
    except Exception as e:
        print(label, type(e).__name__, "|", e)
x = tf.Variable(2.0)
with tf.GradientTape(persistent=True) as t:
    y = x * 3.0
attempt("unconnected", lambda: t.gradient(y, x, unconnected_gradients="bogus"))
@tf.custom_gradient
def wrong(a, b):
    return a * b, lambda dy: dy
a = tf.constant(1.0)
b = tf.constant(2.0)
with tf.GradientTape() as t:
    t.watch([a, b])
    z = wrong(a, b)
attempt("count", lambda: t.gradient(z, [a, b]))
"""


@pytest.mark.parametrize("on_cpython", ["auto", "1"])     # (try/except: CPython's run)
def test_gradient_errors_are_tensorflows(on_cpython, monkeypatch):
    # TensorFlow 2.21 printed these
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on_cpython)
    result = api.run_source(GRADIENT_ERRORS, "p.py")
    assert [str(line) for line in result.output] == [
        "unconnected ValueError | Unknown value for unconnected_gradients: 'bogus'",
        "count ValueError | custom_gradient function expected to return 2 gradients, but returned 1 instead."]


BFLOAT16_GRADIENTS = """
import tensorflow as tf
xb = tf.Variable([0.5, 1.5, -2.0], dtype=tf.bfloat16)
with tf.GradientTape() as t:
    y = tf.reduce_sum(tf.tanh(xb) * 3.0)
print(t.gradient(y, xb))
c = tf.constant([0.5, 1.5], dtype=tf.bfloat16)
with tf.GradientTape() as t:
    t.watch(c)
    y = tf.reduce_sum(c * c)
print(t.gradient(y, c))
"""


@pytest.mark.parametrize("on_cpython", ["auto", "1"])      # (bfloat16: CPython's run)
def test_bfloat16_ops_are_recorded(on_cpython, monkeypatch):
    """An op whose output is bfloat16 (NumPy's kind "V", not "f") is recorded as any float op (TensorFlow 2.21
    printed these)."""
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on_cpython)
    result = api.run_source(BFLOAT16_GRADIENTS, "p.py")
    assert [str(line) for line in result.output] == [
        "tf.Tensor([2.35938 0.539062 0.210938], shape=(3,), dtype=bfloat16)",
        "tf.Tensor([1 3], shape=(2,), dtype=bfloat16)"]
