"""Compiled kernels of loop plans (kernels/plan_kernels.py): where a loop's remaining iterations pay for them, a
plan's relu gradient, bias gradients (column sums), bias-and-relu and Adam's step run as compiled kernels that give
the bits of the NumPy kernels they stand for. Each kernel against its NumPy kernel on awkward values (signed zeros,
NaN, infinities), and training loops compiled, as written and with TAPECLI_PLAN_KERNELS=0: the same bits."""
import textwrap

import numpy as np
import pytest

from tapecli import kernels
from tapecli.api import Options, run_source
from tapecli.interpreter import loop_plans
from tapecli.kernels import numpy_kernels
from tapecli.library.keras import optimizers
from tapecli.runtime.context import run_context

from conftest import fast_paths

pytest.importorskip("numba")
plan_kernels = pytest.importorskip("tapecli.kernels.plan_kernels")

pytestmark = [fast_paths, pytest.mark.usefixtures("on_the_interpreter")]      # (loop plans are the interpreter's)

RAW = numpy_kernels.RAW_KERNELS
DTYPES = [np.float32, np.float64]


def _bits(a):
    a = np.asarray(a)
    return a.shape, a.dtype, a.tobytes()


def _awkward(rng, shape, dtype):
    """Normal values with signed zeros, a NaN and infinities among them."""
    x = rng.standard_normal(shape).astype(dtype)
    flat = x.reshape(-1)
    flat[rng.random(flat.size) < 0.1] = -0.0
    flat[rng.random(flat.size) < 0.05] = 0.0
    flat[0] = -0.0
    if flat.size > 8:
        flat[3], flat[5], flat[7] = np.nan, np.inf, -np.inf
    return x


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(256, 10), (256, 128), (16, 8), (33, 9), (19, 17), (512, 33), (8192, 4),
                                   (300, 70), (1000, 64), (4000, 5), (8200, 2), (6000, 3), (17000, 2)])
def test_column_sums_give_the_sum_kernel_s_bits(shape, dtype):
    rng = np.random.default_rng(sum(shape))
    for x in (rng.standard_normal(shape).astype(dtype), _awkward(rng, shape, dtype),
              np.full(shape, -0.0, dtype)):
        for attrs in ({"axis": (0,), "keepdims": True}, {"axis": 0, "keepdims": False}):
            assert plan_kernels.for_call("sum", [x], attrs) is plan_kernels.column_sums
            assert _bits(plan_kernels.column_sums(x, **attrs)) == _bits(RAW["sum"](x, **attrs))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size", [8, 9, 31, 32, 33, 40, 255, 256, 257, 1000, 4096, 8191, 8192])
def test_a_full_sum_gives_the_sum_kernel_s_bits(size, dtype):
    rng = np.random.default_rng(size)
    packet = 8 if dtype is np.float32 else 4
    attrs = {"axis": None, "keepdims": False}
    for x in (rng.standard_normal(size).astype(dtype), _awkward(rng, (size,), dtype), np.full(size, -0.0, dtype),
              rng.standard_normal((size, 1)).astype(dtype) * dtype(1e30)):
        expected = plan_kernels.full_sum if size <= packet * 1024 else None
        assert plan_kernels.for_call("sum", [x], attrs) is expected
        if expected is not None:
            assert _bits(plan_kernels.full_sum(x, **attrs)) == _bits(RAW["sum"](x, **attrs))


@pytest.mark.parametrize("shape, attrs", [((100, 3), {"axis": (0,)}), ((8, 16), {"axis": (0,)}),
                                          ((40000, 1), {"axis": (0,)}), ((64, 16), {"axis": (1,)}),
                                          ((4, 8, 16), {"axis": (0,)}), ((3, 2), {"axis": None}),
                                          ((64, 16), {"axis": None, "keepdims": True})])
def test_compiled_sums_leave_other_sums_to_numpy(shape, attrs):
    assert plan_kernels.for_call("sum", [np.ones(shape, np.float32)], attrs) is None


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(256, 128), (7,), (3, 5, 4)])
def test_relu_gradient_gives_masked_grad_s_bits(shape, dtype):
    rng = np.random.default_rng(1)
    g, x = _awkward(rng, shape, dtype), _awkward(rng, shape, dtype)
    attrs = {"kind": "relu", "alpha": 0.2}
    assert plan_kernels.for_call("masked_grad", [g, x], attrs) is plan_kernels.relu_grad
    assert _bits(plan_kernels.relu_grad(g, x, **attrs)) == _bits(RAW["masked_grad"](g, x, **attrs))
    out = np.empty_like(g)
    assert plan_kernels.relu_grad(g, x, **attrs, out=out) is out
    assert _bits(out) == _bits(RAW["masked_grad"](g, x, **attrs))
    expected = _bits(RAW["masked_grad"](g, x, **attrs))
    assert plan_kernels.relu_grad(g, x, **attrs, out=g) is g and _bits(g) == expected      # (in place)
    assert plan_kernels.for_call("masked_grad", [g, x], {"kind": "leaky_relu", "alpha": 0.2}) is None


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(256, 128), (256, 10), (5, 3), (2, 3, 70)])
def test_bias_relu_gives_relu_of_add_s_bits(shape, dtype):
    rng = np.random.default_rng(2)
    a, b = _awkward(rng, shape, dtype), _awkward(rng, shape[-1:], dtype)
    assert plan_kernels.bias_takes(a, b)
    expected = _bits(RAW["relu"](RAW["add"](a, b)))
    assert _bits(plan_kernels.bias_relu(a, b)) == expected
    out = np.empty_like(a)
    assert plan_kernels.bias_relu(a, b, out=out) is out and _bits(out) == expected
    assert plan_kernels.bias_relu(a, b, out=a) is a and _bits(a) == expected       # (in place)
    assert not plan_kernels.bias_takes(a, b.astype(np.float16))
    assert not plan_kernels.bias_takes(a[..., ::2], b[::2])       # (not laid out in C order)


def _adam(amsgrad=False, iterations=0, **hyper):
    opt = optimizers.Adam.__new__(optimizers.Adam)
    opt.iterations, opt.amsgrad = iterations, amsgrad
    opt.beta_1, opt.beta_2, opt.epsilon = hyper.get("beta_1", 0.9), hyper.get("beta_2", 0.999), hyper.get("eps", 1e-7)
    return opt


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("hyper", [{}, {"beta_1": 0.5, "beta_2": 0.75, "eps": 1e-3}])
def test_adam_s_compiled_update_gives_its_update_s_bits(dtype, hyper):
    rng = np.random.default_rng(3)
    n = 9610
    value = rng.standard_normal(n).astype(dtype)
    slots = {"momentum": np.zeros(n, dtype), "velocity": np.zeros(n, dtype)}
    compiled_slots = {k: s.copy() for k, s in slots.items()}
    compiled_value = value.copy()
    for step in range(5):       # (the slots carry each step's rounding into the next)
        g = _awkward(rng, (n,), dtype) * dtype(10.0 ** (step - 3)) if step != 2 else np.zeros(n, dtype)
        opt = _adam(iterations=step, **hyper)
        with np.errstate(all="ignore"):     # (inf - inf: NaN, a value here)
            new = opt.update(g, value, slots, dtype(1e-3), dtype)
        compiled = opt.compiled_update(g, compiled_value, compiled_slots, dtype(1e-3), dtype)
        assert _bits(compiled) == _bits(new)
        for k in slots:
            assert _bits(compiled_slots[k]) == _bits(slots[k])
        value, compiled_value = new, compiled


def test_amsgrad_has_no_compiled_update():
    n = 4
    slots = {k: np.zeros(n, np.float32) for k in ("momentum", "velocity", "velocity_hat")}
    assert _adam(amsgrad=True).compiled_update(np.ones(n, np.float32), np.ones(n, np.float32), slots,
                                               np.float32(1e-3), np.float32) is None


def test_the_kernel_names_a_plan_counts_are_the_compiled_kernels():
    # (relu: with the bias before it; the first of a compiled pair)
    assert kernels.PLAN_KERNELS == set(plan_kernels.KERNELS) | {"relu"} | {first for first, _ in plan_kernels.PAIRS}


# ------------------------------------------------------------------ training loops

LOOP = """
import tensorflow as tf
X = tf.random.normal((64, 12), seed=1)
Y = tf.random.uniform((64,), maxval=10, dtype=tf.int32, seed=2)
model = tf.keras.Sequential([{layers}])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
opt = tf.keras.optimizers.{optimizer}
for step in range({steps}):
    with tf.GradientTape() as tape:
        logits = model(X, training=True)
        loss = loss_fn(Y, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
"""
RELU_MLP = 'tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(10)'
# a batch of 256 and 128 units: relu's gradient and the bias's sums written into arrays of the iteration
WIDE_MLP = RELU_MLP.replace("32", "128")
DEEP = ('tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(16), tf.keras.layers.ReLU(), '
        'tf.keras.layers.Dense(10, activation="tanh")')


def _state(result):
    bits = [(v.name, v.read().value.tobytes()) for v in sorted(result.context.variables, key=lambda v: v.order)]
    bits += [[None if v is None else v.value.tobytes() for v in req.values] for req in result.requests]
    return bits


def _run(source, monkeypatch, switch="1", pays_from=0, runs_after=0):
    """The program with loop plans compiling their kernels from ``pays_from`` calls (TAPECLI_PLAN_KERNELS=switch),
    as a run followed by ``runs_after`` runs of it: the run, and how often each compiled kernel ran."""
    counts: dict = {}
    with monkeypatch.context() as patch:
        patch.setenv("TAPECLI_PLAN_KERNELS", switch)
        patch.setattr(loop_plans, "COMPILED_FROM_CALLS_COLD", pays_from)
        patch.setattr(loop_plans, "COMPILED_FROM_CALLS_WARM", pays_from)
        for name in ("adam", "relu_grad", "column_sums", "full_sum", "bias_relu", "_xent_backprop"):
            def counted(*args, _f=getattr(plan_kernels, name), _name=name, **attrs):
                counts[_name] = counts.get(_name, 0) + 1
                return _f(*args, **attrs)
            patch.setattr(plan_kernels, name, counted)
        return run_source(textwrap.dedent(source).lstrip("\n"), "prog.py", Options(runs_after=runs_after)), counts


# (a layer's bias gradient is BiasAddGrad's, rows in order: NumPy's one reduction, no compiled column sums)
ALL = {"adam", "relu_grad", "full_sum", "bias_relu"}


@pytest.mark.parametrize("layers, optimizer, used", [
    (RELU_MLP, "Adam(learning_rate=0.01)", ALL),
    (WIDE_MLP, "Adam(learning_rate=0.01)", ALL | {"_xent_backprop"}),     # (64 rows: TensorFlow's own xent kernels)
    (DEEP, "AdamW(learning_rate=0.01, weight_decay=0.1)", ALL),
    (RELU_MLP, "Adam(learning_rate=0.01, amsgrad=True)", ALL - {"adam"}),
    (RELU_MLP, "SGD(learning_rate=0.1, momentum=0.9)", ALL - {"adam"}),
], ids=["adam", "wide", "adamw-deep", "amsgrad", "sgd"])
def test_a_compiled_plan_gives_the_bits_of_the_ordinary_path(layers, optimizer, used, monkeypatch):
    steps = 9
    program = LOOP.format(layers=layers, optimizer=optimizer, steps=steps)
    if layers is WIDE_MLP:
        program = program.replace("(64, 12)", "(256, 12)").replace("(64,)", "(256,)")
    compiled, counts = _run(program, monkeypatch)
    again, _ = _run(program, monkeypatch)
    ordinary, none = _run(program, monkeypatch, switch="0")
    assert set(counts) == used and not none
    assert all(n % (steps - 3) == 0 for n in counts.values())       # (every planned iteration, none other)
    assert compiled.context.loop_replayed == ordinary.context.loop_replayed == steps - 3
    assert _state(compiled) == _state(ordinary) == _state(again)


def test_a_plan_compiles_only_where_its_remaining_iterations_pay(monkeypatch):
    program = LOOP.format(layers=RELU_MLP, optimizer="Adam()", steps=9)
    # 9 - 3 iterations after the plan is made; 5 calls a compiled kernel may take: the loss's mean, relu, its
    # gradient, the cross-entropy and the optimizer's step (the biases' gradients are BiasAddGrad's NumPy reduction)
    _, counts = _run(program, monkeypatch, pays_from=6 * 5)
    assert counts
    _, counts = _run(program, monkeypatch, pays_from=6 * 5 + 1)
    assert not counts


def test_the_runs_that_follow_in_the_process_count_too(monkeypatch):
    # tapecli bench runs a program again and again in one process: the compiled kernels, paid for once, serve the
    # loop in every run (9 iterations a run, 5 calls a compiled kernel may take)
    program = LOOP.format(layers=RELU_MLP, optimizer="Adam()", steps=9)
    _, counts = _run(program, monkeypatch, pays_from=(6 + 9) * 5, runs_after=0)
    assert not counts
    _, counts = _run(program, monkeypatch, pays_from=(6 + 9) * 5, runs_after=1)
    assert counts


@pytest.mark.parametrize("started", [False, True])
def test_a_process_that_has_not_started_numba_pays_for_its_start(started, monkeypatch):
    steps = [("sum", (0,), None)]       # (one call a compiled kernel may take)
    monkeypatch.setattr(kernels, "numba_started", lambda: started)
    cold, warm = loop_plans.COMPILED_FROM_CALLS_COLD, loop_plans.COMPILED_FROM_CALLS_WARM
    assert cold > warm
    with run_context():         # (a run's mode: TAPECLI_PLAN_KERNELS unset)
        assert loop_plans.compiles(steps, warm) == started
        assert loop_plans.compiles(steps, cold)
        assert not loop_plans.compiles(steps, 0)
    monkeypatch.setenv("TAPECLI_PLAN_KERNELS", "0")
    with run_context():
        assert not loop_plans.compiles(steps, cold)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows, classes", [(256, 10), (33, 32), (1100, 1), (300, 7)])
def test_the_compiled_cross_entropy_pair_gives_both_kernels_bits(rows, classes, dtype):
    from tapecli.ops import nn
    rng = np.random.default_rng(rows)
    labels = rng.integers(0, classes, rows)
    for logits in (rng.standard_normal((rows, classes)).astype(dtype) * dtype(30), _awkward(rng, (rows, classes), dtype)):
        pair = plan_kernels.for_pair(("sparse_softmax_xent", "sparse_softmax_xent_backprop"), [logits, labels],
                                     nn._sparse_xent_with_backprop)
        assert pair is not None and pair is not nn._sparse_xent_with_backprop
        with np.errstate(all="ignore"):
            expected = nn._sparse_xent_with_backprop(logits, labels)
            for int_labels in (labels, labels.astype(np.int32)):
                got = pair(logits, int_labels)
                assert [_bits(a) for a in got] == [_bits(a) for a in expected]
                assert _bits(got[0]) == _bits(RAW["sparse_softmax_xent"](logits, int_labels))
                assert _bits(got[1]) == _bits(RAW["sparse_softmax_xent_backprop"](logits, int_labels))


def test_the_compiled_cross_entropy_pair_leaves_labels_out_of_range_and_other_logits_to_numpy():
    from tapecli.ops import nn
    names = ("sparse_softmax_xent", "sparse_softmax_xent_backprop")
    logits, labels = np.ones((256, 10), np.float32), np.zeros(256, np.int64)
    labels[5] = 10
    fallback = []
    pair = plan_kernels.for_pair(names, [logits, labels], lambda *args: fallback.append(1) or "numpy's")
    assert pair(logits, labels) == "numpy's" and fallback == [1]
    assert plan_kernels.for_pair(names, [np.ones((4, 10), np.float32), labels[:4]], nn._sparse_xent_with_backprop) \
        is None             # (few rows: TensorFlow's own kernels, tf_xent)
    assert plan_kernels.for_pair(names, [np.ones((256, 40), np.float32), labels], nn._sparse_xent_with_backprop) \
        is None             # (many classes: NumPy's rows)
