"""keras.ops' Fourier transforms, which take and give complex tensors as (real, imaginary) pairs of real ones
(keras/src/backend/tensorflow/math.py): fft, fft2, ifft2, rfft and irfft as products with the DFT's cosine
and sine matrices, so that gradients flow (TensorFlow's FFT sums in another order: the last bits may differ)."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import TdfTypeError, TdfValueError
from tapecli.library.keras.common import integer
from tapecli.library.keras.ops_arrays import swapaxes
from tapecli.library.keras.ops_numpy import _tensor
from tapecli.runtime.values import Tensor


def _pair(x) -> tuple[Tensor, Tensor]:
    if not isinstance(x, (tuple, list)) or len(x) != 2:
        raise TdfValueError(f"Input `x` should be a tuple of two tensors - real and imaginary.Received: x={x}")
    real, imag = _tensor(x[0]), _tensor(x[1])
    if real.shape != imag.shape:
        raise TdfValueError("Input `x` should be a tuple of two tensors - real and imaginary.Both the real and "
                            "imaginary parts should have the same shape. Received: x[0].shape = "
                            f"{real.shape}, x[1].shape = {imag.shape}")
    if real.dtype.kind != "f" or imag.dtype.kind != "f":
        raise TdfValueError(f"At least one tensor in input `x` is not of type float.Received: x={x}.")
    return real, imag


def _basis(n: int, m: int, dtype) -> tuple[Tensor, Tensor]:
    """cos and sin of 2 pi j k / n for j < n, k < m: of j k mod n, exact (0, 1 or -1) at the quarter turns, where
    an FFT's twiddle factors are, so that a transform's zero terms are zeros (rfft([1, 2, 3, 4])'s imaginary
    part is [0, 2, 0], not [-0, 2, -1e-16])."""
    turns = np.outer(np.arange(n), np.arange(m)) % n
    angle = 2 * np.pi * turns / n
    cos, sin = np.cos(angle), np.sin(angle)
    quarter = (4 * turns) % n == 0
    cos[quarter] = np.round(cos[quarter])
    sin[quarter] = np.round(sin[quarter])
    return Tensor((cos + 0.0).astype(dtype)), Tensor((sin + 0.0).astype(dtype))


def _last(t: Tensor, matrix: Tensor) -> Tensor:
    return ops.tensordot(t, matrix, [[t.ndim - 1], [0]])


def _fft_last(real: Tensor, imag: Tensor) -> tuple[Tensor, Tensor]:
    """(re + i im) times exp(-2 pi i j k / n) = (re cos + im sin) + i (im cos - re sin)."""
    cos, sin = _basis(real.shape[-1], real.shape[-1], real.dtype)
    return ops.add(_last(real, cos), _last(imag, sin)), ops.sub(_last(imag, cos), _last(real, sin))


def fft(x):
    return _fft_last(*_pair(x))


def fft2(x):
    real, imag = _fft_last(*_pair(x))
    real, imag = _fft_last(swapaxes(real, -1, -2), swapaxes(imag, -1, -2))
    return swapaxes(real, -1, -2), swapaxes(imag, -1, -2)


def ifft2(x):
    """Keras's: the conjugate's fft2, conjugated and divided by the plane's size."""
    real, imag = _pair(x)
    size = Tensor(np.asarray(real.shape[-2] * real.shape[-1], real.dtype))
    out_real, out_imag = fft2((real, ops.neg(imag)))
    return ops.div(out_real, size), ops.div(ops.neg(out_imag), size)


def _fitted(t: Tensor, n: int) -> Tensor:
    """The last axis cut or zero-padded to n."""
    if t.shape[-1] >= n:
        return ops.getitem(t, (Ellipsis, slice(0, n)))
    return ops.pad(t, [[0, 0]] * (t.ndim - 1) + [[0, n - t.shape[-1]]])


def rfft(x, fft_length=None):
    t = _tensor(x)
    n = t.shape[-1] if fft_length is None else integer(fft_length, "fft_length")
    t = _fitted(t, n)
    cos, sin = _basis(n, n // 2 + 1, t.dtype)
    return _last(t, cos), _last(t, Tensor(np.negative(sin.value) + 0.0))     # (+ 0.0: no negative zeros)


def irfft(x, fft_length=None):
    """The real signal of n points whose rfft is x: the Hermitian half's terms counted twice, except the
    zero-frequency one and (n even) the Nyquist one."""
    real, imag = _pair(x)
    n = 2 * (real.shape[-1] - 1) if fft_length is None else integer(fft_length, "fft_length")
    half = n // 2 + 1
    real, imag = _fitted(real, half), _fitted(imag, half)
    weights = np.full(half, 2.0)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    angle = 2 * np.pi * np.outer(np.arange(half), np.arange(n)) / n
    cos = Tensor((weights[:, None] * np.cos(angle) / n).astype(real.dtype))
    sin = Tensor((weights[:, None] * np.sin(angle) / n).astype(real.dtype))
    return ops.sub(_last(real, cos), _last(imag, sin))


def stft(x, sequence_length, sequence_stride, fft_length, window="hann", center=True):
    """tf.signal.stft as Keras calls it: x reflect-padded by fft_length // 2 (``center``), frames of fft_length
    every sequence_stride, each times the window (periodic hann or hamming, or the one given; centred in
    fft_length), and their rfft."""
    from tapecli.library.keras.common import flag
    from tapecli.library.keras.ops_arrays import extract_sequences
    t = _tensor(x)
    if t.dtype.name not in ("float32", "float64"):
        raise TdfTypeError(f"Invalid input type. Expected `float32` or `float64`. Received: input type={t.dtype}")
    length, n = integer(sequence_length, "sequence_length"), integer(fft_length, "fft_length")
    if n < length:
        raise TdfValueError("`fft_length` must equal or larger than `sequence_length`. Received: "
                            f"sequence_length={length}, fft_length={n}")
    if isinstance(window, str) and window not in ("hann", "hamming"):
        raise TdfValueError('If a string is passed to `window`, it must be one of `"hann"`, `"hamming"`. '
                            f"Received: window={window}")
    if flag(center):
        t = ops.pad(t, [[0, 0]] * (t.ndim - 1) + [[n // 2, n // 2]], mode="REFLECT")
    frames = extract_sequences(t, n, sequence_stride)
    if window is not None:
        if isinstance(window, str):
            # TensorFlow's periodic raised-cosine window is periodic for an even length only
            a, period = (0.5 if window == "hann" else 0.54), max(length - length % 2, 1)
            curve = a - (1 - a) * np.cos(2 * np.pi * np.arange(length) / period) if length > 1 else np.ones(1)
            weights = Tensor(curve.astype(t.dtype))
        else:
            weights = ops.cast(_tensor(window), t.dtype)
        if weights.ndim != 1 or weights.shape[-1] != length:
            raise TdfValueError(f"The shape of `window` must be equal to [sequence_length].Received: window shape="
                                f"{weights.shape}")
        left = (n - length) // 2
        frames = ops.mul(frames, ops.pad(weights, [[left, n - length - left]]))
    return rfft(frames, n)


FUNCTIONS = {f"ops.{f.__name__}": f for f in (fft, fft2, ifft2, rfft, irfft, stft)}
