"""tf.signal's framing, windows, shifts and mel filters: frame, overlap_and_add, the hann and hamming windows,
fftshift and ifftshift, linear_to_mel_weight_matrix, written as TensorFlow's own Python writes them
(signal/shape_ops.py, reconstruction_ops.py, window_ops.py, fft_ops.py's rolls, mel_ops.py): the same ops in the
same order, in the window's dtype, so the values are TensorFlow's bits, and frame's and overlap_and_add's gradients
those of their gathers, pads and sums. Left out: the Kaiser windows (TensorFlow's bessel_i0e packets take the CPU's
approximate reciprocal square root, whose bits differ between processors) and the vorbis window (its pow's packets
are Eigen's generic_pow, not here)."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import ShapeError, TdfTypeError, TdfValueError
from tapecli.interpreter.conversions import to_int, truth
from tapecli.interpreter.registry import builtin
from tapecli.kernels.tf_float32 import PACKET_LIMIT
from tapecli.library.core import to_dtype
from tapecli.runtime.limits import admit_result
from tapecli.runtime.values import Tensor, dtype_name


def _signal(value, rank: int) -> Tensor:
    t = ops.to_tensor(value)
    t = ops.materialize(t) if t.weak else t
    if t.ndim < rank:
        raise TdfValueError(f"Shape {tuple(t.shape)} must have rank at least {rank}")
    return t


@builtin("signal.frame")
def frame(signal, frame_length, frame_step, pad_end=False, pad_value=0, axis=-1, name=None):
    """``signal``'s ``axis`` as frames of ``frame_length`` every ``frame_step`` samples (past the end padded
    with ``pad_value`` while a frame starts inside it, with ``pad_end``): a gather of each frame's samples."""
    x = _signal(signal, 1)
    length, step = to_int(frame_length, "frame_length"), to_int(frame_step, "frame_step")
    if length < 0:
        raise ShapeError(f"Requires start <= limit when delta > 0: 0/{length} [Op:Range]")
    at = to_int(axis, "axis")
    if not -x.ndim <= at < x.ndim:
        raise TdfValueError("list index out of range")          # (TensorFlow's IndexError)
    at %= x.ndim
    if step == 0:
        raise ShapeError("Integer division by zero [Op:FloorDiv]")
    samples = x.shape[at]
    if truth(pad_end):
        fill = ops.to_tensor(pad_value)
        if not fill.weak and fill.dtype != x.dtype:
            raise TdfValueError(f"Tensor conversion requested dtype {dtype_name(x.dtype)} for Tensor with dtype "
                                f"{dtype_name(fill.dtype)}")
        if fill.dtype.kind == "f" and x.dtype.kind in "iu":
            raise TdfTypeError(f"Cannot convert {fill.value.item()} to EagerTensor of dtype {dtype_name(x.dtype)}")
        count = -(-samples // step)
        after = max(0, length + step * (count - 1) - samples)
        x = ops.pad(x, [[0, after] if a == at else [0, 0] for a in range(x.ndim)],
                    constant_values=ops.materialize(fill, x.dtype).value.item())
    else:
        count = max(0, 1 + (samples - length) // step)
    admit_result((count, length), np.int64, "tf.signal.frame's index")
    starts = np.arange(count, dtype=np.int64)[:, None] * step
    return ops.gather(x, starts + np.arange(length), axis=at)


@builtin("signal.overlap_and_add")
def overlap_and_add(signal, frame_step, name=None):
    """The frames of the last two axes added back into one signal, each ``frame_step`` after the one before:
    TensorFlow's pad, reshape, transpose and sum over the frames' segments."""
    x = _signal(signal, 2)
    step_value = ops.to_tensor(frame_step)
    step_value = ops.materialize(step_value) if step_value.weak else step_value
    if step_value.dtype.kind not in "iu":
        raise TdfValueError(f"frame_step must be an integer. Got <dtype: '{dtype_name(step_value.dtype)}'>")
    step = to_int(step_value, "frame_step")
    outer, (frames, length) = list(x.shape[:-2]), x.shape[-2:]
    output_length = length + step * (frames - 1)
    if step == length:
        return ops.reshape(x, outer + [output_length])
    segments = -(-length // step) if step else 0        # (NumPy's 0 for a division by zero, as in TensorFlow)
    paddings = [[0, segments], [0, segments * step - length]]
    negative = next((after for _, after in paddings if after < 0), None)
    if negative is not None:
        raise ShapeError(f"Paddings must be non-negative: 0 {negative} [Op:Pad]")
    x = ops.pad(x, [[0, 0]] * len(outer) + paddings)
    x = ops.reshape(x, outer + [frames + segments, segments, step])
    rank = len(outer)
    x = ops.transpose(x, [*range(rank), rank + 1, rank, rank + 2])
    x = ops.reshape(x, outer + [(frames + segments) * segments, step])
    x = ops.getitem(x, (Ellipsis, slice(None, (frames + segments - 1) * segments), slice(None)))
    x = ops.reshape(x, outer + [segments, frames + segments - 1, step])
    x = ops.reduce_sum(x, -3)
    x = ops.reshape(x, outer + [(frames + segments - 1) * step])
    return ops.getitem(x, (Ellipsis, slice(None, output_length)))


def _window_length(window_length, dtype) -> tuple[int, np.dtype]:
    """The length and dtype of a window, checked as TensorFlow's _check_params checks them."""
    float_type = to_dtype(dtype)
    if float_type.kind != "f":
        raise TdfValueError(f"dtype must be a floating point type. Found <dtype: '{dtype_name(float_type)}'>")
    length = to_int(window_length, "window_length")
    if length < 0:
        raise ShapeError(f"Requires start <= limit when delta > 0: 0/{length} [Op:Range]")
    admit_result((length,), np.float64, "the window")
    return length, float_type


def _constant(value, dtype) -> Tensor:
    return Tensor(np.asarray(value, dtype=dtype))


def _raised_cosine(window_length, periodic, dtype, a: float, b: float) -> Tensor:
    """a - b cos(2 pi n / N), N the length (less one for a symmetric window, or for an odd periodic one)."""
    length, dtype = _window_length(window_length, dtype)
    if length == 1:
        return _constant([1.0], dtype)
    even = 1 - length % 2
    n = _constant(length + int(truth(periodic)) * even - 1, dtype)
    count = _constant(np.arange(length), dtype)
    cos_arg = ops.div(ops.mul(_constant(2 * np.pi, dtype), count), n)
    return ops.sub(_constant(a, dtype), ops.mul(_constant(b, dtype), _cos(cos_arg)))


def _cos(x: Tensor) -> Tensor:
    """cos of a window as TensorFlow's kernel computes it, in Eigen's packets over the whole tensor: tapecli's
    kernel takes them up to PACKET_LIMIT elements (a multiple of the packet), so a longer window goes in blocks."""
    if x.size <= PACKET_LIMIT:
        return ops.cos(x)
    return ops.concat([ops.cos(ops.getitem(x, slice(i, i + PACKET_LIMIT))) for i in range(0, x.size, PACKET_LIMIT)], 0)


@builtin("signal.hann_window")
def hann_window(window_length, periodic=True, dtype="float32", name=None):
    return _raised_cosine(window_length, periodic, dtype, 0.5, 0.5)


@builtin("signal.hamming_window")
def hamming_window(window_length, periodic=True, dtype="float32", name=None):
    return _raised_cosine(window_length, periodic, dtype, 0.54, 0.46)


def _shifted(x, axes, sign: int) -> Tensor:
    """fft_ops.py's fftshift (sign 1) and ifftshift (sign -1): a roll of each axis by half its length."""
    t = ops.to_tensor(x)
    t = ops.materialize(t) if t.weak else t
    if axes is None:
        chosen = list(range(t.ndim))
    else:
        chosen = [to_int(a, "axes") for a in (axes if isinstance(axes, (list, tuple)) else [axes])]
        bad = [a for a in chosen if not -t.ndim <= a < t.ndim]
        if bad:
            raise TdfValueError(f"axes {bad} out of range for a tensor of rank {t.ndim}")
        chosen = [a % t.ndim if t.ndim else a for a in chosen]
    return ops.roll(t, [sign * (t.shape[a] // 2) for a in chosen], chosen)


@builtin("signal.fftshift")
def fftshift(x, axes=None, name=None):
    """tf.signal.fftshift: the zero-frequency term moved to the middle (a roll by half of each axis)."""
    return _shifted(x, axes, 1)


@builtin("signal.ifftshift")
def ifftshift(x, axes=None, name=None):
    """tf.signal.ifftshift: fftshift undone (a roll back by half of each axis)."""
    return _shifted(x, axes, -1)


def _hertz_to_mel(hertz: Tensor) -> Tensor:
    """mel_ops.py's HTK mel scale: 1127 * log(1 + f / 700), in the tensor's dtype."""
    d = hertz.dtype
    return ops.mul(_constant(1127.0, d), ops.log(ops.add(_constant(1.0, d), ops.div(hertz, _constant(700.0, d)))))


@builtin("signal.linear_to_mel_weight_matrix")
def linear_to_mel_weight_matrix(num_mel_bins=20, num_spectrogram_bins=129, sample_rate=8000, lower_edge_hertz=125.0,
                                upper_edge_hertz=3800.0, dtype="float32", name=None):
    """The [num_spectrogram_bins, num_mel_bins] matrix of triangular mel filters, as mel_ops.py computes it: the
    bins' and the band edges' mels (linspace, then the HTK scale), each filter's rising and falling slopes, their
    minimum clipped at zero, and the DC bin's row zero."""
    bins, spectrogram_bins = to_int(num_mel_bins, "num_mel_bins"), to_int(num_spectrogram_bins, "num_spectrogram_bins")
    rate = float(np.asarray(ops.to_tensor(sample_rate).value))
    lower, upper = (float(np.asarray(ops.to_tensor(v).value)) for v in (lower_edge_hertz, upper_edge_hertz))
    d = to_dtype(dtype)
    if bins <= 0:
        raise TdfValueError(f"num_mel_bins must be positive. Got: {bins}")
    if lower < 0.0:
        raise TdfValueError(f"lower_edge_hertz must be non-negative. Got: {lower}")
    if lower >= upper:
        raise TdfValueError(f"lower_edge_hertz {lower:.1f} >= upper_edge_hertz {upper:.1f}")
    if rate <= 0.0:
        raise TdfValueError(f"sample_rate must be positive. Got: {rate}")
    if upper > rate / 2:
        raise TdfValueError(f"upper_edge_hertz must not be larger than the Nyquist frequency (sample_rate / 2). Got "
                            f"{upper} for sample_rate: {rate}")
    if d.kind != "f":
        raise TdfValueError(f"dtype must be a floating point type. Got: {dtype_name(d)}")
    from tapecli.library.core import linspace
    zero, nyquist = _constant(0.0, d), ops.div(_constant(rate, d), _constant(2.0, d))
    frequencies = ops.getitem(linspace(zero, nyquist, spectrogram_bins), slice(1, None))
    bins_mel = ops.reshape(_hertz_to_mel(frequencies), [-1, 1])
    edges = linspace(_hertz_to_mel(_constant(lower, d)), _hertz_to_mel(_constant(upper, d)), bins + 2)
    low, center, high = (ops.reshape(ops.getitem(edges, slice(k, k + bins)), [1, bins]) for k in range(3))
    lower_slopes = ops.div(ops.sub(bins_mel, low), ops.sub(center, low))
    upper_slopes = ops.div(ops.sub(high, bins_mel), ops.sub(high, center))
    weights = ops.maximum(zero, ops.minimum(lower_slopes, upper_slopes))
    return ops.pad(weights, [[1, 0], [0, 0]])
