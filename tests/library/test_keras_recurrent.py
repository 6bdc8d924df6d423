"""SimpleRNN, LSTM, GRU, ConvLSTM2D, Conv2D and MaxPooling2D against NumPy references of Keras 3's cell formulas
and TensorFlow's convolution/pooling windows, with weights set by set_weights."""
import textwrap

import numpy as np
import pytest

from conftest import run_program, value
from tapecli.errors import TdfValueError

rng = np.random.default_rng(5)
X = rng.normal(size=(2, 4, 3)).astype(np.float32)


def lit(a):
    return np.array2string(np.asarray(a), separator=", ", floatmode="unique", threshold=10**6).replace("\n", "")


def sig(x):
    return 1 / (1 + np.exp(-x))


def run(layer, weights, x=X, call="layer(x)"):
    consts = "".join(f"const w{i} = {lit(w)}\n" for i, w in enumerate(weights))
    setw = ", ".join(f"w{i}" for i in range(len(weights)))
    src = f"const x = {lit(x)}\n{consts}layer = {layer}\ny0 = {call}\nlayer.set_weights([{setw}])\ny = {call}\n"
    return np.array(value(run_program(textwrap.dedent(src)), "y"))


def weights(*shapes):
    return [rng.normal(scale=0.5, size=s).astype(np.float32) for s in shapes]


@pytest.mark.parametrize("seq", [False, True])
def test_simple_rnn(seq):
    k, r, b = weights((3, 2), (2, 2), (2,))
    got = run(f"SimpleRNN(2, return_sequences={seq})", [k, r, b])
    h, hs = np.zeros((2, 2)), []
    for t in range(4):
        h = np.tanh(X[:, t] @ k + b + h @ r)
        hs.append(h)
    np.testing.assert_allclose(got, np.stack(hs, 1) if seq else h, rtol=1e-5, atol=1e-6)


def test_lstm_gate_order_i_f_c_o():
    k, r, b = weights((3, 8), (2, 8), (8,))
    got = run("LSTM(2)", [k, r, b])
    h, c = np.zeros((2, 2)), np.zeros((2, 2))
    for t in range(4):
        z = X[:, t] @ k + h @ r + b
        i, f, g, o = sig(z[:, :2]), sig(z[:, 2:4]), np.tanh(z[:, 4:6]), sig(z[:, 6:])
        c = f * c + i * g
        h = o * np.tanh(c)
    np.testing.assert_allclose(got, h, rtol=1e-5, atol=1e-6)


def test_lstm_unit_forget_bias():
    r = run_program("layer = LSTM(2)\ny = layer(zeros([1, 1, 3]))\nb = layer.bias")
    assert value(r, "b") == [0, 0, 1, 1, 0, 0, 0, 0]


@pytest.mark.parametrize("reset_after", [True, False])
def test_gru(reset_after):
    k, r = weights((3, 6), (2, 6))
    b = weights((2, 6) if reset_after else (6,))[0]
    got = run(f"GRU(2, reset_after={reset_after}, return_sequences=True)", [k, r, b])
    h, hs = np.zeros((2, 2)), []
    for t in range(4):
        mx = X[:, t] @ k + (b[0] if reset_after else b)
        if reset_after:
            inner = h @ r + b[1]
            z, rr = sig(mx[:, :2] + inner[:, :2]), sig(mx[:, 2:4] + inner[:, 2:4])
            hh = np.tanh(mx[:, 4:] + rr * inner[:, 4:])
        else:
            inner = h @ r[:, :4]
            z, rr = sig(mx[:, :2] + inner[:, :2]), sig(mx[:, 2:4] + inner[:, 2:4])
            hh = np.tanh(mx[:, 4:] + (rr * h) @ r[:, 4:])
        h = z * h + (1 - z) * hh
        hs.append(h)
    np.testing.assert_allclose(got, np.stack(hs, 1), rtol=1e-5, atol=1e-6)


def conv_ref(x, k, stride, padding):
    n, hgt, wid, c = x.shape
    kh, kw, _, f = k.shape
    if padding == "same":
        oh, ow = -(-hgt // stride), -(-wid // stride)
        ph, pw = max(0, (oh - 1) * stride + kh - hgt), max(0, (ow - 1) * stride + kw - wid)
        x = np.pad(x, ((0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)))
    else:
        oh, ow = (hgt - kh) // stride + 1, (wid - kw) // stride + 1
    out = np.zeros((n, oh, ow, f))
    for i in range(oh):
        for j in range(ow):
            win = x[:, i * stride:i * stride + kh, j * stride:j * stride + kw, :]
            out[:, i, j] = np.tensordot(win, k, axes=([1, 2, 3], [0, 1, 2]))
    return out


@pytest.mark.parametrize("stride, padding", [(1, "valid"), (2, "same"), (2, "valid"), (1, "same")])
def test_conv2d(stride, padding):
    x = rng.normal(size=(2, 5, 4, 3)).astype(np.float32)
    k, b = weights((3, 2, 3, 4), (4,))
    got = run(f'Conv2D(4, [3, 2], strides={stride}, padding="{padding}")', [k, b], x=x)
    np.testing.assert_allclose(got, conv_ref(x, k, stride, padding) + b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("stride, padding, backwards", [(1, "same", False), (2, "valid", True)])
def test_conv_lstm2d(stride, padding, backwards):
    # each gate a convolution of x (the layer's strides and padding) plus its bias, and of h (stride 1, "same")
    x = rng.normal(size=(2, 3, 5, 4, 2)).astype(np.float32)
    k, r, b = weights((3, 2, 2, 12), (3, 2, 3, 12), (12,))
    got = run(f'ConvLSTM2D(3, [3, 2], strides={stride}, padding="{padding}", go_backwards={backwards}, '
              f'return_sequences=True)', [k, r, b], x=x)
    h = c = np.zeros(conv_ref(x[:, 0], k, stride, padding).shape[:-1] + (3,))
    hs = []
    for t in (2, 1, 0) if backwards else (0, 1, 2):
        z = conv_ref(x[:, t], k, stride, padding) + b + conv_ref(h, r, 1, "same")
        i, f, g, o = np.split(z, 4, axis=-1)
        c = sig(f) * c + sig(i) * np.tanh(g)
        h = sig(o) * np.tanh(c)
        hs.append(h)
    np.testing.assert_allclose(got, np.stack(hs, 1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("arguments, message", [('data_format="channels_first"', "channels_last"),
                                                ("recurrent_dropout=0.1", "no dropout"),
                                                ("strides=2, dilation_rate=2", "not compatible")])
def test_conv_lstm_refuses_what_it_does_not_compute(arguments, message):
    with pytest.raises(TdfValueError, match=message):
        run_program(f"y = ConvLSTM2D(2, 3, {arguments})(ones([1, 2, 5, 5, 1]))")


def test_max_pooling_and_conv_gradient():
    x = np.arange(32, dtype=np.float32).reshape(1, 4, 4, 2) % 7
    r = run_program(f"""
const x = {lit(x)}
p = MaxPooling2D()(x)
q = MaxPooling2D(pool_size=3, strides=2, padding="same")(x)
conv = Conv2D(1, 2, use_bias=False, kernel_initializer="ones")
tape t:
    watch x
    y = sum(conv(x))
g = t.gradient(y, x)
""")
    want = x.reshape(1, 2, 2, 2, 2, 2).max(axis=(2, 4))
    np.testing.assert_array_equal(value(r, "p"), want)
    xp = np.pad(x, ((0, 0), (0, 1), (0, 1), (0, 0)), constant_values=-np.inf)
    q = np.array([[[xp[0, 2 * i:2 * i + 3, 2 * j:2 * j + 3].max(axis=(0, 1)) for j in range(2)] for i in range(2)]])
    np.testing.assert_array_equal(value(r, "q"), q)
    counts = np.zeros((4, 4))                  # how many 2x2 windows cover each pixel
    for i in range(3):
        for j in range(3):
            counts[i:i + 2, j:j + 2] += 1
    np.testing.assert_array_equal(value(r, "g"), np.repeat(counts[None, :, :, None], 2, axis=3))


def test_max_pooling_passes_the_gradient_to_the_first_maximum():
    # Keras's MaxPooling2D is tf.nn.max_pool2d: TensorFlow 2.21 gives these values and this gradient
    r = run_program("""
n = float("nan")
x = reshape(constant([[1, 3, 3, 0], [3, 2, 1, 1], [5, 5, 5, 5], [5, 5, n, 5]]), [1, 4, 4, 1])
tape t:
    watch x
    y = MaxPooling2D(2)(x)
g = t.gradient(y, x)
""")
    np.testing.assert_array_equal(np.reshape(value(r, "y"), -1), [3, 3, 5, 5])
    np.testing.assert_array_equal(np.reshape(value(r, "g"), (4, 4)),
                                  [[0, 1, 1, 0], [0, 0, 0, 0], [1, 0, 1, 0], [0, 0, 0, 0]])


def test_recurrent_shape_error():
    with pytest.raises(TdfValueError, match="expected ndim=3, found ndim=2"):        # (Keras's InputSpec)
        run_program("y = LSTM(2)(ones([2, 3]))")
