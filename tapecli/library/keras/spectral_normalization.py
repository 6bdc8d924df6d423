"""Keras 3's SpectralNormalization wrapper (keras/src/layers/normalization/spectral_normalization.py): in training,
the wrapped layer's kernel is divided by its largest singular value, estimated by power iteration from a kept
vector ``vector_u``, and both are assigned before the wrapped layer runs."""
from __future__ import annotations

from tapecli import kernels, ops
from tapecli.errors import TdfValueError
from tapecli.library.keras import initializers
from tapecli.library.keras.common import integer, name_scope, scalar, tensor
from tapecli.library.keras.configs import layer_config, serialize_held
from tapecli.library.keras.layers import Layer
from tapecli.library.keras.rnn_wrappers import _wrapped
from tapecli.runtime.context import current


def _assigned(variable, value, _) -> None:
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
            kernels.updated(_assigned, vector_u, new_u.value, None)
            kernels.updated(_assigned, kernel, new_kernel.value, None)
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


LAYERS = [SpectralNormalization]
