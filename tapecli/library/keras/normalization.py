"""Keras 3's normalization layers of keras/src/layers/normalization that keep statistics or weights of their own:
LayerNormalization, BatchNormalization (its moving statistics) and the SpectralNormalization wrapper (in training,
the wrapped layer's kernel divided by its largest singular value, estimated by power iteration from a kept vector
``vector_u``, both assigned before the wrapped layer runs). UnitNormalization, GroupNormalization and
RMSNormalization are in shaping.py."""
from __future__ import annotations

import numpy as np

from tapecli import kernels, ops
from tapecli.errors import ShapeError, TdfValueError
from tapecli.library.keras import initializers, penalties
from tapecli.library.keras.common import flag, integer, name_scope, num, scalar, tensor
from tapecli.library.keras.configs import layer_config, serialize_held
from tapecli.library.keras.layers import Layer
from tapecli.library.keras.rnn_wrappers import _wrapped
from tapecli.runtime.context import current
from tapecli.runtime.values import Tensor


def _moments(x, axes):
    """tf.nn.moments: the mean, and the biased variance around stop_gradient(mean)."""
    mean = ops.reduce_mean(x, axis=axes, keepdims=True)
    var = ops.reduce_mean(ops.square(ops.sub(x, ops.stop_gradient(mean))), axis=axes, keepdims=True)
    return mean, var


def _masked_moments(x, axes, mask):
    """Keras's BatchNormalization._moments of a masked input: the mean and variance of the kept steps (their count
    plus Keras's epsilon 1e-7)."""
    kept = ops.broadcast_to(ops.reshape(ops.cast(mask, np.bool_), (*mask.shape, 1)), x.shape)
    zero = scalar(0.0, x.dtype)
    count = ops.add(ops.reduce_sum(ops.cast(kept, x.dtype), axis=axes, keepdims=True), scalar(1e-7, x.dtype))
    mean = ops.div(ops.reduce_sum(ops.where(kept, x, zero), axis=axes, keepdims=True), count)
    distances = ops.square(ops.where(kept, ops.sub(x, mean), zero))
    return mean, ops.div(ops.reduce_sum(distances, axis=axes, keepdims=True), count)


def _synchronized_moments(x, axes):
    """Keras's _compute_moments_sync (TensorFlow's replica context, here one replica): the mean and E(x**2) as
    sums over the count, the variance max(E(x**2) - mean**2, 0)."""
    count = ops.reduce_sum(ops.ones_like(x), axis=axes, keepdims=True)
    mean = ops.div(ops.reduce_sum(x, axis=axes, keepdims=True), count)
    squared_mean = ops.div(ops.reduce_sum(ops.square(x), axis=axes, keepdims=True), count)
    return mean, ops.maximum(ops.sub(squared_mean, ops.square(mean)), scalar(0.0, x.dtype))


def _check_axis(layer, x):
    if not -x.ndim <= layer.axis < x.ndim:
        raise ShapeError(f"{type(layer).__name__}: axis {layer.axis} is out of range for inputs of shape "
                         f"{list(x.shape)}")


def _along(v, x, axis):
    """A per-feature weight shaped to broadcast along ``axis`` of x."""
    if v is None or axis % x.ndim == x.ndim - 1:
        return v
    shape = [1] * x.ndim
    shape[axis % x.ndim] = x.shape[axis]
    return ops.reshape(v, tuple(shape))


def _normalize(x, mean, var, beta, gamma, epsilon):
    """tf.nn.batch_normalization: x * inv + (beta - mean * inv), inv = rsqrt(var + eps) * gamma."""
    inv = ops.rsqrt(ops.add(var, scalar(epsilon, x.dtype)))
    if gamma is not None:
        inv = ops.mul(inv, gamma)
    shift = ops.neg(ops.mul(mean, inv))
    if beta is not None:
        shift = ops.add(shift, beta)
    return ops.add(ops.mul(x, inv), shift)


class LayerNormalization(Layer):
    """Keras 3's LayerNormalization. Its deprecated ``rms_scaling=True`` (a keyword Keras pops from its kwargs)
    scales by rsqrt(variance + epsilon) and gamma only, without centering or beta, as Keras's
    ops.layer_normalization does (the variance as tf.math.reduce_variance: no stop_gradient on its mean)."""
    replayable = True
    supports_masking = True
    prefix = "layer_normalization"

    def __init__(self, interp, axis=-1, epsilon=1e-3, center=True, scale=True, beta_initializer="zeros",
                 gamma_initializer="ones", beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, rms_scaling=False, **kw):
        super().__init__(interp, **kw)
        # one axis, or several (Keras's axis=[1, 2, 3]: the statistics and the weights over all of them)
        if isinstance(axis, Tensor) and axis.ndim == 1:
            axis = [Tensor(np.asarray(a)) for a in axis.value]
        self.axes = tuple(integer(a, "axis") for a in axis) if isinstance(axis, (list, tuple)) else \
            (integer(axis, "axis"),)
        self.axis = self.axes[0]
        self.epsilon, self.center, self.scale = num(epsilon, "epsilon"), flag(center), flag(scale)
        self.rms_scaling = flag(rms_scaling)
        if self.rms_scaling:
            current().settings.warn("You passed `rms_scaling=True`, which is deprecated. This argument incorrectly "
                                    "scales the input by the variance, not the root mean square. To correctly use "
                                    "RMS Normalization, please use `keras.layers.RMSNormalization` instead.")
        self.beta_init, self.gamma_init = initializers.get(beta_initializer), initializers.get(gamma_initializer)
        self.regularizers, self.constraints = penalties.scale_and_offset(interp, gamma_regularizer, beta_regularizer,
                                                                         gamma_constraint, beta_constraint)

    def weight_names(self):
        return ("gamma", "beta")

    def check_input(self, x):
        bad = next((a for a in self.axes if not -x.ndim <= a < x.ndim), None)
        if bad is not None:
            raise ShapeError(f"LayerNormalization: axis {bad} is out of range for inputs of shape {list(x.shape)}")

    def config_values(self):
        return {"axis": sorted(self.axes)} if self.built else {}       # (Keras's build makes it a sorted list)

    def build(self, shape, dtype):
        dim = tuple(shape[a] for a in self.axes)
        if self.scale or self.rms_scaling:
            self.add_weight("gamma", dim, self.gamma_init, dtype)
        if self.center and not self.rms_scaling:
            self.add_weight("beta", dim, self.beta_init, dtype)

    def forward(self, interp, x, training):
        axes = self.axes[0] if len(self.axes) == 1 else self.axes
        w = self.weights_
        gamma = self._along(w.get("gamma"), x)
        if self.rms_scaling:
            mean = ops.reduce_mean(x, axis=axes, keepdims=True)
            var = ops.reduce_mean(ops.square(ops.sub(x, mean)), axis=axes, keepdims=True)
            out = ops.mul(x, ops.rsqrt(ops.add(var, scalar(self.epsilon, x.dtype))))
            return out if gamma is None else ops.mul(out, gamma)
        mean, var = _moments(x, axes)
        return _normalize(x, mean, var, self._along(w.get("beta"), x), gamma, self.epsilon)

    def _along(self, v, x):
        if len(self.axes) == 1:
            return _along(v, x, self.axes[0])
        if v is None:
            return None
        shape = [1] * x.ndim
        for a in self.axes:
            shape[a % x.ndim] = x.shape[a]
        return ops.reshape(v, tuple(shape))


def _moving_average(moving, stat, momentum) -> None:
    """``moving`` (a variable) becomes moving * momentum + stat * (1 - momentum), in its dtype (Keras's)."""
    m, f = np.float32(momentum), np.float32(1.0 - momentum)
    new = moving.read().value * m.astype(moving.dtype) + stat.reshape(moving.shape) * f.astype(moving.dtype)
    moving.assign(new.astype(moving.dtype))


class BatchNormalization(Layer):
    replayable = True           # (its moving statistics' updates are a plan's steps: kernels.updated)
    supports_masking = True
    takes_mask = True           # (in training, its moments are of the kept steps)
    prefix = "batch_normalization"

    def __init__(self, interp, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", moving_mean_initializer="zeros",
                 moving_variance_initializer="ones", beta_regularizer=None, gamma_regularizer=None,
                 beta_constraint=None, gamma_constraint=None, renorm=False, renorm_clipping=None,
                 renorm_momentum=0.99, synchronized=False, **kw):
        if flag(renorm):
            raise TdfValueError("BatchNormalization: tapecli has no batch renormalization (renorm=True)")
        super().__init__(interp, **kw)
        self.synchronized = flag(synchronized)
        self.regularizers, self.constraints = penalties.scale_and_offset(interp, gamma_regularizer, beta_regularizer,
                                                                         gamma_constraint, beta_constraint)
        self.axis = integer(axis, "axis")
        self.momentum, self.epsilon = num(momentum, "momentum"), num(epsilon, "epsilon")
        self.center, self.scale = flag(center), flag(scale)
        self.inits = [initializers.get(i) for i in (gamma_initializer, beta_initializer, moving_mean_initializer,
                                                    moving_variance_initializer)]

    def weight_names(self):
        return ("gamma", "beta", "moving_mean", "moving_variance")

    def check_input(self, x):
        _check_axis(self, x)

    def build(self, shape, dtype):
        dim = (shape[self.axis],)
        if self.scale:
            self.add_weight("gamma", dim, self.inits[0], dtype)
        if self.center:
            self.add_weight("beta", dim, self.inits[1], dtype)
        self.add_weight("moving_mean", dim, self.inits[2], dtype, trainable=False)
        self.add_weight("moving_variance", dim, self.inits[3], dtype, trainable=False)

    def forward(self, interp, x, training, mask=None):
        axis = self.axis % x.ndim
        axes = tuple(i for i in range(x.ndim) if i != axis)
        shape = [1] * x.ndim
        shape[axis] = x.shape[axis]
        w = self.weights_
        if mask is not None and tensor(mask).ndim != x.ndim - 1:
            raise TdfValueError("The mask provided should be one dimension less than the inputs. Received: "
                                f"mask.shape={tensor(mask).shape}, inputs.shape={x.shape}")
        if training and self.trainable:
            mean, var = _masked_moments(x, axes, tensor(mask)) if mask is not None else \
                _synchronized_moments(x, axes) if self.synchronized else _moments(x, axes)
            for moving, stat in ((w["moving_mean"], mean), (w["moving_variance"], var)):
                kernels.updated(_moving_average, moving, stat.value, self.momentum)
        else:
            mean = ops.reshape(w["moving_mean"], tuple(shape))
            var = ops.reshape(w["moving_variance"], tuple(shape))
        return _normalize(x, mean, var, _along(w.get("beta"), x, axis), _along(w.get("gamma"), x, axis),
                          self.epsilon)



def _assigned(variable, value) -> None:
    """``variable`` takes ``value`` (a traced array: replayed, the step assigns that iteration's)."""
    variable.assign(value.reshape(variable.shape).astype(variable.dtype))


def _l2_normalized(x):
    """Keras's ops.normalize(x, axis=None), order 2: x * min(rsqrt(sum(x**2)), 1 / epsilon)."""
    inv = ops.minimum(ops.rsqrt(ops.reduce_sum(ops.square(x))), scalar(1.0 / 1e-7, x.dtype))
    return ops.mul(x, inv)


class SpectralNormalization(Layer):
    prefix = "spectral_normalization"
    replayable = True           # (its assignments are a plan's steps: kernels.updated)

    def __init__(self, interp, layer, power_iterations=1, **kw):
        self.layer = _wrapped(interp, layer, "SpectralNormalization")
        iterations = integer(power_iterations, "power_iterations")
        if iterations <= 0:
            raise TdfValueError("`power_iterations` should be greater than zero. Received: "
                                f"`power_iterations={iterations}`")
        super().__init__(interp, **kw)
        self.power_iterations = iterations

    def wrapped_kernel(self):
        """The wrapped layer's ``kernel`` (or ``embeddings``), as Keras's build finds it."""
        found = self.layer.weights_.get("kernel", self.layer.weights_.get("embeddings"))
        if found is None:
            raise TdfValueError(f"{type(self.layer).__name__} object has no attribute 'kernel' nor 'embeddings'")
        return found

    @property
    def weights(self):
        # (Keras's: the kernel is an attribute of the wrapper too, so it comes first, then vector_u, then the rest)
        kernel = self.wrapped_kernel()
        return [kernel, *self.weights_.values(), *(w for w in self.layer.weights if w is not kernel)]

    def weight_names(self):
        return ("vector_u",)

    def sublayers(self) -> list:
        return [self.layer]

    def attributes(self):
        return {**super().attributes(), "layer": lambda: self.layer.as_program(),
                "power_iterations": lambda: self.power_iterations, "kernel": self.wrapped_kernel}

    def rename(self):
        self.layer.rename()

    def get_config(self):
        return {**layer_config(self), "power_iterations": self.power_iterations, "layer": serialize_held(self.layer)}

    def build(self, shape, dtype):
        with name_scope(self.interp, self.given or self.auto):
            self.layer.build_for(shape, dtype)
        kernel = self.wrapped_kernel()
        # (made here, after the wrapped layer's weights: its seed is drawn now, as Keras's build makes it)
        self.add_weight("vector_u", (1, kernel.shape[-1]), initializers.TruncatedNormal(stddev=0.02), kernel.dtype,
                        trainable=False)

    def output_shape(self, shape):
        return self.layer.output_shape(shape)

    def apply(self, interp, x, training=None, **given):
        # (Keras's call casts the wrapped layer's output to the input's dtype: an Embedding's to its integers)
        out = super().apply(interp, x, training, **given)
        dtype = tensor(x).dtype
        return out if out.dtype == dtype else ops.cast(out, dtype)

    def forward(self, interp, x, training):
        if training:
            kernel, vector_u = self.wrapped_kernel(), self.weights_["vector_u"]
            new_u, new_kernel = self.normalized_weights(ops.stop_gradient(ops.identity(kernel)), vector_u)
            kernels.updated(_assigned, vector_u, new_u.value)
            kernels.updated(_assigned, kernel, new_kernel.value)
        return self.layer.apply(interp, x, training)

    def normalized_weights(self, kernel, vector_u):
        """Keras's normalized_weights, kept as they are where the kernel is all zeros (its ops.cond)."""
        weights = ops.reshape(kernel, (-1, kernel.shape[-1]))
        # (in a tf.function Grappler folds a transpose into the product after it: the product of a transposed
        # operand, whose sums run in another order; eagerly the transpose is a copy of its own)
        graph = current().functions > 0
        u = ops.identity(vector_u)
        for _ in range(self.power_iterations):
            v = _l2_normalized(ops.matmul(u, ops.transpose(weights, view=graph)))
            u = _l2_normalized(ops.matmul(v, weights))
        sigma = ops.matmul(ops.matmul(v, weights), ops.transpose(u, view=graph))
        normalized = ops.reshape(ops.div(kernel, sigma), kernel.shape)
        zero = ops.equal(ops.reduce_max(ops.abs_(kernel)), scalar(0.0, kernel.dtype))
        return ops.where(zero, ops.identity(vector_u), u), ops.where(zero, kernel, normalized)


LAYERS = [LayerNormalization, BatchNormalization, SpectralNormalization]
