"""Keras 3's hashing layers (keras/src/layers/preprocessing/): Hashing, which hashes strings and integers into
bins, and HashedCrossing, which hashes the cross of several features, with TensorFlow's own hashes
(library/tf_hashing.py): their outputs are decided from the inputs' values, constants with no gradient.
:func:`hash_bins` is also the lookup layers' hashing of out-of-vocabulary tokens (keras/vocabulary.py)."""
from __future__ import annotations

import numpy as np

from tapecli import ops
from tapecli.errors import TdfValueError
from tapecli.interpreter.conversions import python_number
from tapecli.interpreter.printing import python_repr, python_str
from tapecli.kernels.tf_hashes import fingerprint_cat64
from tapecli.library.core import to_dtype
from tapecli.library.keras.common import flag, float_dtype, integer
from tapecli.library.keras.layers import Layer
from tapecli.library.keras.keras_tensor import KerasTensor
from tapecli.library.keras.optimizers import plain
from tapecli.library.keras.preprocessing import encode_categorical, ragged_rows
from tapecli.runtime.values import PythonTuple, Tensor, dtype_name

_CROSS_KEY = 0xDECAFCAFFE       # tf.sparse.cross_hashed's default hash_key (its _DEFAULT_HASH_KEY)


def keras_salt(salt, caller: str, pair: str) -> list | None:
    """A layer's ``salt`` as Keras keeps it: None, or the two words of SipHash's key (an int is both)."""
    if salt is None:
        return None
    if isinstance(salt, Tensor) and salt.weak and salt.ndim == 1:      # (a tuple of literals on CPython's runner)
        salt = salt.value.tolist()
    if isinstance(salt, (list, tuple, PythonTuple)) and len(salt) == 2:
        return [integer(s, "salt") for s in salt]
    if isinstance(salt, int) or isinstance(salt, Tensor) and salt.weak and salt.ndim == 0 and salt.dtype.kind in "iu":
        return [integer(salt, "salt")] * 2
    raise TdfValueError(f"The `salt` argument for `{caller}` can only be a tuple of {pair}, or a single integer. "
                        f"Received: salt={plain(salt)}.")


def hash_bins(values: np.ndarray, num_bins: int, salt) -> np.ndarray:
    """Keras's hashing of values into ``num_bins`` bins (int64): numbers by their decimal strings (tf.as_string),
    each string's FarmHash fingerprint (to_hash_bucket_fast), or with a salt its SipHash (to_hash_bucket_strong)."""
    from tapecli.library import tf_hashing, tf_strings     # (deferred families: programs without hashing skip them)
    if not values.dtype.hasobject:
        values = tf_strings.as_string(Tensor(values)).value
    return tf_hashing.hash_buckets(values, num_bins, salt, "the hashed values")


def _input(x) -> np.ndarray:
    """Keras's tf_utils.ensure_tensor: a string input as an object array of bytes, a number one as given."""
    return np.asarray(ops.materialize(ops.to_tensor(x)).value)


def _dtype(dtype, default) -> np.dtype:
    """A layer's dtype: a name, or a config's DTypePolicy (from_config)."""
    if isinstance(dtype, dict):
        dtype = dtype.get("config", {}).get("name")
    return default if dtype is None else to_dtype(dtype)


class Hashing(Layer):
    prefix = "hashing"

    def __init__(self, interp, num_bins, mask_value=None, salt=None, output_mode="int", sparse=False, dtype=None,
                 **kw):
        super().__init__(interp, **kw)
        self.out_dtype = _dtype(dtype, np.dtype(np.int64) if output_mode == "int" else float_dtype())
        if num_bins is None or integer(num_bins, "num_bins") <= 0:
            raise TdfValueError(f"The `num_bins` for `Hashing` cannot be `None` or non-positive values. Received: "
                                f"num_bins={plain(num_bins)}.")
        if output_mode == "int" and dtype_name(self.out_dtype) not in ("int32", "int64"):
            raise TdfValueError(f"When `output_mode=\"int\"`, `dtype` should be an integer type, 'int32' or 'in64'. "
                                f"Received: dtype={dtype_name(self.out_dtype)}")
        modes = ("int", "one_hot", "multi_hot", "count")
        if output_mode not in modes:
            raise TdfValueError(f"Invalid value for argument `output_mode`. Expected one of {modes}. Received: "
                                f"output_mode={output_mode}")
        if flag(sparse):
            raise TdfValueError("Hashing: tapecli has no sparse tensors (sparse=True)")
        self.num_bins, self.output_mode = integer(num_bins, "num_bins"), output_mode
        self.mask_value = mask_value
        self.salt = keras_salt(salt, "Hashing", "size 2 integers")

    def output_shape(self, shape):
        """Keras's compute_output_spec."""
        return tuple(shape) if self.output_mode == "int" else (*shape[:-1], self.num_bins)

    def output_dtype(self, dtype):
        return self.out_dtype

    def apply(self, interp, x, training=None, **given):
        """Keras's call: each value's bin (after the mask's bin 0, where ``mask_value`` is set), or their
        encoding. A ragged tensor's values are hashed in its rows: their bins (one-hot encoded) are a ragged
        tensor of the same rows; multi_hot and count encode each row, a dense row each."""
        if getattr(x, "is_ragged", False):
            self.build_for(tuple(x.shape), None)
            found = self._bins(_input(x.flat_values))
            if self.output_mode in ("int", "one_hot"):
                return x.with_flat_values(encode_categorical(found, self.output_mode, self.num_bins, self.out_dtype))
            return encode_categorical(ragged_rows(x, found, self.output_mode), self.output_mode, self.num_bins,
                                      self.out_dtype)
        values = _input(x)
        self.build_for(values.shape, None)
        return encode_categorical(self._bins(values), self.output_mode, self.num_bins, self.out_dtype)

    def _bins(self, values: np.ndarray) -> np.ndarray:
        """Each value's bin (after the mask's bin 0, where ``mask_value`` is set)."""
        bins, masked = self.num_bins, None
        if self.mask_value is not None and bins > 1:
            bins -= 1
            masked = values == _input(self.mask_value)
        if values.dtype.kind == "f":
            values = values.astype(np.int64)                # (Keras's tf.cast: floats truncated)
        indices = hash_bins(values, bins, self.salt)
        if masked is not None:
            indices = np.where(masked, 0, indices + 1)
        return indices

    def config(self):
        return {name: (lambda n=name: python_number(getattr(self, n))) for name in (
            "num_bins", "mask_value", "salt", "output_mode")}

    def config_values(self):
        return {"salt": self.salt}


class HashedCrossing(Layer):
    """The cross of two or more features, each sample's values hashed together as tf.sparse.cross_hashed
    hashes a dense row: from its default key, each feature folded in by FingerprintCat64, a string as its
    Fingerprint64 and an integer as its int64 bits; then the bin."""

    prefix = "hashed_crossing"

    def __init__(self, interp, num_bins, output_mode="int", sparse=False, name=None, dtype=None, **kw):
        super().__init__(interp, name=name, **kw)
        if output_mode not in ("int", "one_hot"):
            raise TdfValueError(f"Unknown value for `output_mode` argument of HashedCrossing. Allowed values are: "
                                f"('int', 'one_hot'). Received: output_mode={output_mode}")
        if flag(sparse):
            raise TdfValueError("HashedCrossing: tapecli has no sparse tensors (sparse=True)")
        self.num_bins, self.output_mode = integer(num_bins, "num_bins"), output_mode
        self.out_dtype = _dtype(dtype, np.dtype(np.int64) if output_mode == "int" else float_dtype())

    def output_dtype(self, dtype):
        return self.out_dtype

    def config(self):
        return {name: (lambda n=name: python_number(getattr(self, n))) for name in ("num_bins", "output_mode")}

    def listed_call(self, interp, xs):
        self._listed(xs)
        self._shaped(xs)
        shape = tuple(xs[0].shape)
        if self.output_mode == "one_hot":       # (Keras's compute_output_shape)
            shape = (*(shape[:-1] if shape and shape[-1] == 1 else shape), self.num_bins)
        out = KerasTensor(shape, self.out_dtype, self, xs, listed=True)
        self.symbolic = (xs, out)
        return out

    @staticmethod
    def _listed(xs) -> None:
        """Keras's check that the inputs are a list or tuple of at least two."""
        if not isinstance(xs, (list, tuple)):
            raise TdfValueError(f"`HashedCrossing` should be called on a list or tuple of inputs. Received: "
                                f"inputs={python_str(xs)}")
        if len(xs) < 2:
            raise TdfValueError(f"`HashedCrossing` should be called on at least two inputs. Received: "
                                f"inputs={python_str(xs)}")

    @staticmethod
    def _shaped(xs) -> None:
        """Keras's check that the inputs are each of shape (), (batch,) or (batch, 1), all of one shape."""
        shape = tuple(xs[0].shape)
        if len(shape) > 2 or len(shape) == 2 and shape[-1] != 1:
            raise TdfValueError(f"All `HashedCrossing` inputs should have shape `()`, `(batch_size)` or "
                                f"`(batch_size, 1)`. Received: inputs={python_repr(xs)}")
        if any(tuple(x.shape) != shape for x in xs[1:]):
            raise TdfValueError(f"All `HashedCrossing` inputs should have equal shape. Received: "
                                f"inputs={python_repr(xs)}")

    def apply(self, interp, x, training=None, **given):
        self._listed(x)
        features = [Tensor(_input(v)) for v in x]
        self._shaped(features)
        self.build_for(features[0].shape, None)
        if not all(f.dtype.kind in "iu" or f.dtype.hasobject for f in features):
            raise TdfValueError(f"All `HashedCrossing` inputs should have an integer or string dtype. Received: "
                                f"inputs={python_repr(features)}")
        crossed = self.crossed([f.value.reshape(-1) for f in features]).reshape(features[0].shape)
        return encode_categorical(crossed, self.output_mode, self.num_bins, self.out_dtype)

    def crossed(self, features: list) -> np.ndarray:
        """Each sample's bin of the cross of its ``features`` (vectors, one value a sample)."""
        from tapecli.library import tf_hashing          # (a deferred family)
        hashed = np.full(features[0].size, np.uint64(_CROSS_KEY))
        for f in features:
            hashed = fingerprint_cat64(hashed, tf_hashing.fingerprints(f) if f.dtype.hasobject else
                                       f.astype(np.int64).view(np.uint64))
        return (hashed % np.uint64(self.num_bins if self.num_bins > 0 else 2**63 - 1)).astype(np.int64)


LAYERS = [Hashing, HashedCrossing]
