"""Backward plans (autodiff/replay.py): a backward pass over a tape of a structure seen before runs as a
recorded trace of kernel calls, and gives exactly the ordinary path's bits; a pass whose structure
changed, or whose trace does not hold, runs the ordinary path."""
import textwrap

import numpy as np
import pytest

from tapecli import kernels
from tapecli.api import Options, run_source
from tapecli.autodiff import replay
from tapecli.interpreter import loop_plans
from tapecli.kernels.trace import Mismatch, Recorder
from tapecli.ops import linalg
from tapecli.runtime.values import Tensor

from conftest import fast_paths

pytestmark = fast_paths

TRAIN = """
import tensorflow as tf
X = tf.random.normal({x_shape}, seed=1)
Y = tf.random.uniform(({batch},), maxval=3, dtype=tf.int32, seed=2)
model = tf.keras.Sequential([{layers}])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
opt = tf.keras.optimizers.Adam(learning_rate=0.01)
losses = []
for step in range({steps}):
    with tf.GradientTape() as tape:
        loss = loss_fn(Y, model(X, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    losses.append(loss)
"""


def mlp(steps):
    return TRAIN.format(x_shape=(16, 8), batch=16, steps=steps,
                        layers='tf.keras.layers.Dense(12, activation="relu"), tf.keras.layers.Dense(3)')


CNN = TRAIN.format(x_shape=(4, 9, 9, 1), batch=4, steps=8,
                   layers='tf.keras.layers.Conv2D(3, 3, activation="relu"), tf.keras.layers.MaxPooling2D(2), '
                          'tf.keras.layers.Flatten(), tf.keras.layers.Dense(3)')

# the structure changes with the step: every third step doubles the loss, and the batch grows at step 6
CHANGING = """
var w = [[0.5, -0.25], [0.125, 1.0]]
grads = []
for step in range(12):
    n = 3 if step < 6 else 5
    x = reshape(cast(range(2 * n), float32), [n, 2]) * 0.1
    tape t:
        y = relu(x @ w) * (x @ w)
        loss = reduce_sum(y)
        if step % 3 == 0:
            loss = loss * 2.0
    grads.append(t.gradient(loss, w))
"""


def _run(source, monkeypatch, plans=True, **options):
    monkeypatch.setattr(replay, "MAX_PLANS", replay.MAX_PLANS if plans else 0)
    monkeypatch.setattr(loop_plans, "planner", lambda *args: None)     # every iteration's backward pass, as written
    return run_source(textwrap.dedent(source).lstrip("\n"), "prog.py", Options(**options))


def _bits(result, name):
    got = result.scope.get(name)
    items = got if isinstance(got, list) else [got]
    return [np.asarray(t.read().value if hasattr(t, "read") else t.value).tobytes() for t in items]


def _state(result):
    return [np.asarray(v.read().value).tobytes() for v in result.scope.get("model").weights]


@pytest.mark.parametrize("program", [mlp(12), CNN], ids=["mlp", "cnn"])
def test_a_training_loop_replays_its_backward_pass_with_the_ordinary_bits(program, monkeypatch):
    planned = _run(program, monkeypatch)
    ordinary = _run(program, monkeypatch, plans=False)
    assert ordinary.context.replayed == 0
    steps = len(planned.scope.get("losses"))
    # passes 1-3 of the structure run ordinarily (the 2nd and 3rd also traced, to check the plan)
    assert planned.context.replayed == steps - 3
    assert _state(planned) == _state(ordinary)
    assert _bits(planned, "losses") == _bits(ordinary, "losses")


def test_a_changed_structure_runs_the_ordinary_path_and_gets_a_plan_of_its_own(monkeypatch):
    planned = _run(CHANGING, monkeypatch)
    ordinary = _run(CHANGING, monkeypatch, plans=False)
    assert _bits(planned, "grads") == _bits(ordinary, "grads")
    # four structures (two batch sizes, doubled or not): the doubled ones run twice each, the others four
    # times, their 4th pass replayed
    assert len(planned.context.backward_plans) == 4
    assert planned.context.replayed == 2
    # and the values are the gradient: d/dw sum(relu(xw) * xw) = x^T (2 relu(xw)), doubled every third step
    w = np.array([[0.5, -0.25], [0.125, 1.0]], np.float32)
    for step, got in enumerate(planned.scope.get("grads")):
        n = 3 if step < 6 else 5
        x = np.arange(2 * n, dtype=np.float32).reshape(n, 2) * np.float32(0.1)
        expected = x.T @ (2 * np.maximum(x @ w, 0)) * (2 if step % 3 == 0 else 1)
        np.testing.assert_allclose(got.value, expected, rtol=1e-6)


def test_a_backward_pass_that_computes_outside_the_kernels_gets_no_plan(monkeypatch):
    # a gradient rule that copies its result with NumPy: the copy is a constant to a trace, and a constant
    # that changes from pass to pass is refused; a plan adopted without that check would give step 4's
    # gradient again at every later step
    rule = linalg.MATMUL.vjp

    def copying_rule(r, g, needs):
        return tuple(None if ig is None else Tensor(np.array(ig.value)) for ig in rule(r, g, needs))
    monkeypatch.setattr(linalg.MATMUL, "vjp", copying_rule)
    program = mlp(8)
    planned = _run(program, monkeypatch)
    assert planned.context.replayed == 0
    assert [p.rejected for p in planned.context.backward_plans.values()] == [True]
    assert _state(planned) == _state(_run(program, monkeypatch, plans=False))


def test_a_numpy_batch_repeated_then_changed_gives_each_passs_gradient(monkeypatch):
    # each NumPy batch serves three steps (as a GAN's critic takes them): an op's NumPy input is recorded as
    # the tensor it was converted to, so a plan reads the new batch; if the gradient rules converted it again,
    # the copy would be a constant that agreed on passes 2 and 3, and every later step would get step 0's batch
    program = """
    import numpy as np
    import tensorflow as tf
    data = np.random.default_rng(0).normal(size=(4, 16, 4)).astype("float32")
    w = tf.Variable(tf.ones((4, 3)))
    grads = []
    for step in range(12):
        x = data[step // 3]
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.tanh(tf.matmul(x, w)))
        grads.append(tape.gradient(loss, w))
    """
    planned = _run(program, monkeypatch)
    assert planned.context.replayed == 12 - 3
    assert _bits(planned, "grads") == _bits(_run(program, monkeypatch, plans=False), "grads")
    data = np.random.default_rng(0).normal(size=(4, 16, 4)).astype("float32")
    expected = data[3].T @ (1 - np.tanh(data[3] @ np.ones((4, 3), np.float32)) ** 2)
    np.testing.assert_allclose(planned.scope.get("grads")[-1].value, expected, rtol=1e-5)


@pytest.mark.parametrize("options", [{"check_numerics": True}, {"explain": True}])
def test_no_plan_runs_where_the_pass_is_checked_or_logged(options, monkeypatch):
    planned = _run(mlp(6), monkeypatch, **options)
    assert planned.context.replayed == 0 and not planned.context.backward_plans


def test_no_plan_runs_while_another_tape_records_the_pass(monkeypatch):
    source = """
        var x = [0.5, 1.5]
        seconds = []
        for i in range(6):
            tape outer:
                tape inner:
                    y = reduce_sum(sin(x) * x)
                g = inner.gradient(y, x)
                s = reduce_sum(g)
            seconds.append(outer.gradient(s, x))
    """
    planned = _run(source, monkeypatch)
    assert _bits(planned, "seconds") == _bits(_run(source, monkeypatch, plans=False), "seconds")
    # the inner passes are recorded by the outer tape: never planned; the outer ones are
    assert planned.context.replayed == 3


def test_a_trace_runs_again_on_new_inputs_with_views_and_constants():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    recorder = Recorder([a])
    with kernels.quiet(), kernels.tracing(recorder):
        doubled = kernels.call("mul", a, np.float32(2))
        out = kernels.call("add", doubled.T, np.ones((3, 2), np.float32))     # a view of a result
    trace = recorder.trace()
    assert [name for name, _, _ in trace.steps] == ["mul", "add"]
    b = np.full((2, 3), 5, np.float32)
    with kernels.quiet():
        values = trace.run([b], kernels.run)
    np.testing.assert_array_equal(values[-1], b.T * 2 + 1)
    np.testing.assert_array_equal(out, a.T * 2 + 1)
    with kernels.quiet(), pytest.raises(Mismatch):      # laid out otherwise than when recorded
        trace.run([np.full((3, 2), 5, np.float32)], kernels.run)


def test_a_bound_trace_lets_go_of_each_slot_after_its_last_reader_but_the_kept_ones():
    a = np.arange(6, dtype=np.float32)
    recorder = Recorder([a])
    with kernels.quiet(), kernels.tracing(recorder):
        doubled = kernels.call("mul", a, np.float32(2))              # slot 1: read by the two calls after it
        kernels.call("add", kernels.call("sin", doubled), doubled)    # slots 2 and 3
    trace = recorder.trace()
    with kernels.quiet():
        values = trace.run([a], kernels.run)
        assert all(v is not None for v in values)            # (not bound: every slot, for the caller to compare)
        trace.bind(values, kernels.direct, kept=[3])
        b = np.full(6, 0.5, np.float32)
        values = trace.run([b], kernels.run, direct=True)
    assert values[:3] == [None, None, None]
    np.testing.assert_array_equal(values[3], np.sin(b * 2) + b * 2)


def test_a_recorder_gives_its_arrays_by_slot_where_each_kernel_made_its_own():
    a = np.arange(6, dtype=np.float32)
    recorder = Recorder([a])
    with kernels.quiet(), kernels.tracing(recorder):
        doubled = kernels.call("mul", a, np.float32(2))
        total = kernels.call("add", doubled, a)
    values = recorder.traced_values()
    assert len(values) == 3 and values[0] is a and values[1] is doubled and values[2] is total
    # a call that gives back an array made before: that array's slot is the later one, the earlier is not known
    recorder.call("same", (total,), {}, lambda name, args, attrs: args[0])
    assert recorder.traced_values() is None


def test_traces_differ_where_a_constant_differs():
    def trace_of(constant):
        a = np.ones(3, np.float32)
        recorder = Recorder([a])
        with kernels.quiet(), kernels.tracing(recorder):
            kernels.call("mul", a, constant)
        return recorder.trace()
    assert trace_of(np.float32(2)).same_as(trace_of(np.float32(2)))
    assert not trace_of(np.float32(2)).same_as(trace_of(np.float32(3)))
    assert not trace_of(np.float32(0.0)).same_as(trace_of(np.float32(-0.0)))
    assert not trace_of(np.array([1, 2, 3], np.float32)).same_as(trace_of(np.array([1, 2, 4], np.float32)))


def test_repeated_jacobians_run_their_batched_pass_as_a_plan(monkeypatch):
    source = """
        var x = [0.5, -1.5, 2.0]
        jacobians = []
        for i in range(6):
            tape t:
                y = sin(x) * x + reduce_sum(x * x)
            jacobians.append(t.jacobian(y, x))
            x.assign(x * 0.9)
    """
    planned = _run(source, monkeypatch)
    assert _bits(planned, "jacobians") == _bits(_run(source, monkeypatch, plans=False), "jacobians")
    assert planned.context.replayed == 3


def test_an_adopted_plan_calls_numpys_functions_itself_but_where_numba_serves_the_arrays(monkeypatch):
    planned = _run(mlp(6), monkeypatch)
    (plan,) = planned.context.backward_plans.values()
    names = [name for name, _, _ in plan.trace.steps]
    assert "matmul" in names and len(plan.trace.functions) == len(names)
    assert all(f is kernels.RAW_NUMPY_KERNELS[name] for name, f in zip(names, plan.trace.functions))
    # what kernels.direct answers: NumPy's function, but for arrays Numba serves (THRESHOLD elements or
    # more), while a recorder writes the calls down, or outside quiet() (NumPy's warnings would be on)
    big = np.ones(64, np.float32)
    monkeypatch.setattr(kernels, "THRESHOLD", 64)
    with kernels.quiet():
        assert kernels.direct("matmul", [big, big]) is kernels.RAW_NUMPY_KERNELS["matmul"]
        assert kernels.direct("add", [big[:8], big[:8]]) is kernels.RAW_NUMPY_KERNELS["add"]
        assert (kernels.direct("add", [big, big]) is None) == kernels.numba_ready()
        with kernels.tracing(Recorder([])):
            assert kernels.direct("matmul", [big, big]) is None
    assert kernels.direct("matmul", [big, big]) is None
