"""Keras-lite losses against NumPy references of Keras 3's TensorFlow-backend formulas
(keras/src/losses/losses.py, keras/src/backend/tensorflow/nn.py), float32."""
import numpy as np
import pytest

from conftest import run_program, value
from tapecli.errors import ShapeError, TdfTypeError, TdfValueError

f = np.float32
EPS = f(1e-7)
LOGITS = np.array([[2.0, -1.0, 0.5], [0.1, 0.2, 3.0], [-1.0, 1.5, 0.0], [0.3, 0.3, -2.0]], f)
LABELS = np.array([0, 2, 1, 1])
WEIGHTS = np.array([1.0, 0.5, 2.0, 0.0], f)


def lit(a):
    return np.array2string(np.asarray(a), separator=", ", floatmode="unique").replace("\n", "")


def log_softmax(x):
    m = x - x.max(-1, keepdims=True)
    return m - np.log(np.exp(m).sum(-1, keepdims=True))


def reduce(values, sw=None, reduction="sum_over_batch_size"):
    if sw is not None:
        values = values * sw
    if reduction == "none":
        return values
    total = values.sum(dtype=f)
    return total / f(values.size) if reduction == "sum_over_batch_size" else total


def run1(expr, setup=""):
    r = run_program(f"""
        const logits = {lit(LOGITS)}
        const labels = {lit(LABELS)}
        const sw = {lit(WEIGHTS)}
        {setup}
        out = {expr}
    """)
    return np.array(value(r, "out"), dtype=np.float64)


def scce_ref(logits=LOGITS, labels=LABELS):
    return -log_softmax(logits.astype(np.float64))[np.arange(len(labels)), labels]


@pytest.mark.parametrize("reduction", ["sum_over_batch_size", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_sparse_categorical_crossentropy_from_logits(reduction, weighted):
    call = "sw" if weighted else "None"
    got = run1(f'SparseCategoricalCrossentropy(from_logits=True, reduction="{reduction}")(labels, logits, '
               f'sample_weight={call})')
    want = reduce(scce_ref(), WEIGHTS if weighted else None, reduction)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_sparse_categorical_crossentropy_from_probabilities_clips_and_does_not_renormalize():
    probs = np.array([[0.7, 0.2, 0.0], [0.1, 0.1, 0.9]], f)      # rows that do not sum to 1
    got = run1(f"sparse_categorical_crossentropy([1, 2], {lit(probs)})")
    lp = np.log(np.clip(probs, EPS, f(1) - EPS)).astype(np.float64)
    want = -log_softmax(lp)[[0, 1], [1, 2]]
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_sparse_categorical_crossentropy_gradient_is_softmax_minus_onehot_over_n():
    r = run_program(f"""
        var z = {lit(LOGITS)}
        tape t:
            loss = SparseCategoricalCrossentropy(from_logits=True)({lit(LABELS)}, z)
        g = t.gradient(loss, z)
    """)
    p = np.exp(log_softmax(LOGITS.astype(np.float64)))
    p[np.arange(4), LABELS] -= 1
    np.testing.assert_allclose(value(r, "g"), p / 4, rtol=1e-5, atol=1e-7)


def test_sparse_categorical_crossentropy_from_logits_is_one_op_with_tensorflows_gradient():
    """tf.nn.sparse_softmax_cross_entropy_with_logits as Keras calls it: one record on the tape, and the
    gradient TensorFlow's kernel computes, expand_dims(g, -1) * (exp(s) / sum(exp(s)) - one_hot), bit for bit."""
    r = run_program(f"""
        var z = {lit(LOGITS)}
        tape t:
            loss = SparseCategoricalCrossentropy(from_logits=True)({lit(LABELS)}, z)
        g = t.gradient(loss, z)
    """)
    ops_recorded = [rec.op.name for rec in r.tapes[0].records]
    assert ops_recorded.count("sparse_softmax_xent") == 1 and "log_softmax" not in ops_recorded
    # what TensorFlow 2.21 gave (keras.losses.SparseCategoricalCrossentropy(from_logits=True) on a variable: its
    # kernel's backprop, exp(s) / sum(exp(s)) - one_hot, times the mean's 1/4; NumPy's exp differs in two places)
    want = np.array([[-0.0536007434129715, 0.009778143838047981, 0.043822597712278366],
                     [0.012327831238508224, 0.013624361716210842, -0.025952190160751343],
                     [0.015722503885626793, -0.058460697531700134, 0.04273819923400879],
                     [0.11903294920921326, -0.13096705079078674, 0.01193410623818636]], f)
    assert np.array(value(r, "g"), f).tobytes() == want.tobytes()
    assert value(r, "loss") == f(0.33983534574508667)


def test_ignore_class_divides_by_the_valid_count():
    got = run1("SparseCategoricalCrossentropy(from_logits=True, ignore_class=1)(labels, logits)")
    per = scce_ref()
    np.testing.assert_allclose(got, (per[0] + per[1]) / 2, rtol=1e-6)


@pytest.mark.parametrize("smoothing", [0.0, 0.2])
@pytest.mark.parametrize("from_logits", [True, False])
def test_categorical_crossentropy(smoothing, from_logits):
    onehot = np.eye(3, dtype=f)[LABELS]
    probs = np.array([[0.6, 0.3, 0.1], [0.2, 0.2, 0.6], [0.0, 1.0, 0.0], [0.5, 0.25, 0.5]], f)
    pred = LOGITS if from_logits else probs
    got = run1(f"CategoricalCrossentropy(from_logits={from_logits}, label_smoothing={smoothing})"
               f"({lit(onehot)}, {lit(pred)})")
    y = onehot * f(1 - smoothing) + f(smoothing / 3)
    if from_logits:
        per = -(y * log_softmax(pred)).sum(-1)
    else:
        p = np.clip(pred / pred.sum(-1, keepdims=True), EPS, f(1) - EPS)
        per = -(y * np.log(p)).sum(-1)
    np.testing.assert_allclose(got, per.mean(), rtol=1e-6)


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
@pytest.mark.parametrize("from_logits", [True, False])
def test_binary_crossentropy(smoothing, from_logits):
    y = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], f)
    x = np.array([[2.0, -30.0], [0.5, 0.0], [-1.5, 40.0]], f) if from_logits else \
        np.array([[0.9, 0.0], [0.3, 0.5], [1.0, 0.2]], f)
    got = run1(f"binary_crossentropy({lit(y)}, {lit(x)}, from_logits={from_logits}, label_smoothing={smoothing})")
    z = (y * f(1 - smoothing) + f(0.5 * smoothing)).astype(np.float64)
    xd = x.astype(np.float64)
    if from_logits:
        per = np.maximum(xd, 0) - xd * z + np.log1p(np.exp(-np.abs(xd)))
    else:
        p = np.clip(x, EPS, f(1) - EPS).astype(np.float64)
        per = -(z * np.log(p) + (1 - z) * np.log(1 - p))
    np.testing.assert_allclose(got, per.mean(-1), rtol=1e-6)


def test_mse_mae_huber_and_aliases():
    yt = np.array([[0.0, 1.0], [2.0, -1.0]], f)
    yp = np.array([[0.5, 3.0], [2.0, 1.0]], f)
    d = (yp - yt).astype(np.float64)
    np.testing.assert_allclose(run1(f"mse({lit(yt)}, {lit(yp)})"), (d ** 2).mean(-1))
    np.testing.assert_allclose(run1(f"mae({lit(yt)}, {lit(yp)})"), np.abs(d).mean(-1))
    np.testing.assert_allclose(run1(f"MeanSquaredError()({lit(yt)}, {lit(yp)})"), (d ** 2).mean())
    np.testing.assert_allclose(run1(f'MeanAbsoluteError(reduction="sum")({lit(yt)}, {lit(yp)})'),
                               np.abs(d).mean(-1).sum())
    a = np.abs(d)
    hub = np.where(a <= 1.5, 0.5 * d ** 2, 1.5 * a - 0.5 * 1.5 ** 2).mean(-1)
    np.testing.assert_allclose(run1(f"Huber(delta=1.5)({lit(yt)}, {lit(yp)})"), hub.mean())
    np.testing.assert_allclose(run1(f"huber({lit(yt)}, {lit(yp)}, delta=1.5)"), hub)


def test_rank_one_labels_are_expanded_against_a_trailing_one():
    # Keras's squeeze_or_expand_to_same_rank: y_true (N,) against y_pred (N, 1) compares row by row
    got = run1("mse([1.0, 2.0, 3.0], [[1.0], [1.0], [1.0]])")
    np.testing.assert_allclose(got, [0.0, 1.0, 4.0])


def test_mismatched_shapes_name_both():
    with pytest.raises(ShapeError) as e:
        run1("mse([[1.0, 2.0, 3.0]], [[1.0, 2.0]])")
    assert "[1, 3]" in e.value.message and "[1, 2]" in e.value.message
    with pytest.raises(ShapeError) as e:
        run1("sparse_categorical_crossentropy([0, 1, 2], logits, from_logits=True)")
    assert "[3]" in e.value.message and "[4, 3]" in e.value.message


def test_bad_labels_and_options():
    with pytest.raises(TdfValueError, match="label value of 3"):
        run1("sparse_categorical_crossentropy([0, 1, 2, 3], logits, from_logits=True)")
    with pytest.raises(TdfValueError, match="reduction"):
        run1('MeanSquaredError(reduction="avg")')
    with pytest.raises(TdfTypeError, match="unexpected keyword"):
        run1("MeanSquaredError(from_logits=True)")


# What TensorFlow 2.21 + Keras 3.15 printed: a loss function keeps its inputs' dtype (Keras's convert_to_tensor), a
# loss object converts both to its dtype (float32, or its dtype=) before it computes.
DTYPES_PROGRAM = """\
import numpy as np
import tensorflow as tf
import keras
a, b = np.array([1.0, 2.0]), np.array([1.5, 1.0])
c, d = tf.constant([1.0, 2.0], tf.float64), tf.constant([1.5, 1.0], tf.float64)
print(keras.losses.mean_absolute_error(a, b), keras.losses.huber(a, b).dtype, keras.losses.log_cosh(a, b).dtype)
print(keras.losses.MeanSquaredError()(c, d), keras.losses.mean_squared_error(c, d))
print(keras.losses.MeanAbsoluteError(dtype="float64")(a, b), keras.losses.MeanSquaredError()(a, b).dtype)
print(keras.losses.binary_crossentropy(np.array([[1.0, 0.0]]), np.array([[0.7, 0.2]])))
"""
DTYPES_PRINTED = [
    "tf.Tensor(0.75, shape=(), dtype=float64) <dtype: 'float64'> <dtype: 'float64'>",
    "tf.Tensor(0.625, shape=(), dtype=float32) tf.Tensor(0.625, shape=(), dtype=float64)",
    "tf.Tensor(0.75, shape=(), dtype=float64) <dtype: 'float32'>",
    "tf.Tensor([0.28990925], shape=(1,), dtype=float64)",
]


@pytest.mark.parametrize("on_cpython", ["0", "1"])
def test_loss_functions_keep_their_inputs_dtype_and_loss_objects_convert_to_theirs(on_cpython, monkeypatch):
    import tapecli
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on_cpython)
    assert tapecli.run(DTYPES_PROGRAM).output == DTYPES_PRINTED


# What TensorFlow 2.21 + Keras 3.15 printed: Keras's softmax keeps its logits on its output (_keras_logits), and
# its cross-entropies of that output compute from them (no clipping at 1e-7; the backend's _get_logits), warning
# where from_logits=True is given too; tf.nn.softmax's output, and a copy (tf.identity), are clipped
LOGITS_PROGRAM = """\
import numpy as np
import tensorflow as tf
import keras
z = tf.constant([[30.0, 0.0, -5.0]])
s = keras.activations.softmax(z)
print(keras.losses.sparse_categorical_crossentropy(np.array([1]), s).numpy())
print(keras.losses.sparse_categorical_crossentropy(np.array([1]), tf.identity(s)).numpy())
print(keras.losses.sparse_categorical_crossentropy(np.array([1]), tf.nn.softmax(z)).numpy())
print(keras.losses.categorical_crossentropy(np.array([[0.0, 1.0, 0.0]]), s, from_logits=True).numpy())
"""
LOGITS_PRINTED = ["[30.]", "[16.118095]", "[16.118095]", "[30.]"]


@pytest.mark.parametrize("on_cpython", ["0", "1"])
def test_a_cross_entropy_of_keras_s_softmax_computes_from_its_logits(on_cpython, monkeypatch):
    import tapecli
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on_cpython)
    result = tapecli.run(LOGITS_PROGRAM)
    assert result.output == LOGITS_PRINTED
    assert [w["message"] for w in result.warnings] == [
        '"`categorical_crossentropy` received `from_logits=True`, but the `output` argument was produced by a Softmax '
        'activation and thus does not represent logits. Was this intended?']
