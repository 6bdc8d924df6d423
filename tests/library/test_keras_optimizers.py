"""Keras-lite optimizers: three steps each against Keras 3's update formulas computed here in NumPy
float32 (keras/src/optimizers/*.py), from the gradients the program computed; and the update written in
place (no tape open) against the same update while a tape records, bit for bit."""
import textwrap

import numpy as np
import pytest

from conftest import run_program, value
from tapecli.api import run_source
from tapecli.library.keras import optimizers
from tapecli.errors import TdfError, TdfTypeError, TdfValueError

f = np.float32
W0 = [1.0, -2.0, 3.0]


def run_steps(ctor, steps=3, extra=""):
    r = run_program(f"""
        var w = {W0}
        const c = [0.5, 1.5, -1.0]
        opt = {ctor}
        gs = zeros([0, 3])
        for step in range({steps}):
            tape t:
                loss = sum(square(w) * c + w)
            g = t.gradient(loss, w)
            gs = concat([gs, expand_dims(g, 0)])
            opt.apply_gradients([[g, w]])
        it = opt.iterations
        {extra}
    """)
    gs = np.array(value(r, "gs"), dtype=f)
    # the gradients are those of the loss: 2 * c * w + 1 at each step's w
    return r, gs, np.array(value(r, "w"), dtype=f)


def check(ctor, reference, **kw):
    r, gs, w = run_steps(ctor)
    assert value(r, "it") == 3
    want = reference(np.array(W0, f), list(gs), **kw)
    np.testing.assert_allclose(w, want, rtol=2e-7, atol=0)
    # the gradients were those of the updated variable at each step
    ws = [np.array(W0, f)]
    np.testing.assert_allclose(gs[0], f(2) * np.array([0.5, 1.5, -1.0], f) * ws[0] + 1, rtol=1e-6)


def ref_sgd(w, gs, lr=0.01, momentum=0.0, nesterov=False):
    m = np.zeros_like(w)
    for g in gs:
        if momentum:
            m = m * f(momentum) - g * f(lr)
            w = w + (m * f(momentum) - g * f(lr)) if nesterov else w + m
        else:
            w = w - g * f(lr)
    return w


def ref_adam(w, gs, lr=0.001, b1=0.9, b2=0.999, eps=1e-7, amsgrad=False, wd=None):
    m, v, vhat = np.zeros_like(w), np.zeros_like(w), np.zeros_like(w)
    for i, g in enumerate(gs):
        if wd is not None:
            w = w - w * f(wd) * f(lr)
        t = f(i + 1)
        alpha = f(lr) * np.sqrt(f(1) - np.power(f(b2), t)) / (f(1) - np.power(f(b1), t))
        m = m + (g - m) * f(1 - b1)
        v = v + (g * g - v) * f(1 - b2)
        if amsgrad:
            vhat = np.maximum(vhat, v)
            w = w - (m * alpha) / (np.sqrt(vhat) + f(eps))
        else:
            w = w - (m * alpha) / (np.sqrt(v) + f(eps))
    return w


def ref_rmsprop(w, gs, lr=0.001, rho=0.9, momentum=0.0, eps=1e-7, centered=False):
    vel, mom, avg = np.zeros_like(w), np.zeros_like(w), np.zeros_like(w)
    for g in gs:
        vel = f(rho) * vel + f(1 - rho) * np.square(g)
        if centered:
            avg = f(rho) * avg + f(1 - rho) * g
            den = vel - np.square(avg) + f(eps)
        else:
            den = vel + f(eps)
        inc = (f(lr) * g) / np.sqrt(den)
        if momentum > 0:
            mom = f(momentum) * mom + inc
            w = w - mom
        else:
            w = w - inc
    return w


def ref_adagrad(w, gs, lr=0.001, init=0.1, eps=1e-7):
    acc = np.full_like(w, f(init))
    for g in gs:
        acc = acc + np.square(g)
        w = w - (f(lr) * g) / np.sqrt(acc + f(eps))
    return w


@pytest.mark.parametrize("ctor, kw", [
    ("SGD()", {}),
    ("SGD(learning_rate=0.1)", {"lr": 0.1}),
    ("SGD(learning_rate=0.1, momentum=0.9)", {"lr": 0.1, "momentum": 0.9}),
    ("SGD(learning_rate=0.1, momentum=0.9, nesterov=True)", {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
])
def test_sgd(ctor, kw):
    check(ctor, ref_sgd, **kw)


@pytest.mark.parametrize("ctor, kw", [
    ("Adam()", {}),
    ("Adam(learning_rate=0.1, beta_1=0.8, beta_2=0.99, epsilon=1e-3)",
     {"lr": 0.1, "b1": 0.8, "b2": 0.99, "eps": 1e-3}),
    ("Adam(learning_rate=0.1, amsgrad=True)", {"lr": 0.1, "amsgrad": True}),
    ("AdamW()", {"wd": 0.004}),
    ("AdamW(learning_rate=0.1, weight_decay=0.1)", {"lr": 0.1, "wd": 0.1}),
])
def test_adam_and_adamw(ctor, kw):
    check(ctor, ref_adam, **kw)


@pytest.mark.parametrize("ctor, kw", [
    ("RMSprop()", {}),
    ("RMSprop(learning_rate=0.01, rho=0.8, momentum=0.5)", {"lr": 0.01, "rho": 0.8, "momentum": 0.5}),
    ("RMSprop(learning_rate=0.01, centered=True)", {"lr": 0.01, "centered": True}),
])
def test_rmsprop(ctor, kw):
    check(ctor, ref_rmsprop, **kw)


@pytest.mark.parametrize("ctor, kw", [
    ("Adagrad()", {}),
    ("Adagrad(learning_rate=0.5, initial_accumulator_value=1.0)", {"lr": 0.5, "init": 1.0}),
])
def test_adagrad(ctor, kw):
    check(ctor, ref_adagrad, **kw)


def test_sgd_momentum_by_hand():
    # loss = sum(w * c): g = c every step; m1 = -0.1c, m2 = -0.19c, m3 = -0.271c; w3 = w0 - 0.561c
    r = run_program("""
        var w = [1.0, 2.0]
        const c = [1.0, -2.0]
        opt = SGD(learning_rate=0.1, momentum=0.9)
        for i in range(3):
            tape t:
                loss = sum(w * c)
            opt.apply_gradients([[t.gradient(loss, w), w]])
    """)
    np.testing.assert_allclose(value(r, "w"), [1 - 0.561, 2 + 1.122], rtol=1e-6)


def test_float64_variables_take_keras_casts_of_the_hyperparameters():
    # Keras's ops.cast(beta_1, float64) (and momentum's, weight decay's, the Constant initializer's) makes a Python
    # float a float32 tensor first: 0.9 becomes 0.8999999761581421; 1 - beta_1 beside a tensor stays 0.1 - 2**-56
    source = textwrap.dedent("""
        import tensorflow as tf
        import keras
        v = tf.Variable([1.0, 2.0], dtype=tf.float64)
        w = tf.Variable([1.0, 2.0], dtype=tf.float64)
        adam, sgd = keras.optimizers.Adam(0.1), keras.optimizers.SGD(0.1, momentum=0.9)
        for g in ([0.1, -0.3], [0.7, 0.2]):
            adam.apply_gradients([(tf.constant(g, tf.float64), v)])
            sgd.apply_gradients([(tf.constant(g, tf.float64), w)])
        print(v.numpy().tolist(), w.numpy().tolist())
    """)
    d, rounded = np.float64, lambda x: np.float64(np.float32(x))
    lr = rounded(0.1)
    v, m, s = np.array([1.0, 2.0]), np.zeros(2), np.zeros(2)
    w, mom = np.array([1.0, 2.0]), np.zeros(2)
    for t, g in enumerate([np.array([0.1, -0.3]), np.array([0.7, 0.2])], 1):
        alpha = lr * np.sqrt(1 - rounded(0.999) ** d(t)) / (1 - rounded(0.9) ** d(t))
        m += (g - m) * (1 - 0.9)
        s += (g * g - s) * (1 - 0.999)
        v -= (m * alpha) / (np.sqrt(s) + 1e-7)
        mom = mom * rounded(0.9) - g * lr
        w += mom
    printed = run_source(source).output
    assert printed == [f"{v.tolist()} {w.tolist()}"]
    assert optimizers.converted(0.9, np.float32) == np.float32(0.9)       # (float32: the same rounding)


def test_weight_decay_on_sgd_uses_the_decayed_variable():
    check("SGD(learning_rate=0.1, weight_decay=0.5)",
          lambda w, gs: _sgd_wd(w, gs, 0.1, 0.5))


def _sgd_wd(w, gs, lr, wd):
    for g in gs:
        w = w - w * f(wd) * f(lr)
        w = w - g * f(lr)
    return w


def test_exponential_decay_schedule_uses_the_step_before_the_increment():
    def ref(w, gs):
        for i, g in enumerate(gs):
            lr = f(0.1) * np.power(f(0.5), f(i) / f(2.0))
            w = w - g * lr
        return w
    check("SGD(learning_rate=ExponentialDecay(0.1, decay_steps=2, decay_rate=0.5))", ref)
    r, _, _ = run_steps("SGD(learning_rate=ExponentialDecay(0.1, 2, 0.5, staircase=True))",
                        extra="lr = opt.learning_rate")
    assert value(r, "lr") == pytest.approx(float(f(0.1) * f(0.5)))      # step 3: floor(3 / 2) = 1


def test_clipnorm_clipvalue_global_clipnorm():
    def clipped(kind, limit):
        def ref(w, gs):
            for g in gs:
                if kind == "norm":
                    n = np.sqrt(np.sum(g * g))
                    g = (g * f(limit)) / np.maximum(n, f(limit))
                elif kind == "global":
                    n = np.sqrt(np.sum(np.square(g)))
                    g = g * (f(limit) * np.minimum(f(1) / n, f(1 / limit)))
                else:
                    g = np.clip(g, f(-limit), f(limit))
                w = w - g * f(0.1)
            return w
        return ref
    check("SGD(learning_rate=0.1, clipnorm=1.0)", clipped("norm", 1.0))
    check("SGD(learning_rate=0.1, global_clipnorm=0.5)", clipped("global", 0.5))
    check("SGD(learning_rate=0.1, clipvalue=0.75)", clipped("value", 0.75))
    with pytest.raises(TdfValueError, match="Only one of"):
        run_program("opt = SGD(clipnorm=1.0, clipvalue=1.0)")


def test_slot_variables_are_not_trainable_and_apply_is_not_recorded():
    r = run_program("""
        var w = [1.0, 2.0]
        opt = Adam(learning_rate=0.1)
        tape t(persistent=True):
            loss = sum(w * w)
            g = t.gradient(loss, w)
            opt.apply_gradients([[g, w]])
            after = sum(w)
        slots = opt.variables
        n = len(slots)
        trainable = slots[2].trainable
        dafter = t.gradient(after, w)
    """)
    # Keras 3's optimizer.variables: iteration, learning_rate, then the slots (momentum, velocity)
    assert value(r, "n") == 4 and value(r, "trainable") is False
    assert value(r, "dafter") == [1.0, 1.0]


def test_none_gradient_warns_and_skips_the_variable():
    r = run_program("""
        var w = 1.0
        var b = 2.0
        opt = SGD(learning_rate=0.5)
        tape t:
            loss = w * 3.0
        gw, gb = t.gradient(loss, [w, b])
        opt.apply_gradients([[gw, w], [gb, b]])
    """)
    assert value(r, "w") == -0.5 and value(r, "b") == 2.0
    messages = [w["message"] for w in r.warnings]
    assert any("Gradients do not exist for variables ['b'] when minimizing the loss" in m for m in messages)
    with pytest.raises(TdfValueError, match="No gradients provided for any variable"):
        run_program("""
            var w = 1.0
            opt = SGD()
            opt.apply_gradients([[None, w]])
        """)


def test_a_tensor_instead_of_a_variable_is_a_type_error():
    with pytest.raises(TdfTypeError, match="updates variables"):
        run_program("""
            x = 1.0
            opt = SGD()
            opt.apply_gradients([[1.0, x]])
        """)


def test_apply_with_two_lists_and_learning_rate_attribute():
    r = run_program("""
        var w = [1.0, 2.0]
        const g = [1.0, 1.0]
        opt = SGD(learning_rate=0.25)
        opt.apply([g], [w])
        opt.apply([g], [w])
        lr = opt.learning_rate
    """)
    assert value(r, "w") == [0.5, 1.5] and value(r, "lr") == 0.25


TRAIN_STEPS = """
    import tensorflow as tf
    X = tf.random.normal((16, 8), seed=1)
    Y = tf.random.uniform((16,), maxval=3, dtype=tf.int32, seed=2)
    model = tf.keras.Sequential([tf.keras.layers.Dense(12, activation="relu"), tf.keras.layers.Dense(3)])
    s = tf.Variable(0.5)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    opt = tf.keras.optimizers.{ctor}
    for step in range(4):
        with tf.GradientTape() as tape:
            loss = loss_fn(Y, model(X, training=True) * s)
        variables = model.trainable_variables + [s]
        grads = tape.gradient(loss, variables)
        {apply}
"""
APPLY = "opt.apply_gradients(zip(grads, variables))"
# the same update while a tape records: the ordinary path (slots copied, never written in place)
APPLY_UNDER_A_TAPE = "with tf.GradientTape() as outer:\n            " + APPLY


def _train(ctor, apply):
    r = run_source(textwrap.dedent(TRAIN_STEPS.format(ctor=ctor, apply=apply)).lstrip("\n"), "train.py")
    model, opt = r.scope.get("model"), r.scope.get("opt")
    state = [v.read().value for v in model.weights + [r.scope.get("s")] + opt.slot_list]
    return r.context.updated_in_place, state


@pytest.mark.parametrize("ctor", [
    "SGD(0.1)", "SGD(0.1, momentum=0.9, nesterov=True)", "Adam(0.01)", "Adam(0.01, amsgrad=True)", "AdamW(0.01)",
    "RMSprop(0.01)", "RMSprop(0.01, momentum=0.5, centered=True)", "Adagrad(0.1)", "Adamax(0.01)", "Nadam(0.01)",
    "Adadelta(1.0)", "Lion(0.01)", "Lamb(0.01)", "Ftrl(0.1, l1_regularization_strength=0.01)",
    "Adam(0.01, weight_decay=0.1, clipnorm=1.0)",
])
@pytest.mark.parametrize("flat", [True, False], ids=["end-to-end", "in-place"])
def test_the_fast_update_gives_the_ordinary_paths_bits(ctor, flat, monkeypatch):
    # the fast path: the variables stepped together laid end to end (small ones), or each slot in place
    monkeypatch.setattr(optimizers, "FLAT_ELEMENTS", optimizers.FLAT_ELEMENTS if flat else 0)
    stepped = []
    monkeypatch.setattr(optimizers.Optimizer, "step_flat", _counted(optimizers.Optimizer.step_flat, stepped))
    fast, fast_state = _train(ctor, APPLY)
    # (Lamb's trust ratio is a norm per variable; Ftrl's pow is TensorFlow's per variable: kernels/tf_pow.py)
    assert bool(stepped) == (flat and "Lamb" not in ctor and "Ftrl" not in ctor)
    stepped.clear()
    ordinary, ordinary_state = _train(ctor, APPLY_UNDER_A_TAPE)
    assert not stepped
    assert fast == 4 * 5 and ordinary == 0      # four steps of five variables (a scalar among them)
    assert len(fast_state) == len(ordinary_state) >= 5
    for mine, theirs in zip(fast_state, ordinary_state, strict=True):
        assert mine.dtype == theirs.dtype and mine.tobytes() == theirs.tobytes()


def test_a_variable_listed_twice_is_stepped_twice(monkeypatch):
    source = """
        var w = [1.0, 2.0]
        var b = 0.5
        opt = Adam(learning_rate=0.1)
        opt.apply_gradients([[[0.5, 0.25], w], [1.0, b], [[0.5, 0.25], w]])
        after = w.value()
    """
    twice = value(run_program(source), "after")
    # the second step starts from the first's value and slots (the per-variable path, one step at a time)
    monkeypatch.setattr(optimizers, "FLAT_ELEMENTS", 0)
    assert value(run_program(source), "after") == twice
    once = value(run_program(source.replace(", [[0.5, 0.25], w]]", "]")), "after")
    assert once != twice


def _counted(f, calls):
    def counted(*args):
        calls.append(1)
        return f(*args)
    return counted


def test_a_kept_read_of_a_slot_keeps_its_value_when_stepped_end_to_end():
    r = run_program("""
        var w = [1.0, 2.0]
        var b = 3.0
        opt = Adam(learning_rate=0.1)
        opt.apply_gradients([[[0.5, 0.5], w], [1.0, b]])
        m = opt.variables[2]
        kept = convert_to_tensor(m)
        opt.apply_gradients([[[0.5, 0.5], w], [1.0, b]])
    """)
    assert value(r, "kept") == [np.float32(0.05)] * 2
    assert value(r, "m") == [np.float32(np.float32(0.05) + (np.float32(0.5) - np.float32(0.05)) * np.float32(0.1))] * 2
    assert r.context.updated_in_place == 4


def test_a_kept_read_of_a_slot_keeps_its_value(monkeypatch):
    monkeypatch.setattr(optimizers, "FLAT_ELEMENTS", 0)       # each slot written in place where it can be
    r = run_program("""
        var w = [1.0, 2.0]
        opt = Adam(learning_rate=0.1)
        opt.apply_gradients([[[0.5, 0.5], w]])
        m = opt.variables[2]
        kept = convert_to_tensor(m)
        same = identity(m)
        opt.apply_gradients([[[0.5, 0.5], w]])
        opt.apply_gradients([[[0.5, 0.5], w]])
    """)
    # Keras: m = m + (g - m) * 0.1 from zeros, then twice more
    assert value(r, "kept") == value(r, "same") == [np.float32(0.05)] * 2
    assert value(r, "m") != value(r, "kept")
    # the first and third steps write the slots in place; the second copies the momentum that `kept` holds
    assert r.context.updated_in_place == 2


def test_slots_laid_end_to_end_are_written_in_place_until_something_holds_them(monkeypatch):
    source = """
        var w = [1.0, 2.0]
        var b = 3.0
        opt = Adam(learning_rate=0.1)
        for step in range(3):
            opt.apply_gradients([[[0.5, -0.5], w], [1.0, b]])
        m = opt.variables[2]
        kept = reshape(m, [2, 1])
        read = convert_to_tensor(m)
        for step in range(2):
            opt.apply_gradients([[[0.25, 1.5], w], [-1.0, b]])
    """
    laid = []
    monkeypatch.setattr(optimizers, "_LaidOut", _counted(optimizers._LaidOut, laid))
    r = run_program(source)
    # laid out at the first step, written in place at the next two, laid out anew once a view of a slot is kept
    assert len(laid) == 2
    monkeypatch.setattr(optimizers, "FLAT_ELEMENTS", 0)         # each variable on its own: the reference
    reference = run_program(source)
    for name in ("kept", "read", "m", "w", "b"):
        assert np.asarray(value(r, name)).tobytes() == np.asarray(value(reference, name)).tobytes()
    assert value(r, "kept") != value(r, "m")


SUBCLASS = """\
import tensorflow as tf
import keras


class Halving(keras.optimizers.Optimizer):
    def update_step(self, gradient, variable, learning_rate):
        self.assign_sub(variable, learning_rate * gradient * 0.5)


w = tf.Variable([1.0, -2.0])
opt = Halving(0.5, clipnorm=1.0)
opt.apply_gradients([(tf.constant([3.0, 4.0]), w)])
print(w.numpy().tolist(), opt.name, int(opt.iterations.numpy()))
"""


def test_a_program_optimizer_steps_by_its_update_step_after_the_base_clips():
    """The gradient [3, 4] clipped to norm 1 ([0.6, 0.8]), then update_step's half step of learning rate 0.5."""
    from tapecli import run
    want = [np.float32(1.0) - np.float32(0.5) * np.float32(0.6) * np.float32(0.5),
            np.float32(-2.0) - np.float32(0.5) * np.float32(0.8) * np.float32(0.5)]
    assert run(SUBCLASS).output == [f"{[float(v) for v in want]} halving 1"]


def test_the_interpreter_refuses_a_program_optimizer_and_names_cpython(monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "0")
    with pytest.raises(TdfTypeError) as e:
        run_source(SUBCLASS, "opt.py")
    assert "cannot derive a class from Keras's optimizers.Optimizer" in e.value.message
    assert "CPython" in e.value.hint


def test_a_program_optimizer_without_update_step_is_refused_at_its_first_step():
    from tapecli import run
    source = SUBCLASS.replace("    def update_step(self, gradient, variable, learning_rate):\n"
                              "        self.assign_sub(variable, learning_rate * gradient * 0.5)\n", "    pass\n")
    with pytest.raises(TdfError) as e:
        run(source)
    assert e.value.message.startswith("the optimizer 'halving' has no update_step") and e.value.line == 11


def test_the_base_optimizer_made_directly_on_the_interpreter(monkeypatch):
    """keras.optimizers.Optimizer itself: its add_variable (under its automatic name), and a step is Keras's
    NotImplementedError, at its line."""
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "0")
    source = ("import tensorflow as tf\nimport keras\nopt = keras.optimizers.Optimizer(0.1)\n"
              "v = opt.add_variable((2, 3), initializer='ones', name='acc')\n"
              "print([x.path for x in opt.variables], v.numpy().sum())\n")
    assert run_source(source, "base.py").output == ["['optimizer/iteration', 'optimizer/learning_rate', 'optimizer/acc'] 6.0"]
    with pytest.raises(TdfError) as e:
        run_source(source + "w = tf.Variable(1.0)\nopt.apply_gradients([(tf.constant(1.0), w)])\n", "base.py")
    assert e.value.kind == "NotImplementedError" and e.value.line == 7
