"""tf.lookup: hash tables of keys to values (StaticHashTable, StaticVocabularyTable, the mutable
tf.lookup.experimental.MutableHashTable) and their KeyValueTensorInitializer, as TensorFlow's lookup kernels answer:
a lookup keeps its keys' shape (a RaggedTensor's or SparseTensor's structure, its values looked up), a key absent
from the table takes the default value, and StaticVocabularyTable puts such a key in one of its out-of-vocabulary
buckets by the key's FarmHash Fingerprint64 (tf.strings.to_hash_bucket_fast of the key, an integer as its text),
after the vocabulary's ids. A table's contents are not exported: TensorFlow's order is its hash map's. TensorFlow
gives lookups no gradient."""
from __future__ import annotations

import numpy as np

from tapecli.errors import KernelValueError, NoAttribute, TdfTypeError, TdfValueError
from tapecli.interpreter.conversions import to_int
from tapecli.interpreter.objects import BoundMethod, ProgramObject
from tapecli.interpreter.registry import builtin
from tapecli.library.core import to_dtype
from tapecli.library.tf_hashing import hash_buckets
from tapecli.library.tf_math import convert_to_tensor
from tapecli.library.tf_ragged import RaggedTensor
from tapecli.library.tf_sparse import SparseTensor
from tapecli.library.tf_strings import as_string
from tapecli.runtime.values import DType, Tensor, dtype_name


def _dtype_text(dtype: np.dtype) -> str:
    return f"<dtype: '{dtype_name(dtype)}'>"


def _tensor(value, dtype=None) -> Tensor:
    return convert_to_tensor(value, dtype=None if dtype is None else DType(dtype_name(dtype)))


def _key(value):
    """A key as the table holds it: a string's bytes, a number's Python value."""
    return value if isinstance(value, bytes) else value.item()


class KeyValueTensorInitializer(ProgramObject):
    kind_word = "a tf.lookup.KeyValueTensorInitializer"

    def __init__(self, keys, values, key_dtype=None, value_dtype=None, name=None):
        self.keys = _tensor(keys, None if key_dtype is None else to_dtype(key_dtype))
        self.values = _tensor(values, None if value_dtype is None else to_dtype(value_dtype))
        if self.keys.shape[:1] != self.values.shape[:1]:
            raise KernelValueError(f"Expected shape {list(self.keys.shape)} for value, got "
                                   f"{list(self.values.shape)}")

    def get_attribute(self, interp, attr, node):
        if attr == "key_dtype":
            return DType(dtype_name(self.keys.dtype))
        if attr == "value_dtype":
            return DType(dtype_name(self.values.dtype))
        raise NoAttribute(f"tf.lookup.KeyValueTensorInitializer has no attribute {attr} in tapecli",
                          hint="it has key_dtype, value_dtype")


class _Table(ProgramObject):
    """What the tables share: keys of one dtype, values of one dtype and shape, a default value, lookups."""

    kind_word = "a tf.lookup table"
    label = "table"

    def __init__(self, key_dtype: np.dtype, value_dtype: np.dtype, default_value):
        self.key_dtype, self.value_dtype = key_dtype, value_dtype
        self.default = _tensor(default_value, value_dtype)
        self.entries: dict = {}

    def _fill(self, keys: Tensor, values: Tensor, replace: bool) -> None:
        for k, v in zip(keys.value.reshape(-1), values.value.reshape(keys.size, *self.default.shape)):
            held = self.entries.get(_key(k))
            if not replace and held is not None and not np.array_equal(held, v):
                raise KernelValueError(f"HashTable has different value for same key. Key {_key_text(k)} has "
                                       f"{_key_text(held)} and trying to add value {_key_text(v)}")
            self.entries[_key(k)] = v

    def _checked_keys(self, keys):
        flat = keys.values if isinstance(keys, SparseTensor) else keys.flat_values if isinstance(keys, RaggedTensor) \
            else _tensor(keys)
        if flat.dtype != self.key_dtype:
            raise TdfTypeError(f"Dtype of argument `keys` must be {_dtype_text(self.key_dtype)}, received: "
                               f"{_dtype_text(flat.dtype)}")
        return flat

    def _found(self, flat: Tensor) -> Tensor:
        default = self.default.value if self.default.ndim else self.default.value[()]
        out = np.empty((*flat.shape, *self.default.shape), dtype=self.value_dtype)
        for index, k in zip(np.ndindex(*flat.shape), flat.value.reshape(-1)):
            out[index] = self.entries.get(_key(k), default)
        return Tensor(out)

    def lookup(self, keys, name=None):
        flat = self._checked_keys(keys)
        return _shaped_like(keys, self._values_of(flat))

    def _values_of(self, flat: Tensor) -> Tensor:
        return self._found(flat)

    def size(self, name=None) -> Tensor:
        return Tensor(np.array(len(self.entries), dtype=np.int64))

    def methods(self) -> dict:
        return {"lookup": self.lookup, "size": self.size}

    def get_attribute(self, interp, attr, node):
        if attr == "key_dtype":
            return DType(dtype_name(self.key_dtype))
        if attr == "value_dtype":
            return DType(dtype_name(self.value_dtype))
        if attr == "default_value":
            return self.default
        methods = self.methods()
        if attr in methods:
            fn = methods[attr]
            return BoundMethod(attr, lambda call_node, *a, **k: fn(*a, **k))
        raise NoAttribute(f"{self.kind_word} has no attribute {attr} in tapecli",
                          hint="it has key_dtype, value_dtype, default_value, " + ", ".join(methods))

    indexed_by_values = True

    def index(self, values: list):          # (table[keys]: its lookup; the interpreter's subscript)
        return self.lookup(values[0])

    def getitem(self, key: tuple):          # (CPython's)
        return self.lookup(key[0])


def _shaped_like(keys, values: Tensor):
    """The values of a lookup in the structure of its keys."""
    if isinstance(keys, SparseTensor):
        return SparseTensor(keys.indices, values, keys.dense_shape)
    if isinstance(keys, RaggedTensor):
        return keys.with_flat_values(values)
    return values


def _key_text(value) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(np.asarray(value).tolist())


class StaticHashTable(_Table):
    kind_word = "a tf.lookup.StaticHashTable"

    def __init__(self, initializer, default_value, name=None, experimental_is_anonymous=False):
        if not isinstance(initializer, KeyValueTensorInitializer):
            raise TdfTypeError("StaticHashTable takes a tf.lookup.KeyValueTensorInitializer (tapecli reads no files)")
        super().__init__(initializer.keys.dtype, initializer.values.dtype, default_value)
        self._fill(initializer.keys, initializer.values, replace=False)


class StaticVocabularyTable(_Table):
    """Its ids: the vocabulary's (int64), else the key's bucket after them; its size counts the buckets."""

    kind_word = "a tf.lookup.StaticVocabularyTable"

    def __init__(self, initializer, num_oov_buckets, lookup_key_dtype=None, name=None,
                 experimental_is_anonymous=False):
        self.buckets = to_int(num_oov_buckets, "num_oov_buckets")
        if self.buckets <= 0:
            raise TdfValueError("`num_oov_buckets` must be > 0; use StaticHashTable.")
        if initializer is None:
            key_dtype = np.dtype(object) if lookup_key_dtype is None else to_dtype(lookup_key_dtype)
            super().__init__(key_dtype, np.dtype(np.int64), -1)
        else:
            if not isinstance(initializer, KeyValueTensorInitializer):
                raise TdfTypeError("StaticVocabularyTable takes a tf.lookup.KeyValueTensorInitializer (tapecli reads "
                                   "no files)")
            table_keys = initializer.keys.dtype
            if dtype_name(table_keys) not in ("int64", "string"):
                raise TdfTypeError(f"Invalid `key_dtype`, expected one of (tf.int64, tf.string), but got "
                                   f"{_dtype_text(table_keys)}.")
            key_dtype = table_keys if lookup_key_dtype is None else to_dtype(lookup_key_dtype)
            if (key_dtype.kind in "iu") != (table_keys.kind in "iu"):
                raise TdfTypeError(f"Invalid `key_dtype`, expected {'integer' if key_dtype.kind in 'iu' else 'non-integer'}"
                                   f" but got {_dtype_text(table_keys)}.")
            if initializer.values.dtype != np.int64:
                raise TdfTypeError(f"Invalid `value_dtype`, expected <dtype: 'int64'> but got "
                                   f"{_dtype_text(initializer.values.dtype)}.")
            super().__init__(key_dtype, np.dtype(np.int64), -1)
            self._fill(initializer.keys, initializer.values, replace=False)
        if key_dtype.kind not in "iu" and dtype_name(key_dtype) != "string":
            raise TdfTypeError(f"Invalid `key_dtype`, expected integer or string, got {_dtype_text(key_dtype)}")

    def _values_of(self, flat: Tensor) -> Tensor:
        text = flat if flat.dtype == object else as_string(Tensor(flat.value.astype(np.int64)))
        buckets = hash_buckets(text.value, self.buckets, what="the looked-up keys") + len(self.entries)
        found = self._found(flat if flat.dtype == object else Tensor(flat.value.astype(np.int64))).value
        return Tensor(np.where(found != -1, found, buckets).astype(np.int64))

    def size(self, name=None) -> Tensor:
        return Tensor(np.array(len(self.entries) + self.buckets, dtype=np.int64))


class MutableHashTable(_Table):
    kind_word = "a tf.lookup.experimental.MutableHashTable"

    def __init__(self, key_dtype, value_dtype, default_value, name="MutableHashTable", checkpoint=True,
                 experimental_is_anonymous=False):
        super().__init__(to_dtype(key_dtype), to_dtype(value_dtype), default_value)

    def insert(self, keys, values, name=None):
        k, v = _tensor(keys, self.key_dtype), _tensor(values, self.value_dtype)
        if v.shape != (*k.shape, *self.default.shape):
            raise KernelValueError(f"Expected shape {list((*k.shape, *self.default.shape))} for value, got "
                                   f"{list(v.shape)}")
        self._fill(k, v, replace=True)

    def remove(self, keys, name=None):
        for k in _tensor(keys, self.key_dtype).value.reshape(-1):
            self.entries.pop(_key(k), None)

    def methods(self) -> dict:
        return {**super().methods(), "insert": self.insert, "remove": self.remove}


def _constructor(cls):
    def make(*args, **kwargs):
        return cls(*args, **kwargs)
    make.__name__ = cls.__name__
    make.makes = cls                # (isinstance(t, tf.lookup.StaticHashTable): classes.is_instance)
    return make


builtin("lookup.KeyValueTensorInitializer")(_constructor(KeyValueTensorInitializer))
builtin("lookup.StaticHashTable")(_constructor(StaticHashTable))
builtin("lookup.StaticVocabularyTable")(_constructor(StaticVocabularyTable))
builtin("lookup.experimental.MutableHashTable")(_constructor(MutableHashTable))
