"""Loop plans (interpreter/loop_plans.py): the iterations of a training loop after two traced ones run as
the traced kernel calls and effects, and leave exactly what the loop run as written leaves: the same
variables, slots, names, lists and gradient requests, bit for bit. A loop a plan cannot replace runs as
written, with the same results."""
import textwrap

import numpy as np
import pytest

from tapecli.api import run_source
from tapecli.interpreter import loop_plans

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
    monkeypatch.setattr(loop_plans, "MIN_ITERATIONS", loop_plans.MIN_ITERATIONS if plans else 10 ** 9)
    return run_source(textwrap.dedent(source).lstrip("\n"), "prog.py")


def _state(result):
    """Every variable of the run (weights, optimizer slots), every tensor bound to a name or kept in a list,
    and every gradient request: their bits."""
    bits = [(v.name, v.read().value.tobytes()) for v in sorted(result.context.variables, key=lambda v: v.order)]
    for name, value in sorted(result.scope.vars.items()):
        items = value if isinstance(value, list) else [value]
        for item in items:
            if hasattr(item, "value") and isinstance(item.value, (np.ndarray, np.generic)):
                bits.append((name, np.asarray(item.value).tobytes(), item.weak))
    for req in result.requests:
        bits.append((req.kind, req.line, req.names, req.labels, req.why, req.objective,
                     [None if v is None else v.value.tobytes() for v in req.values]))
    return bits


@pytest.mark.parametrize("program, steps", [(MLP, 12), (CNN, 8), (SGD, 9), (MANUAL, 10), (SCHEDULED, 9)],
                         ids=["mlp-adam", "cnn-adam", "sgd-momentum", "tdf-assign", "item-in-arithmetic"])
def test_a_training_loop_runs_as_a_plan_with_the_bits_it_has_as_written(program, steps, monkeypatch):
    planned, written = _run(program, True, monkeypatch), _run(program, False, monkeypatch)
    assert written.context.loop_replayed == 0
    # iteration 0 as written, 1 and 2 traced, 3 to the last but one as the plan, the last as written
    assert planned.context.loop_replayed == steps - 4
    assert _state(planned) == _state(written)
    assert len(planned.requests) == steps


@pytest.mark.parametrize("line, why", [
    ("print(loss)", "a print"),
    ("noise = tf.random.normal([1])", "a draw"),
    ("n = helper(loss)", "a program's function"),
    ("last = float(loss)", "a value read into Python"),
])
def test_a_loop_a_plan_cannot_replace_runs_as_written(line, why, monkeypatch):
    program = "def helper(v):\n    return v * 2.0\n" + MLP + "    " + line + "\n"
    planned, written = _run(program, True, monkeypatch), _run(program, False, monkeypatch)
    assert planned.context.loop_replayed == 0, why
    assert _state(planned) == _state(written)
    assert planned.interpreter.output == written.interpreter.output


@pytest.mark.parametrize("body", [
    "    if step > 5:\n        loss = loss * 2.0\n",
    "    if step == 9:\n        break\n",
    # an index or a bound read into Python: the same for steps 1 and 2, another from step 6 on
    "    last = losses[step // 6]\n",
    "    rows = X[step // 6:8]\n",
    "    kept = [loss] * (step // 6 + 1)\n",
])
def test_a_body_that_branches_is_not_planned(body, monkeypatch):
    program = MLP + body
    tree = run_source(textwrap.dedent(program).lstrip("\n"), "prog.py").interpreter.program
    loop = next(s for s in tree.body if s.__class__.__name__ == "For")
    assert loop_plans.carried_names(loop) is None
    planned, written = _run(program, True, monkeypatch), _run(program, False, monkeypatch)
    assert planned.context.loop_replayed == 0
    assert _state(planned) == _state(written)


def test_a_layer_that_draws_leaves_the_loop_as_written(monkeypatch):
    program = KERAS.format(x_shape=(16, 8), batch=16, steps=8, optimizer="Adam()",
                           layers='tf.keras.layers.Dense(6), tf.keras.layers.Dropout(0.5), tf.keras.layers.Dense(3)')
    planned, written = _run(program, True, monkeypatch), _run(program, False, monkeypatch)
    assert planned.context.loop_replayed == 0
    assert _state(planned) == _state(written)


def test_a_batch_of_another_shape_ends_the_plan(monkeypatch):
    # eight batches of four rows, then two of three: the plan runs until the first short batch, then the
    # loop runs as written
    program = """
    var w = [[0.5, -0.25], [0.125, 1.0]]
    batches = [reshape(cast(range(8), float32), [4, 2]) * 0.1] * 8 + [reshape(cast(range(6), float32), [3, 2])] * 2
    for xb in batches:
        tape t:
            loss = reduce_sum(square(matmul(xb, w)))
        w.assign_sub(0.01 * t.gradient(loss, w))
    """
    planned, written = _run(program, True, monkeypatch), _run(program, False, monkeypatch)
    assert planned.context.loop_replayed == 5
    assert _state(planned) == _state(written)


def test_a_loop_inside_a_tape_is_not_planned(monkeypatch):
    program = """
    var w = [[0.5, -0.25], [0.125, 1.0]]
    tape outer:
        h = w
        for i in range(8):
            h = tanh(matmul(h, w))
    g = outer.gradient(reduce_sum(h), w)
    """
    planned, written = _run(program, True, monkeypatch), _run(program, False, monkeypatch)
    assert planned.context.loop_replayed == 0
    assert _state(planned) == _state(written)
