"""Loop plans (interpreter/loop_plans.py): the iterations of a training loop after two traced ones run as
the traced kernel calls and effects, and leave exactly what the loop run as written leaves: the same
variables, slots, names, lists and gradient requests, bit for bit. A loop a plan cannot replace runs as
written, with the same results."""
import ast
import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from tapecli.api import Options, run_source
from tapecli.errors import LimitError, TdfError, TdfValueError
from tapecli.execution.training_loops import planned_loops
from tapecli.interpreter import loop_plans, loop_steps
from tapecli.interpreter.loop_shape import loop_shape
from tapecli.library.keras import optimizers
from tapecli.runtime.limits import Limits

from conftest import fast_paths

pytestmark = [fast_paths]


@pytest.fixture(params=["interpreter", "cpython"], autouse=True)
def runner(request, monkeypatch):
    """The runner of a test's TensorFlow programs: each runs on the interpreter and on CPython (planned_loops.py).
    (A TDF program runs on the interpreter either way: its tests take the interpreter's alone.)"""
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "0" if request.param == "interpreter" else "1")
    return request.param


interpreter_only = pytest.mark.parametrize("runner", ["interpreter"], indirect=True)

KERAS = """
import tensorflow as tf
X = tf.random.normal({x_shape}, seed=1)
Y = tf.random.uniform(({batch},), maxval=3, dtype=tf.int32, seed=2)
model = tf.keras.Sequential([{layers}])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
opt = tf.keras.optimizers.{optimizer}
losses = []
for step in range({steps}):
    with tf.GradientTape() as tape:
        logits = model(X, training=True)
        loss = loss_fn(Y, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    losses.append(loss)
"""

MLP = KERAS.format(x_shape=(16, 8), batch=16, steps=12, optimizer="Adam(learning_rate=0.01)",
                   layers='tf.keras.layers.Dense(12, activation="relu"), tf.keras.layers.Dense(3)')
CNN = KERAS.format(x_shape=(4, 9, 9, 1), batch=4, steps=8, optimizer="Adam(learning_rate=0.01)",
                   layers='tf.keras.layers.Conv2D(3, 3, activation="relu"), tf.keras.layers.MaxPooling2D(2), '
                          'tf.keras.layers.Flatten(), tf.keras.layers.Dense(3)')
# large enough for the kernels' layouts of large arrays (a bias on wide rows, its gradient summed in blocks)
CNN_WIDE = KERAS.format(x_shape=(4, 18, 18, 2), batch=4, steps=7, optimizer="Adam(learning_rate=0.01)",
                        layers='tf.keras.layers.Conv2D(8, 3, activation="relu"), tf.keras.layers.MaxPooling2D(2), '
                               'tf.keras.layers.Conv2D(4, 3), tf.keras.layers.MaxPooling2D(2, padding="same"), '
                               'tf.keras.layers.Flatten(), tf.keras.layers.Dense(3)')
SGD = KERAS.format(x_shape=(16, 8), batch=16, steps=9, optimizer="SGD(learning_rate=0.1, momentum=0.9)",
                   layers='tf.keras.layers.Dense(5), tf.keras.layers.Activation("tanh"), tf.keras.layers.Dense(3)')

# TDF spelling: a manual step with assign_sub, a loss of builtins, and a name carried from one iteration to the next
MANUAL = """
var w = [[0.5, -0.25], [0.125, 1.0]]
var b = [0.1, -0.1]
x = reshape(cast(range(8), float32), [4, 2]) * 0.1
y = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, 0.5]]
total = 0.0
for step in range(10):
    tape t:
        pred = tanh(matmul(x, w) + b)
        loss = reduce_mean(square(pred - y))
    dw, db = t.gradient(loss, [w, b])
    w.assign_sub(0.5 * dw)
    b.assign_sub(0.5 * db)
    total = total + loss
"""


# the loop item in arithmetic: a learning rate that decays with the step, and a step that grows every third
SCHEDULED = """
var w = [[0.5, -0.25], [0.125, 1.0]]
x = reshape(cast(range(8), float32), [4, 2]) * 0.1
for step in range(9):
    tape t:
        loss = reduce_sum(square(tanh(matmul(x, w)) - 0.5))
    lr = 0.3 / (step + 1.0) + cast(step // 3, float32) * 0.01
    w.assign_sub(lr * t.gradient(loss, w))
"""


def _run(source, plans=True, monkeypatch=None):
    with monkeypatch.context() as patch:
        if not plans:
            patch.setattr(loop_plans, "planner", lambda *args: None)
        return run_source(textwrap.dedent(source).lstrip("\n"), "prog.py")


def _compared(program, monkeypatch, replayed):
    """The program run with loop plans and as written: the same bits everywhere, ``replayed`` iterations as plans.
    Both runs."""
    planned, written = _run(program, True, monkeypatch), _run(program, False, monkeypatch)
    assert written.context.loop_replayed == 0
    assert planned.context.loop_replayed == replayed
    assert _state(planned) == _state(written), program
    assert planned.interpreter.output == written.interpreter.output
    return planned, written


def _state(result):
    """Every variable of the run (weights, optimizer slots), every tensor bound to a name or kept in a list,
    and every gradient request: their bits."""
    bits = [(v.name, v.read().value.tobytes()) for v in sorted(result.context.variables, key=lambda v: v.order)]
    for name, value in sorted(result.scope.vars.items()):
        items = value if isinstance(value, list) else [value]
        for item in items:
            if hasattr(item, "value") and isinstance(item.value, (np.ndarray, np.generic)):
                bits.append((name, np.asarray(item.value).tobytes(), item.weak))
    bits.append(("warnings", result.context.settings.warnings))
    for req in result.requests:
        objective = None if req.objective is None else np.float64(req.objective).tobytes()     # (NaN is NaN)
        bits.append((req.kind, req.line, req.names, req.labels, req.why, objective,
                     [None if v is None else v.value.tobytes() for v in req.values]))
    return bits


@pytest.mark.parametrize("program, steps", [(MLP, 12), (CNN, 8), (CNN_WIDE, 7), (SGD, 9), (MANUAL, 10),
                                            (SCHEDULED, 9)],
                         ids=["mlp-adam", "cnn-adam", "cnn-wide", "sgd-momentum", "tdf-assign", "item-in-arithmetic"])
def test_a_training_loop_runs_as_a_plan_with_the_bits_it_has_as_written(program, steps, monkeypatch):
    # iteration 0 as written, 1 and 2 traced, 3 to the last as the plan (the names the last leaves bound are
    # its slots': the bits compared)
    planned, _ = _compared(program, monkeypatch, steps - 3)
    assert len(planned.requests) == steps
    # the last iteration's backward pass builds no backward plan (its second pass would run twice over)
    assert [plan.seen for plan in planned.context.backward_plans.values()] == [1]


def test_the_last_iteration_runs_as_written_where_the_program_names_its_tape_after_the_loop(monkeypatch):
    # the plan makes no tape: a persistent one read after the loop must be the last iteration's
    program = MLP.replace("tf.GradientTape()", "tf.GradientTape(persistent=True)") + \
        "again = tape.gradient(loss, model.trainable_variables)\n"
    planned, _ = _compared(program, monkeypatch, 12 - 4)
    assert len(planned.scope.vars["again"]) == 4


def test_a_plan_makes_a_loss_and_its_backprop_in_one_call(monkeypatch):
    # kernels.PAIRED: the sparse cross-entropy and its backprop, on the same logits and labels, made by one
    # call at each planned iteration (64 rows of 3 classes: the kernels' class-major layout), with their bits
    from tapecli import kernels
    from tapecli.ops import nn      # noqa: F401 (its op table registers the pair: a test run first in its process)
    pair = ("sparse_softmax_xent", "sparse_softmax_xent_backprop")
    both, calls = kernels.PAIRED[pair], []
    monkeypatch.setitem(kernels.PAIRED, pair, lambda *args: calls.append(1) or both(*args))
    program = KERAS.format(x_shape=(64, 8), batch=64, steps=9, optimizer="Adam(learning_rate=0.01)",
                           layers='tf.keras.layers.Dense(12, activation="relu"), tf.keras.layers.Dense(3)')
    _compared(program, monkeypatch, 9 - 3)
    assert len(calls) == 9 - 3


def test_a_plan_holds_no_slot_of_the_optimizer_which_steps_them_in_place(monkeypatch):
    # the plan keeps only the inputs its calls read: the slots the optimizer laid end to end stay its own,
    # written in place at every planned step (a traced iteration holds every input: laid out anew after it)
    laid = []
    original = optimizers._LaidOut

    def counted(*args):
        laid.append(1)
        return original(*args)
    monkeypatch.setattr(optimizers, "_LaidOut", counted)
    _compared(MLP, monkeypatch, 9)
    assert len(laid) == 3 + 1       # with plans: at the first step and the two traced; as written: once


WIDE_BIAS = """
import tensorflow as tf
w = tf.Variable(tf.random.normal((16, 128), seed=1) * 0.1)
b = tf.Variable(tf.zeros((128,)))
x = tf.random.normal((160, 16), seed=2)
kept = []
for step in range(8):
    with tf.GradientTape() as tape:
        m = tf.matmul(x, w)
        KEEP
        m = tf.nn.relu(m + b)
        loss = tf.reduce_mean(tf.square(m))
    dw, db = tape.gradient(loss, [w, b])
    w.assign_sub(0.1 * dw)
    b.assign_sub(0.1 * db)
"""


@pytest.mark.parametrize("keep, in_place", [("pass", 8 - 3), ("kept.append(m)", 0)], ids=["free", "kept"])
def test_a_plan_writes_a_result_into_an_argument_s_array_that_nothing_else_holds(keep, in_place, monkeypatch):
    # kernels.OUT_KERNELS: the product (160 x 128, read by no step after the bias's sum, and not what the loop
    # leaves bound to m) takes the sum at each planned iteration, where nothing else holds it; where a list
    # keeps it, the plan's check sees so at each iteration
    from tapecli import kernels
    add, into = kernels.RAW_NUMPY_KERNELS["add"], []

    def recorded(a, b, out=None):
        if out is not None and a.shape == (160, 128):
            into.append(out is a)
        return add(a, b, out=out)
    monkeypatch.setitem(kernels.RAW_NUMPY_KERNELS, "add", recorded)
    planned, _ = _compared(WIDE_BIAS.replace("KEEP", keep), monkeypatch, 8 - 3)
    assert into == [True] * in_place
    assert len(planned.scope.vars["kept"]) == (8 if in_place == 0 else 0)


ASSIGNED = """
import tensorflow as tf
w = tf.Variable(tf.random.normal((4, 3), seed=1))
x = tf.random.normal((5, 4), seed=2)
for step in range(10):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w)))
    w.assign_sub(0.1 * tape.gradient(loss, w))
AFTER"""


@pytest.mark.parametrize("after, read", [("", 0), ("    z = tf.reduce_sum(w * 2.0)\n", 10 - 3)], ids=["unread", "read"])
def test_a_plan_reads_a_variable_s_array_after_an_effect_only_where_a_later_call_reads_it(after, read, monkeypatch):
    """A variable's array after an effect (loop_steps.VariableStep) is read at each planned iteration where a call
    after the effect reads it, and not where none does: the same bits either way."""
    reads = []
    real = loop_steps.VariableStep.make
    monkeypatch.setattr(loop_steps.VariableStep, "make", lambda self, *args: reads.append(1) or real(self, *args))
    _compared(ASSIGNED.replace("AFTER", after), monkeypatch, 10 - 3)
    assert len(reads) == read


CHAIN = """
var w = fill([100000], 0.5)
for step in range(8):
    tape t:
        h = sin(w)
        h = sin(h)
        h = sin(h)
        h = sin(h)
        h = sin(h)
        h = sin(h)
        loss = reduce_sum(h)
    w.assign_sub(0.01 * t.gradient(loss, w))
"""


@interpreter_only      # (a TDF program)
def test_a_plan_lets_go_of_each_array_after_the_last_step_that_reads_it(monkeypatch):
    # six sines forward (each saves its input) and their gradients backward: an iteration makes some twenty
    # arrays of 400 kB, of which a few at a time are still to be read
    import tracemalloc
    peaks = []
    original = loop_plans.LoopPlan.run

    def measured(self, *args):
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        original(self, *args)
        peaks.append(tracemalloc.get_traced_memory()[1] - before)
    monkeypatch.setattr(loop_plans.LoopPlan, "run", measured)
    tracemalloc.start()
    try:
        planned, _ = _compared(CHAIN, monkeypatch, 5)
    finally:
        tracemalloc.stop()
    assert len(peaks) == 5
    assert max(peaks) < 10 * 400_000


STEP_FUNCTION = """
import tensorflow as tf
X = tf.random.normal((16, 8), seed=1)
Y = tf.random.uniform((16,), maxval=3, dtype=tf.int32, seed=2)
model = tf.keras.Sequential([tf.keras.layers.Dense(12, activation="relu"), tf.keras.layers.Dense(3)])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
opt = tf.keras.optimizers.Adam(learning_rate=0.01)

def forward(x):
    return model(x, training=True)

@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, forward(x))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    return loss

losses = []
for step in range(10):
    loss = train_step(X, Y)
    losses.append(loss)
"""


def test_a_train_step_function_is_taken_into_the_plan(monkeypatch):
    planned, written = _compared(STEP_FUNCTION, monkeypatch, 7)
    # the calls of the functions a plan took in count as steps, as they do run as written (--max-steps)
    assert planned.interpreter.steps == written.interpreter.steps


@pytest.mark.parametrize("max_steps", [200, 311])
def test_a_loop_past_max_steps_stops_where_it_does_as_written(max_steps, monkeypatch):
    # the plan counts the steps of the functions it took in, and the iteration that passes --max-steps runs as
    # written: it stops where the loop as written stops, after the same lines
    program = textwrap.dedent(STEP_FUNCTION.replace("range(10)", "range(400)") + "    print(step)\n").lstrip("\n")
    errors = []
    for plans in (True, False):
        with monkeypatch.context() as patch:
            if not plans:
                patch.setattr(loop_plans, "planner", lambda *args: None)
            with pytest.raises(LimitError) as stopped:
                run_source(program, "prog.py", Options(limits=Limits(max_steps=max_steps)))
        errors.append((str(stopped.value), stopped.value.line, stopped.value.output))
    assert errors[0] == errors[1] and len(errors[0][2]) > 20


BATCHES = """
import tensorflow as tf
X = tf.random.normal((40, 8), seed=1)
T = tf.random.normal((40, 3), seed=2)
{batches}
model = tf.keras.Sequential([tf.keras.layers.Dense(6, activation="tanh"), tf.keras.layers.Dense(3)])
opt = tf.keras.optimizers.SGD(learning_rate=0.05)
for xb, yb in batches:
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(xb, training=True) - yb))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
"""


@pytest.mark.parametrize("batches, replayed", [
    ("batches = [(X[i * 4:(i + 1) * 4], T[i * 4:(i + 1) * 4]) for i in range(10)]", 7),
    # seven batches (the last of four rows): iterations 3 to 5 as the plan
    ("batches = tf.data.Dataset.from_tensor_slices((X, T)).batch(6)", 3),
])
def test_a_loop_over_batches_takes_each_batch_as_an_input(batches, replayed, monkeypatch):
    _compared(BATCHES.format(batches=batches), monkeypatch, replayed)


MINIBATCHES = """
import tensorflow as tf
X = tf.random.normal((48, 8), seed=1)
Y = tf.constant({labels}, dtype=tf.int32)
model = tf.keras.Sequential([tf.keras.layers.Dense(6, activation="relu"), tf.keras.layers.Dense(3)])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
opt = tf.keras.optimizers.Adam(learning_rate=0.01)
for xb, yb in tf.data.Dataset.from_tensor_slices((X, Y)).batch(6):
    with tf.GradientTape() as tape:
        loss = loss_fn(yb, model(xb, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
"""


def test_minibatch_labels_are_inputs_of_the_plan_and_checked_at_each_batch(monkeypatch):
    labels = [i % 3 for i in range(48)]
    _compared(MINIBATCHES.format(labels=labels), monkeypatch, 5)
    # a label out of range in the sixth batch: the plan's check refuses it, and the iteration runs as written,
    # which raises the loss's error at the loss's line
    labels[32] = 7
    with pytest.raises(TdfValueError) as planned:
        _run(MINIBATCHES.format(labels=labels), True, monkeypatch)
    with pytest.raises(TdfValueError) as written:
        _run(MINIBATCHES.format(labels=labels), False, monkeypatch)
    assert str(planned.value) == str(written.value) and "label value of 7" in str(planned.value)
    assert (planned.value.line, planned.value.column) == (written.value.line, written.value.column) == (9, 16)


def test_a_check_of_a_constant_is_made_by_the_traced_iterations_only(monkeypatch):
    # the labels of the whole data, a constant of the plan: the traced iterations' checks passed, and the
    # plan (compiled from the traced arrays) does not check the same values again; the labels of a batch are
    # checked at each batch
    made = []
    original = loop_steps.CheckStep.make
    monkeypatch.setattr(loop_steps.CheckStep, "make", lambda self, *args: made.append(1) or original(self, *args))
    _compared(MLP, monkeypatch, 9)
    assert len(made) == 0
    made.clear()
    _compared(MINIBATCHES.format(labels=[i % 3 for i in range(48)]), monkeypatch, 5)
    assert len(made) == 5


@pytest.mark.parametrize("call", ["opt.apply_gradients(zip(grads, model.trainable_variables))",
                                  "opt.apply(grads, model.trainable_variables)"])
def test_a_plan_steps_the_optimizer_from_its_arrays_without_the_call_as_written(call, monkeypatch):
    # the optimizer's own call for plans (Optimizer.planned_apply_gradients, planned_apply) takes the gradients'
    # arrays: the call as written (its checks, its tensors) is made only by the iterations not planned (the plan
    # is compiled from the traced iteration's arrays: its first run is the compiled code's too)
    program = MLP.replace("opt.apply_gradients(zip(grads, model.trainable_variables))", call)
    written = []
    original = optimizers.Optimizer.apply
    monkeypatch.setattr(optimizers.Optimizer, "apply", lambda self, *args: written.append(1) or original(self, *args))
    _run(program, True, monkeypatch)
    assert len(written) == 12 - 9
    _compared(program, monkeypatch, 9)


def test_a_print_in_the_loop_prints_each_iteration_of_the_plan(monkeypatch):
    program = MLP + "    print(step, loss, sep=' | ')\n"
    planned, _ = _compared(program, monkeypatch, 9)
    assert len(planned.interpreter.output) == 12


@pytest.mark.parametrize("line, why", [
    ("print(f'{loss}')", "a string formatted in Python"),
    ("noise = tf.random.truncated_normal([1])", "a draw that is not a plan's"),
    ("n = branching(loss)", "a program's function that branches"),
    ("last = float(loss)", "a value read into Python"),
])
def test_a_loop_a_plan_cannot_replace_runs_as_written(line, why, monkeypatch):
    program = "def branching(v):\n    if v > 1.0:\n        return v\n    return v * 2.0\n" + MLP + "    " + line + "\n"
    _compared(program, monkeypatch, 0)


SCALE = """
class Scale:
    @property
    def value(self):
        print("read")
        return 0.5

scale = Scale()
"""


@pytest.mark.parametrize("line", ["loss = loss * scale.value", "kept = loss.numpy()", "print(opt.learning_rate)"])
def test_the_program_s_code_a_plan_does_not_take_runs_as_written(line, monkeypatch):
    # a property of the program's class (its code, which no plan makes again: on CPython its tick refuses the plan),
    # a value read into Python, a library object's tensor
    program = SCALE + MLP + "    " + line + "\n"
    planned, _ = _compared(program, monkeypatch, 0)
    assert planned.interpreter.output.count("read") == (12 if "scale" in line else 0)


NAMED = """
class Op:
    @property
    def name(self):
        print("named")
        return "op"

    def __call__(self, x):
        return x

op = Op()
"""


def test_a_call_no_plan_takes_reads_nothing_of_the_program_s_object(monkeypatch, runner):
    # (the interpreter's plans take the call in: a plain __call__; CPython's take a model's or a tf.Module's alone)
    planned, _ = _compared(NAMED + MLP + "    loss = op(loss)\n", monkeypatch, 9 if runner == "interpreter" else 0)
    assert "named" not in planned.interpreter.output


def test_a_loop_cpython_cannot_take_as_its_own_function_runs_as_written(monkeypatch, runner):
    # on CPython a loop in a try, or whose body reads its frame's names (dir()) or makes a scope keeps its frame: no
    # plan
    guarded = MLP.replace("for step", "try:\n  for step").replace("\n    ", "\n      ") + "except ValueError:\n  pass\n"
    assert planned_loops(ast.parse(guarded), guarded) == ([], {})
    for body in ("    names = dir()\n", "    if step > 20:\n        squares = [s * s for s in range(3)]\n"):
        assert planned_loops(ast.parse(MLP + body), MLP + body) == ([], {})
        assert planned_loops(ast.parse(MLP), MLP)[0]


def _in_a_function(before: str = "", after: str = "", header: str = "def train(steps):\n") -> str:
    """MLP with its loop in a function of ``steps`` (``before`` and ``after`` it in that function), then ``header``'s
    call: ``after`` makes what the program reads after the call."""
    head, loop = MLP.split("for step")
    return head + header + textwrap.indent(before + "for step" + loop.replace("range(12)", "range(steps)") + after,
                                           "    ")


# each function binds a name first bound in its loop (``loss``) that the program reads after the loop
FUNCTION_LOOPS = {
    "returned": (_in_a_function(after="return loss, step\n") + "loss, step = train(12)\n", 9),
    # a nested function reads the loop's names (cells of the function's)
    "closure": (_in_a_function(after="def doubled():\n    return loss * 2.0\nreturn doubled()\n")
                + "loss = train(12)\n", 9),
    # a name carried from one iteration to the next, bound before the loop
    "carried": (_in_a_function("total = tf.zeros((2,))\n", "    total = total + loss\nreturn total\n")
                + "total = train(12)\n", 9),
    # a loss summed from a Python float, as tutorials do (CPython's ops make 0-d arrays: the plan binds one)
    "summed": (_in_a_function("total = 0.0\n", "    total = total + loss\nreturn total\n") + "total = train(12)\n", 9),
    # a method's loop, the model an attribute of its instance
    "method": (MLP.split("for step")[0] + "class Trainer:\n    def __init__(self, model):\n        self.model = model\n\n"
               + textwrap.indent(_in_a_function(header="def fit(self, steps):\n", after="return loss\n").split(
                   "losses = []\n")[1], "    ").replace("model(X", "self.model(X") + "loss = Trainer(model).fit(12)\n",
               9),
    # the function called again inside its loop (step 3 as written): each call's loop is its own, planned
    "recursion": (_in_a_function(header="def train(steps, depth):\n", after="    if step == 3 and depth > 0:\n"
                                 "        train(steps, depth - 1)\nreturn loss\n") + "loss = train(12, 1)\n", 16),
}


@pytest.mark.parametrize("name", sorted(FUNCTION_LOOPS))
def test_a_loop_in_a_function_runs_as_a_plan_with_the_bits_it_has_as_written(name, monkeypatch):
    # the function's locals are the plan's scope: the names it binds are the function's as the loop as written
    # binds them (compared where the program keeps them)
    program, replayed = FUNCTION_LOOPS[name]
    _compared(program, monkeypatch, replayed)


@pytest.mark.parametrize("runner", ["cpython"], indirect=True)         # (the interpreter has no ``global``)
def test_a_loop_in_a_function_binds_the_names_it_declares_global_in_the_module(monkeypatch):
    program = _in_a_function("global total, kept\ntotal = tf.zeros((2,))\n",
                             "    total = total + loss\n    kept = loss\n") + "train(12)\n"
    planned, _ = _compared(program, monkeypatch, 9)
    assert {"total", "kept"} <= planned.scope.vars.keys()


@pytest.mark.parametrize("runner", ["cpython"], indirect=True)
@pytest.mark.parametrize("program", [
    _in_a_function(after="    if step == 20:\n        return loss\n") + "train(12)\n",      # (its body returns)
    _in_a_function(after="yield loss\n") + "loss = next(train(12))\n",                      # (a generator)
    _in_a_function() + "try:\n    train(12)\nexcept ValueError:\n    pass\n",                # (a try may see it)
    _in_a_function(header="@tf.function\ndef train(steps):\n") + "train(12)\n",   # (its traces run it again)
    # (a method's private name is its mangled one: _Trainer__logits)
    FUNCTION_LOOPS["method"][0].replace(" logits", " __logits").replace("return loss", "return loss, __logits"),
], ids=["return", "generator", "try", "tf.function", "private"])
def test_a_loop_of_a_function_cpython_cannot_take_runs_as_written(program, monkeypatch):
    assert planned_loops(ast.parse(program), program)[0] == []
    _compared(program, monkeypatch, 0)


@pytest.mark.parametrize("runner", ["cpython"], indirect=True)
def test_a_loop_of_a_function_a_tf_function_calls_runs_as_written(monkeypatch):
    # (what a trace reads from outside is its captures: no plan skips the reads)
    _compared(_in_a_function(after="return loss\n") + "@tf.function\ndef outer():\n    return train(12)\n"
              "print(outer())\nprint(outer())\n", monkeypatch, 0)


@pytest.mark.parametrize("runner", ["cpython"], indirect=True)
def test_a_loop_of_a_function_that_reads_a_local_before_it_is_bound_raises_what_the_function_would(monkeypatch):
    program = _in_a_function(after="    total = total + loss\n") + "train(12)\n"
    assert planned_loops(ast.parse(program), program)[0]
    with pytest.raises(TdfError) as caught:
        run_source(textwrap.dedent(program).lstrip("\n"), "prog.py")
    error = caught.value
    assert (error.kind, error.message) == ("UnboundLocalError",
                                           "cannot access local variable 'total' where it is not associated with a value")
    assert (error.line, error.column) == (program.lstrip("\n").splitlines().index("        total = total + loss") + 1, 17)


@pytest.mark.parametrize("body, replayed", [
    # steps 4 and 8 print, as written; the steps after them are traced again (5, 9), and the plan runs on
    ("    if step % 4 == 0:\n        print(step, loss)\n", [3, 6, 7, 10, 11]),
    # (on CPython the step is a Python number: a branch that formats it runs as written, and no plan traces it...)
    ("    if step % 4 == 0:\n        print(f'{step}: {loss}')\n", [3, 6, 7, 10, 11]),
    # (...but where the plan would, no plan: "0" at steps 1 and 2, not at 6)
    ("    if step > 0:\n        print(f'{step // 6}')\n", []),
    ("    if step == 9:\n        break\n", [3, 4, 5, 6, 7, 8]),
    # a traced iteration (1) that continues: no plan (the interpreter's stopped with an internal error)
    ("    if step % 2 == 1:\n        continue\n    print(step)\n", []),
    ("    if step > 5:\n        loss = loss * 2.0\n    elif step > 4:\n        print(loss)\n", [3, 4]),
])
def test_an_if_on_the_loop_item_runs_the_iterations_it_changes_as_written(body, replayed, monkeypatch):
    program = MLP + body
    _compared(program, monkeypatch, len(replayed))


@pytest.mark.parametrize("body", [
    "    if loss > 5.0:\n        loss = loss * 2.0\n",
    # an index or a bound read into Python: the same for steps 1 and 2, another from step 6 on
    "    last = losses[step // 6]\n",
    "    rows = X[step // 6:8]\n",
    "    kept = [loss] * (step // 6 + 1)\n",
])
def test_a_body_that_decides_from_its_values_is_not_planned(body, monkeypatch, runner):
    program = MLP + body
    if runner == "interpreter":
        tree = run_source(textwrap.dedent(program).lstrip("\n"), "prog.py").interpreter.program
        loop = next(s for s in tree.body if s.__class__.__name__ == "For")
        assert loop_shape(loop) is None
    else:           # (the same text rule, of CPython's syntax tree)
        assert planned_loops(ast.parse(program), program) == ([], {})
    _compared(program, monkeypatch, 0)


def test_an_effects_warning_names_its_line_as_written(monkeypatch):
    # a variable without a gradient: Adam warns at every step, at the apply_gradients line
    program = MLP.replace("model.trainable_variables)", "[model.layers[0].kernel, spare])").replace(
        "losses = []", "losses = []\nspare = tf.Variable([1.0])")
    planned, _ = _compared(program, monkeypatch, 9)
    assert planned.context.settings.warnings


@pytest.mark.parametrize("layer", ["Dropout(0.5)", "Dropout(0.5, noise_shape=(None, 1))", "GaussianNoise(0.3)",
                                   "GaussianDropout(0.2)"])
def test_a_layer_that_draws_draws_again_in_the_plan_in_the_order_as_written(layer, monkeypatch):
    # kernels.drawn: each iteration of the plan draws from the layer's generator as the loop as written does
    program = KERAS.format(x_shape=(16, 8), batch=16, steps=8, optimizer="Adam()",
                           layers=f'tf.keras.layers.Dense(6), tf.keras.layers.{layer}, tf.keras.layers.Dense(3)')
    _compared(program, monkeypatch, 5)


@pytest.mark.parametrize("noise, replayed", [
    ("tf.random.normal((16, 8)) * 0.1", 5),
    ("tf.random.uniform((16, 8), maxval=0.2, seed=3)", 5),     # the same numbers at every step
    ("tf.random.normal((16, 8), stddev=tf.cast(step, tf.float32) * 0.01)", 0),     # from the loop's item
])
def test_a_draw_the_loop_makes_itself_is_drawn_again_by_the_plan(noise, replayed, monkeypatch):
    program = KERAS.format(x_shape=(16, 8), batch=16, steps=8, optimizer="Adam()", layers="tf.keras.layers.Dense(3)")
    program = program.replace("logits = model(X, training=True)", f"logits = model(X + {noise}, training=True)")
    _compared(program, monkeypatch, replayed)


SGD_OVER_BATCHES = """
var w = [[0.5, -0.25], [0.125, 1.0]]
{batches}
for xb in batches:
    tape t:
        loss = reduce_sum(square(matmul(xb, w)))
    w.assign_sub(0.01 * t.gradient(loss, w))
"""


@interpreter_only      # (a TDF program)
@pytest.mark.parametrize("batches, replayed", [
    # eight batches of four rows, then two of three: the plan runs until the first short batch, then the loop
    # runs as written
    ("batches = [reshape(cast(range(8), float32), [4, 2]) * 0.1] * 8 + [reshape(cast(range(6), float32), [3, 2])] * 2",
     5),
    # a tensor's rows come one by one (ops.getitem): the plan sees the last one coming
    ("batches = reshape(cast(range(80), float32), [10, 4, 2]) * 0.01", 7),
])
def test_the_plan_takes_each_batch_as_it_comes(batches, replayed, monkeypatch):
    _compared(SGD_OVER_BATCHES.format(batches=batches), monkeypatch, replayed)


@interpreter_only      # (a TDF program)
def test_a_loop_inside_a_tape_is_not_planned(monkeypatch):
    program = """
    var w = [[0.5, -0.25], [0.125, 1.0]]
    tape outer:
        h = w
        for i in range(8):
            h = tanh(matmul(h, w))
    g = outer.gradient(reduce_sum(h), w)
    """
    _compared(program, monkeypatch, 0)


def test_the_compiled_plan_and_the_step_by_step_one_agree(monkeypatch):
    # a plan runs as generated code (each kernel by its NumPy function), or step by step through kernels.run
    compiled = _run(MLP, True, monkeypatch)
    monkeypatch.setattr(loop_plans.LoopPlan, "compile", lambda self, values: None)
    stepwise = _run(MLP, True, monkeypatch)
    assert compiled.context.loop_replayed == stepwise.context.loop_replayed == 9
    assert _state(compiled) == _state(stepwise)


# ------------------------------------------------------------------ random loops

_LEAVES = ["w", "x", "matmul(x, w)", "(w * cast(step, float32) * 0.01)", "0.5"]
_UNARY = ["sin({})", "tanh({})", "sigmoid({})", "square({})", "exp({} * 0.1)", "relu({})"]
_BINARY = ["({} + {})", "({} - {})", "({} * {})"]


def _expressions(depth):
    leaf = st.sampled_from(_LEAVES)
    if depth == 0:
        return leaf
    inner = _expressions(depth - 1)
    return st.one_of(leaf, st.builds(lambda f, a: f.format(a), st.sampled_from(_UNARY), inner),
                     st.builds(lambda f, a, b: f.format(a, b), st.sampled_from(_BINARY), inner, inner))


@st.composite
def _loops(draw):
    expr = draw(_expressions(3))
    reduce = draw(st.sampled_from(["sum", "mean"]))
    lr = draw(st.sampled_from(["0.05", "0.1 / (step + 1.0)", "0.02 * cast(step // 3 + 1, float32)"]))
    lines = ["var w = [[0.5, -0.25], [0.125, 0.75]]", "x = [[0.3, -0.2], [0.1, 0.4]]", "acc = 0.0",
             f"for step in range({draw(st.integers(6, 11))}):",
             "    tape t:", f"        loss = {reduce}(w * 0.0 + {expr})",
             "    g = t.gradient(loss, w)", f"    w.assign_sub({lr} * g)"]
    if draw(st.booleans()):
        lines.append("    acc = acc + loss")
    if draw(st.booleans()):
        lines += [f"    if step % {draw(st.integers(2, 4))} == 0:", "        print(step, loss)"]
    return "\n".join(lines) + "\n"


@interpreter_only      # (TDF programs)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(program=_loops())
def test_random_training_loops_give_the_bits_they_have_as_written(program, monkeypatch):
    planned, written = _run(program, True, monkeypatch), _run(program, False, monkeypatch)
    assert _state(planned) == _state(written), program
    assert planned.interpreter.output == written.interpreter.output


@interpreter_only      # (a TDF program)
def test_a_loop_without_a_gradient_or_an_effect_is_the_interpreters(monkeypatch):
    # the scalar path runs `y = sin(y) * 1.01 + 0.001` faster than a plan would: no plan is made
    result = _run("y = cast(0.5, float32)\nfor i in range(50):\n    y = sin(y) * 1.01 + 0.001\n", True, monkeypatch)
    assert result.context.loop_replayed == 0


STEPS = """
import tensorflow as tf
class Net(tf.keras.Model):
    def train_step(self, data):
        x, y = data
        return {"loss": x, KEY: y}
    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None):
        return 2.0 * super().compute_loss(x, y, y_pred, sample_weight)
"""


@pytest.mark.parametrize("key, plain", [('"acc"', True), ("x.name", False)])
def test_a_step_whose_return_is_a_dict_of_literal_keys_is_a_plain_function_on_both_syntax_trees(key, plain):
    # (Keras fit's plans let such a train_step in: library/keras/fit_plans.py)
    from tapecli.frontend import ast as tdf_ast
    from tapecli.frontend.parser import parse
    from tapecli.interpreter.loop_shape import plain_function
    program = STEPS.replace("KEY", key)
    functions = [n for n in tdf_ast.walk(parse(program, "prog.py")) if n.__class__ is tdf_ast.FuncDef]
    assert [plain_function(f) for f in functions] == [plain, True]
    # on CPython, compiled for plans in a program that fits (but compute_loss, whose super() reads its frame)
    fits = program + "Net().fit(None)\n"
    assert planned_loops(ast.parse(fits), fits)[1] == ({"train_step": {4}} if plain else {})
