"""TensorFlow's hashes of strings and tensors, bit for bit (kernels/tf_hashes.py): tf.fingerprint and
tf.strings.to_hash_bucket_fast, to_hash_bucket_strong and to_hash_bucket, each as its C++ kernel computes it;
:func:`hash_buckets` is the one Keras's Hashing and lookup layers call. None has a gradient (TensorFlow's have
none)."""
from __future__ import annotations

import math

import numpy as np

from tapecli import ops
from tapecli.errors import KernelValueError, TdfTypeError, TdfValueError
from tapecli.interpreter.conversions import to_int
from tapecli.interpreter.registry import builtin
from tapecli.kernels import tf_hashes
from tapecli.library.tf_strings import string_values
from tapecli.runtime.limits import admit, admit_bytes
from tapecli.runtime.values import PythonTuple, Tensor

_WORKSPACE = 160        # bytes per string while it is hashed: its hash's state words and the words read


def _hashed(strings: np.ndarray, hash_of, what: str) -> np.ndarray:
    """``hash_of`` each of the strings (an array of bytes), uint64 of their shape; their bytes and the hashes'
    work weighed first."""
    flat = strings.reshape(-1).tolist()
    admit_bytes(len(flat), sum(map(len, flat)) + _WORKSPACE * len(flat), what)
    return hash_of(flat).reshape(strings.shape)


def _buckets(hashes: np.ndarray, num_buckets: int) -> np.ndarray:
    return (hashes % np.uint64(num_buckets)).astype(np.int64)


def fingerprints(strings: np.ndarray, what: str = "the hashed strings") -> np.ndarray:
    """Each string's Fingerprint64 (uint64)."""
    return _hashed(strings, tf_hashes.fingerprint64, what)


def hash_buckets(strings: np.ndarray, num_buckets: int, key=None, what: str = "the hashed strings") -> np.ndarray:
    """Each string's bucket of ``num_buckets`` (int64): its Fingerprint64 (to_hash_bucket_fast), or with a
    ``key`` of two words its SipHash (to_hash_bucket_strong)."""
    if key is None:
        return _buckets(fingerprints(strings, what), num_buckets)
    return _buckets(_hashed(strings, lambda flat: tf_hashes.siphash(flat, key), what), num_buckets)


def _num_buckets(value) -> int:
    """The ``num_buckets`` attr: an int64 at least 1 (an int past int64 reads as -1 there, CPython's
    PyLong_AsLongLong's answer to an overflow, which TensorFlow takes)."""
    n = to_int(value, "num_buckets")
    n = n if -2**63 <= n < 2**63 else -1
    if n < 1:
        raise KernelValueError(f"Value for attr 'num_buckets' of {n} must be at least minimum 1")
    return n


def _key(key) -> tuple[int, int]:
    """to_hash_bucket_strong's ``key``: a list of two int64 (a tuple of literals reaching CPython's runner as a
    tensor)."""
    if isinstance(key, Tensor) and key.weak and key.ndim == 1:
        key = key.value.tolist()
    if not isinstance(key, (list, tuple, PythonTuple)):
        shown = key.value.tolist() if isinstance(key, Tensor) else key
        raise TdfTypeError(f"Expected list for 'key' argument to 'string_to_hash_bucket_strong' Op, not {shown!r}.")
    words = [to_int(k, "key") for k in key]
    if any(not -2**63 <= k < 2**63 for k in words):
        raise TdfValueError("int too big to convert")           # (Python's OverflowError in TensorFlow)
    if len(words) != 2:
        raise KernelValueError("Key must have 2 elements")
    return words[0], words[1]


@builtin("strings.to_hash_bucket_fast")
def to_hash_bucket_fast(input, num_buckets, name=None):  # noqa: A002 (TensorFlow's parameter names)
    values = string_values(input, "StringToHashBucketFast")
    return Tensor(hash_buckets(values, _num_buckets(num_buckets), what="tf.strings.to_hash_bucket_fast's strings"))


@builtin("strings.to_hash_bucket_strong")
def to_hash_bucket_strong(input, num_buckets, key, name=None):  # noqa: A002
    values = string_values(input, "StringToHashBucketStrong")
    return Tensor(hash_buckets(values, _num_buckets(num_buckets), _key(key),
                               what="tf.strings.to_hash_bucket_strong's strings"))


@builtin("strings.to_hash_bucket")
def to_hash_bucket(input, num_buckets, name=None):  # noqa: A002
    """The deprecated StringToHashBucket: TensorFlow's own Hash64, not FarmHash."""
    values = string_values(input, "StringToHashBucket")
    hashes = _hashed(values, tf_hashes.legacy_hash64, "tf.strings.to_hash_bucket's strings")
    return Tensor(_buckets(hashes, _num_buckets(num_buckets)))


@builtin("fingerprint")
def fingerprint(data, method="farmhash64", name=None):
    """Each row's (``data[i, ...]``'s) Fingerprint64 as 8 little-endian bytes: of a numeric row its values'
    bytes; of a row of one string the string's; of a row of several strings their fingerprints' bytes."""
    chosen = string_values(method, "Fingerprint")
    if chosen.ndim:
        raise KernelValueError(f"`method` should be a scalar string: {list(chosen.shape)}")
    if chosen[()] != b"farmhash64":
        raise KernelValueError(f"Unsupported fingerprint method: {chosen[()].decode(errors='replace')}")
    t = ops.to_tensor(data)
    t = ops.materialize(t) if t.weak else t
    if not t.ndim:
        raise KernelValueError("`data` should have at least one dimension: []")
    rows = t.value.reshape(t.shape[0], math.prod(t.shape[1:]))
    if t.dtype.hasobject and rows.shape[1] != 1:
        rows = _little_endian(fingerprints(rows, "tf.fingerprint's strings"))
    if not rows.dtype.hasobject:
        rows = _row_strings(rows)
    admit(rows.size, 8, "tf.fingerprint's result")
    return Tensor(_little_endian(fingerprints(rows.reshape(-1), "tf.fingerprint's rows")))


def _little_endian(rows: np.ndarray) -> np.ndarray:
    """A matrix (or a vector, a column) as the uint8 matrix of each row's little-endian bytes."""
    matrix = rows.reshape(rows.shape[0], math.prod(rows.shape[1:]))
    return np.ascontiguousarray(matrix, matrix.dtype.newbyteorder("<")).view(np.uint8)


def _row_strings(rows: np.ndarray) -> np.ndarray:
    """Each row of a numeric matrix as one string of its values' little-endian bytes."""
    out = np.empty(rows.shape[0], dtype=object)
    out[:] = [row.tobytes() for row in _little_endian(rows)]
    return out
