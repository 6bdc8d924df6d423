"""Keras 3's vocabulary layers (keras/src/layers/preprocessing/): StringLookup and IntegerLookup, which share
Keras's IndexLookup, and TextVectorization, which standardizes and splits strings into tokens for a StringLookup
of its own, as Keras's do. Their outputs are decided from the inputs' values: int64 indices (or, inverted, the
tokens), or their one-hot, multi-hot, count and TF-IDF encodings, constants with no gradient as in TensorFlow.

A vocabulary is learned (``adapt``) as Keras learns it: each token's count over the data, the tokens ordered by
count then token, both descending (np.lexsort), after the mask and OOV indices. TensorFlow's ragged rows of
tokens (a batch of split strings) are held here as a dense array padded with the mask token "", which
TextVectorization's lookup maps where TensorFlow's ragged tensor has none: to index 0, or to no column of an
encoding."""
from __future__ import annotations

import collections

import numpy as np

from tapecli import ops
from tapecli.errors import KernelValueError, TdfTypeError, TdfValueError
from tapecli.interpreter.conversions import python_number
from tapecli.interpreter.objects import BoundMethod, Function, ProgramObject
from tapecli.library.keras.common import flag, float_dtype, integer
from tapecli.library.keras.hashing import hash_bins, keras_salt
from tapecli.library.keras.layers import Layer
from tapecli.library.keras.optimizers import plain
from tapecli.library.keras.preprocessing import encode_categorical, ragged_rows
from tapecli.runtime.values import NumpyArray, PythonTuple, Tensor, Variable, dtype_name, text_array

_MODES = ("int", "one_hot", "multi_hot", "count", "tf_idf")
_MODE_ALIASES = {"binary": "multi_hot", "tf-idf": "tf_idf"}
_PUNCTUATION = r'[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']'      # TextVectorization's
_ENCODED_MASK = np.iinfo(np.int64).max       # a masked index of an encoding: outside every column


def _checked(value, allowed, caller: str, arg: str, allow_none=False, allow_callables=False):
    """Keras's argument_validation.validate_string_arg."""
    if allow_none and value is None or allow_callables and _is_callable(value) or \
            isinstance(value, str) and value in allowed:
        return value
    raise TdfValueError(f"Unknown value for `{arg}` argument of {caller}. Allowed values are: {allowed}. Received: "
                        f"{arg}={value}")


def _is_callable(value) -> bool:
    return isinstance(value, (Function, ProgramObject, BoundMethod)) or getattr(value, "is_builtin", False)


def _mode(output_mode, caller: str) -> str:
    mode = _MODE_ALIASES.get(output_mode, output_mode) if isinstance(output_mode, str) else output_mode
    return _checked(mode, _MODES, caller, "output_mode")


def _values(x, dtype: str) -> np.ndarray:
    """Keras's tf_utils.ensure_tensor(x, dtype): the values of a tensor, list, array or scalar as ``dtype``, a
    string one as an object array of UTF-8 bytes (runtime.values.text_array), a number one as int64."""
    values = np.asarray(ops.to_tensor(x).value)
    if values.dtype.kind in "SU":                # (a NumPy array of strings, as the program holds one)
        values = text_array(values)
    if values.dtype.hasobject != (dtype == "string"):
        raise TdfTypeError(f"Cast {dtype_name(values.dtype)} to {dtype} is not supported")      # (TensorFlow's)
    return values if dtype == "string" else values.astype(np.int64)


def _batches(data, steps, dtype: str):
    """Keras's adapt: a dataset's elements, each a batch; any other data one batch, a vector's items each a
    sample (a column)."""
    from tapecli.library.data import Dataset
    if isinstance(data, Dataset):
        for i, element in enumerate(data.items()):
            if steps is not None and i >= integer(steps, "steps"):
                return
            yield _values(element, dtype)
        return
    values = _values(data, dtype)
    yield values[:, None] if values.ndim == 1 else values


def _shown(values: list) -> str:
    """Tokens as Keras's messages print a NumPy array's items."""
    return "[" + ", ".join(f"np.str_({v.decode(errors='replace')!r})" if isinstance(v, bytes) else f"np.int64({v})"
                           for v in values) + "]"


class IndexLookup(Layer):
    """Keras's IndexLookup: a table from tokens to indices after ``mask_token``'s (index 0, in int mode) and the
    ``num_oov_indices`` OOV indices, which every token the table lacks maps to."""

    vocabulary_dtype = "int64"        # the tokens' dtype: "string" (StringLookup's) or "int64"

    def __init__(self, interp, max_tokens, num_oov_indices, mask_token, oov_token, vocabulary=None, idf_weights=None,
                 invert=False, output_mode="int", sparse=False, pad_to_max_tokens=False, oov_method="floormod",
                 salt=None, vocabulary_size=None, **kw):
        caller = type(self).__name__
        self.max_tokens = None if max_tokens is None else integer(max_tokens, "max_tokens")
        self.num_oov_indices = integer(num_oov_indices, "num_oov_indices")
        self.pad_to_max_tokens, self.invert = flag(pad_to_max_tokens), flag(invert)
        if self.max_tokens is not None and self.max_tokens <= 1:
            raise TdfValueError(f"If set, `max_tokens` must be greater than 1. Received: max_tokens={self.max_tokens}")
        if self.pad_to_max_tokens and self.max_tokens is None:
            raise TdfValueError(f"If pad_to_max_tokens is True, must set `max_tokens`. Received: "
                                f"max_tokens={self.max_tokens}")
        if self.num_oov_indices < 0:
            raise TdfValueError(f"`num_oov_indices` must be greater than or equal to 0. Received: "
                                f"num_oov_indices={self.num_oov_indices}")
        self.oov_method = _checked(oov_method, ("floormod", "farmhash"), caller, "oov_method")
        if salt is not None and self.vocabulary_dtype == "int64" and oov_method != "farmhash":
            raise TdfValueError(f"`salt` can only be used when `oov_method='farmhash'`. Received: "
                                f"oov_method={oov_method}")
        self.salt = keras_salt(salt, "IndexLookup", "2 integers")      # (SipHash's key of OOV tokens)
        self.output_mode = _mode(output_mode, caller)
        if self.invert and self.output_mode != "int":
            raise TdfValueError(f"`output_mode` must be `'int'` when `invert` is true. Received: "
                                f"output_mode={self.output_mode}")
        if flag(sparse):
            raise TdfValueError(f"{caller}: tapecli has no sparse tensors (sparse=True)")
        if idf_weights is not None and self.output_mode != "tf_idf":
            raise TdfValueError(f"`idf_weights` should only be set if `output_mode` is `'tf_idf'`. Received: "
                                f"idf_weights={plain(idf_weights)} and output_mode={self.output_mode}")
        super().__init__(interp, **kw)
        self.mask_token, self.oov_token = mask_token, oov_token
        self.mask_key = None if mask_token is None else self._token(mask_token)
        self.oov_key = None if oov_token is None else self._token(oov_token)
        self.input_vocabulary, self.has_input_vocabulary = vocabulary, vocabulary is not None
        self.frozen_size = None if vocabulary_size is None else integer(vocabulary_size, "vocabulary_size")
        self.tokens: list = []          # the vocabulary's tokens (bytes or ints), from index token_start() on
        self.table: dict = {}           # each token's index (inverted: each index's token)
        self.idf_weights = None         # tf_idf's weights, a non-trainable variable (Keras's tf.Variable)
        if self.output_mode == "tf_idf":
            if self.has_input_vocabulary and idf_weights is None:
                raise TdfValueError("When specifying the `vocabulary` argument, in TF-IDF output mode, the "
                                    "`idf_weights` argument must also be provided.")
            if idf_weights is not None:
                self._set_idf(np.asarray(ops.to_tensor(idf_weights).value, np.float64))
        if vocabulary is not None:
            self.set_vocabulary(vocabulary, idf_weights)
        self.reset_state()

    # ---------------------------------------------------------------- indices and tokens
    def oov_start(self) -> int:
        return 1 if self.mask_token is not None and self.output_mode == "int" else 0

    def token_start(self) -> int:
        return self.oov_start() + self.num_oov_indices

    def vocabulary_size(self) -> int:
        return len(self.tokens) + self.token_start()

    def _token(self, value):
        """A token the program gives (an item of a vocabulary, the mask or OOV token) as the table holds it."""
        return _values(value, self.vocabulary_dtype).item()

    def _vocabulary_item(self, token):
        """A learned token as get_vocabulary gives it: NumPy's scalar (np.str_, np.int64), as Keras's export."""
        if isinstance(token, bytes):
            return NumpyArray(np.asarray(np.str_(token.decode(self.encoding, errors="replace"))))
        return NumpyArray(np.asarray(np.int64(token)))

    def get_vocabulary(self, include_special_tokens=True) -> list:
        by_index = {self.token_start() + i: self._vocabulary_item(t) for i, t in enumerate(self.tokens)}
        vocabulary = [by_index.get(i, python_number(self.oov_token)) for i in range(self.vocabulary_size())]
        if self.mask_token is not None and self.output_mode == "int":
            vocabulary[0] = python_number(self.mask_token)
        return vocabulary if flag(include_special_tokens) else vocabulary[self.token_start():]

    # ---------------------------------------------------------------- setting and learning the vocabulary
    def set_vocabulary(self, vocabulary, idf_weights=None):
        """Keras's set_vocabulary: the tokens after the special ones (which the vocabulary may begin with)."""
        if self.output_mode == "tf_idf" and idf_weights is None:
            raise TdfValueError("`idf_weights` must be set if output_mode is 'tf_idf'.")
        if self.output_mode != "tf_idf" and idf_weights is not None:
            raise TdfValueError(f"`idf_weights` should only be set if output_mode is `'tf_idf'`. Received: "
                                f"output_mode={self.output_mode} and idf_weights={plain(idf_weights)}")
        if isinstance(vocabulary, str):
            raise TdfValueError("a vocabulary file: tapecli programs read no files (pass the tokens as a list)")
        given = [self._token(v) for v in vocabulary] if isinstance(vocabulary, (list, tuple)) else \
            _values(vocabulary, self.vocabulary_dtype).reshape(-1).tolist()
        if not given:
            raise TdfValueError("Cannot set an empty vocabulary. Received: vocabulary=[]")
        token_start = self.token_start()
        special_keys = [self.mask_key] * self.oov_start() + [self.oov_key] * self.num_oov_indices
        found_special = given[:token_start] == special_keys
        special_tokens = [self.mask_token] * self.oov_start() + [self.oov_token] * self.num_oov_indices
        tokens = given[token_start:] if found_special else given
        repeated = [t for t, n in collections.Counter(tokens).items() if n > 1]
        if repeated:
            raise TdfValueError(f"The passed vocabulary has at least one repeated term. Please uniquify your "
                                f"dataset. The repeated terms are: {_shown(repeated)}")
        for key, what in ((self.mask_key, "mask_token"), (self.oov_key if self.invert else None, "oov_token")):
            if key is not None and key in tokens:
                at = len(given) - 1 - given[::-1].index(key)
                raise TdfValueError(f"Found reserved {'mask' if what == 'mask_token' else 'OOV'} token at unexpected "
                                    f"location in `vocabulary`. Note that passed `vocabulary` does not need to "
                                    f"include the OOV and mask tokens. Either remove all mask and OOV tokens, or "
                                    f"include them only at the start of the vocabulary in precisely this order: "
                                    f"{plain(special_tokens)}. Received: {what}={plain(getattr(self, what))} at "
                                    f"vocabulary index [{at}]")
        if self.max_tokens is not None and token_start + len(tokens) > self.max_tokens:
            raise TdfValueError(f"Attempted to set a vocabulary larger than the maximum vocab size. Received "
                                f"vocabulary size is {token_start + len(tokens)}; `max_tokens` is "
                                f"{self.max_tokens}.")
        self._set_tokens(tokens)
        if self.output_mode == "tf_idf":
            weights = np.asarray(ops.to_tensor(idf_weights).value, np.float64)
            if len(given) != len(weights):
                raise TdfValueError(f"`idf_weights` must be the same length as vocabulary. len(idf_weights) is "
                                    f"{len(weights)}; len(vocabulary) is {len(given)}")
            if weights.ndim != 1:
                raise TdfValueError("TF-IDF data must be a 1-index array.")
            front = 0 if found_special else token_start
            back = self.max_tokens - front - len(weights) if self.pad_to_max_tokens else 0
            self._set_idf(np.pad(weights, (front, back), constant_values=(np.average(weights), 0)))

    def _set_tokens(self, tokens: list) -> None:
        self.tokens = list(tokens)
        indexed = enumerate(self.tokens, self.token_start())
        self.table = dict(indexed) if self.invert else {t: i for i, t in indexed}
        self._record_vocabulary_size()

    def _set_idf(self, weights: np.ndarray) -> None:
        self.idf_weights = Variable("idf_weights", weights.astype(float_dtype()), trainable=False)

    def _record_vocabulary_size(self) -> None:
        """The encodings' depth, fixed by the first vocabulary (Keras's _frozen_vocab_size)."""
        if self.output_mode != "int" and not self.pad_to_max_tokens and self.frozen_size is not None and \
                self.vocabulary_size() != self.frozen_size:
            raise TdfValueError(f"When using `output_mode={self.output_mode}` and `pad_to_max_tokens=False`, the "
                                f"vocabulary size cannot be changed after the layer is called. Old vocab size is "
                                f"{self.frozen_size}, new vocab size is {self.vocabulary_size()}")
        self.frozen_size = self.vocabulary_size()

    def adapt(self, data, steps=None):
        self.reset_state()
        for batch in _batches(data, steps, self.vocabulary_dtype):
            self.update_state(batch)
        self.finalize_state()

    def reset_state(self) -> None:
        self.token_counts: collections.Counter = collections.Counter()
        self.document_counts: collections.Counter = collections.Counter()     # (tf_idf's)
        self.num_documents = 0

    def update_state(self, data: np.ndarray) -> None:
        """Count a batch's tokens (a vector is one document; rows of a matrix each one)."""
        if self.has_input_vocabulary:
            raise TdfValueError(f"Cannot adapt layer '{self.display()}' after setting a static vocabulary via "
                                f"`vocabulary` argument or `set_vocabulary()` method.")
        documents = data.reshape(1, -1) if data.ndim < 2 else data.reshape(data.shape[0], -1)
        self.token_counts.update(documents.reshape(-1).tolist())
        if self.output_mode == "tf_idf":
            for row in documents.tolist():
                self.document_counts.update(set(row))
            self.num_documents += documents.shape[0]

    def finalize_state(self) -> None:
        """The tokens by count then token, both descending, as many as ``max_tokens`` leaves room for, and their
        inverse document frequencies log(1 + documents / (1 + the token's documents)), the OOV indices'
        their mean."""
        if self.has_input_vocabulary or not self.token_counts:
            self._record_vocabulary_size()
            return
        for special in (self.mask_key, self.oov_key):
            self.token_counts.pop(special, None)
        tokens = np.array(list(self.token_counts), dtype=object if self.vocabulary_dtype == "string" else np.int64)
        order = np.lexsort((tokens, np.array(list(self.token_counts.values()), np.int64)))[::-1]
        if self.max_tokens:
            order = order[:self.max_tokens - self.token_start()]
        self._set_tokens(tokens[order].tolist())
        if self.output_mode == "tf_idf":
            documents = np.array([self.document_counts[t] for t in self.tokens], np.int64)
            idf = np.log(1 + self.num_documents / (1 + documents)).astype(float_dtype())
            mean = ops.reduce_mean(Tensor(idf)).value            # (TensorFlow's sum's order)
            weights = np.concatenate([np.full(self.token_start(), mean, idf.dtype), idf])
            if self.pad_to_max_tokens:
                weights = np.pad(weights, (0, self.max_tokens - weights.size))
            self._set_idf(weights)
        self.reset_state()

    # ---------------------------------------------------------------- calling
    def output_shape(self, shape):
        """Keras's compute_output_shape."""
        if self.output_mode == "int":
            return tuple(shape)
        if self.output_mode == "one_hot" and not (len(shape) > 1 and shape[-1] == 1):
            return (*shape, self.depth())
        return (*shape[:-1], self.depth())

    def depth(self) -> int | None:
        """The encodings' columns."""
        return self.max_tokens if self.pad_to_max_tokens else self.frozen_size

    def output_dtype(self, dtype):
        return np.dtype(np.int64) if self.output_mode == "int" else float_dtype()

    def apply(self, interp, x, training=None, **given):
        """Keras's call: the indices of x's tokens (a scalar's as one), or their encoding."""
        if self.depth() is None and self.output_mode != "int":
            raise TdfValueError(f"When using `output_mode={self.output_mode}` and `pad_to_max_tokens=False`, you "
                                f"must set the layer's vocabulary before calling it. Either pass a `vocabulary` "
                                f"argument to the layer, or call `adapt` with some sample data.")
        if getattr(x, "is_ragged", False):
            return self._ragged(interp, x, training)
        keys = _values(x, self.key_dtype())
        self.build_for(keys.shape, None)
        found = self._lookup(keys.reshape(-1)).reshape(keys.shape or (1,))
        if self.output_mode == "int":
            return Tensor(found.reshape(keys.shape))
        return self._encoded(found)

    def key_dtype(self) -> str:
        return "int64" if self.invert else self.vocabulary_dtype

    def _encoded(self, found: np.ndarray) -> Tensor:
        encoded = encode_categorical(found, "count" if self.output_mode == "tf_idf" else self.output_mode,
                                     self.depth(), np.int64)
        if self.output_mode == "tf_idf":
            weights = self.idf_weights.read().value
            return Tensor(encoded.value.astype(weights.dtype) * weights)
        return encoded

    def _ragged(self, interp, x, training):
        """Keras's call of a ragged tensor (tf.ragged.map_flat_values): its rows kept, each token looked up (one-hot
        encoded, in one_hot mode); in multi_hot, count and tf_idf modes each row's encoding, a dense row each."""
        if self.output_mode in ("int", "one_hot"):
            return x.with_flat_values(self.apply(interp, x.flat_values, training))
        return self._encoded(ragged_rows(x, self._lookup(_values(x.flat_values, self.key_dtype())),
                                         self.output_mode))

    def _lookup(self, keys: np.ndarray) -> np.ndarray:
        """Keras's _lookup_dense of a vector of keys: each token's index, or (inverted) each index's token."""
        if self.invert:
            out = np.array([self.table.get(k, self.oov_key) for k in keys.tolist()],
                           dtype=object if self.vocabulary_dtype == "string" else np.int64)
            if self.mask_token is not None:
                out[keys == 0] = self.mask_key
            return out
        default = self.oov_start() if self.num_oov_indices == 1 else -1
        indices = np.array([self.table.get(k, default) for k in keys.tolist()], dtype=np.int64)
        if self.mask_token is not None:
            indices[keys == self.mask_key] = 0 if self.output_mode == "int" else _ENCODED_MASK
        missing = indices == -1
        if self.num_oov_indices == 0 and missing.any():
            raise KernelValueError(f"When `num_oov_indices=0` all inputs should be in vocabulary, found OOV values "
                                   f"{_shown(keys[missing].tolist())}, consider setting `num_oov_indices=1`.")
        if self.num_oov_indices > 1 and missing.any():
            unknown = keys[missing]
            hashed = hash_bins(unknown, self.num_oov_indices, self.salt) if self.vocabulary_dtype == "string" or \
                self.oov_method == "farmhash" else np.mod(unknown, self.num_oov_indices)
            indices[missing] = hashed + self.oov_start()
        return indices

    # ---------------------------------------------------------------- the program's view
    def methods(self):
        return {**super().methods(), "adapt": self.adapt, "get_vocabulary": self.get_vocabulary,
                "vocabulary_size": lambda: python_number(self.vocabulary_size()),
                "set_vocabulary": self.set_vocabulary}

    def config(self):
        out = {name: (lambda n=name: python_number(getattr(self, n))) for name in (
            "max_tokens", "num_oov_indices", "mask_token", "oov_token", "output_mode", "invert", "pad_to_max_tokens",
            "vocabulary_dtype")}
        if self.output_mode == "tf_idf":
            out["idf_weights"] = lambda: self.idf_weights
        return out

    def config_values(self):
        listed = self.input_vocabulary
        if isinstance(listed, (Tensor, Variable)):
            listed = ops.to_tensor(listed).value.tolist()
        return {"output_mode": self.output_mode, "vocabulary": listed, "vocabulary_size": self.frozen_size,
                "salt": self.salt}


class StringLookup(IndexLookup):
    prefix = "string_lookup"
    vocabulary_dtype = "string"

    def __init__(self, interp, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token="[UNK]",
                 vocabulary=None, idf_weights=None, invert=False, output_mode="int", pad_to_max_tokens=False,
                 sparse=False, encoding="utf-8", salt=None, **kw):
        self.encoding = encoding
        super().__init__(interp, max_tokens, num_oov_indices, mask_token, oov_token, vocabulary=vocabulary,
                         idf_weights=idf_weights, invert=invert, output_mode=output_mode,
                         pad_to_max_tokens=pad_to_max_tokens, sparse=sparse, salt=salt, **kw)


class IntegerLookup(IndexLookup):
    prefix = "integer_lookup"

    def __init__(self, interp, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token=-1, vocabulary=None,
                 vocabulary_dtype="int64", idf_weights=None, invert=False, output_mode="int", sparse=False,
                 pad_to_max_tokens=False, oov_method="floormod", salt=None, **kw):
        if max_tokens is not None and integer(max_tokens, "max_tokens") <= 1:
            raise TdfValueError(f"If `max_tokens` is set for `IntegerLookup`, it must be greater than 1. Received: "
                                f"max_tokens={plain(max_tokens)}")
        if integer(num_oov_indices, "num_oov_indices") < 0:
            raise TdfValueError(f"The value of `num_oov_indices` argument for `IntegerLookup` must >= 0. Received: "
                                f"num_oov_indices={plain(num_oov_indices)}")
        if vocabulary_dtype != "int64":
            raise TdfValueError(f"Only `vocabulary_dtype='int64'` is supported at this time. Received: "
                                f"vocabulary_dtype={vocabulary_dtype}")
        super().__init__(interp, max_tokens, num_oov_indices, mask_token, oov_token, vocabulary=vocabulary,
                         idf_weights=idf_weights, invert=invert, output_mode=output_mode, sparse=sparse,
                         pad_to_max_tokens=pad_to_max_tokens, oov_method=oov_method, salt=salt, **kw)

    def config_values(self):
        out = super().config_values()
        if out["vocabulary"] is not None:
            out["vocabulary"] = [int(plain(v)) for v in out["vocabulary"]]
        return out


# ------------------------------------------------------------------ TextVectorization

def _ngram_widths(ngrams) -> tuple | None:
    """None, an int n (the widths 1 to n) or a tuple of widths (where CPython runs the program, a tuple of ints
    reaches the library as a literal tensor)."""
    if ngrams is None:
        return None
    if isinstance(ngrams, Tensor) and ngrams.weak and ngrams.value.dtype.kind == "i" and ngrams.ndim <= 1:
        ngrams = ngrams.value.tolist()
        if isinstance(ngrams, int):
            return tuple(range(1, ngrams + 1))
        return tuple(ngrams)
    if isinstance(ngrams, (tuple, PythonTuple)) and all(isinstance(n, Tensor) and n.weak for n in ngrams):
        return tuple(integer(n, "ngrams") for n in ngrams)
    raise TdfValueError(f"`ngrams` must be None, an integer, or a tuple of integers. Received: ngrams={plain(ngrams)}")


def _padded(rows: list, lead: tuple) -> np.ndarray:
    """Rows of tokens (TensorFlow's ragged rows) as a dense array, each padded with "" to the longest."""
    longest = max((len(r) for r in rows), default=0)
    out = np.full((len(rows), longest), b"", dtype=object)
    for i, row in enumerate(rows):
        out[i, :len(row)] = row
    return out.reshape(*lead, longest)


class TextVectorization(Layer):
    """Strings standardized, split into tokens (and their n-grams), then looked up by a StringLookup whose mask
    token is "" (Keras's)."""

    prefix = "text_vectorization"

    def __init__(self, interp, max_tokens=None, standardize="lower_and_strip_punctuation", split="whitespace",
                 ngrams=None, output_mode="int", output_sequence_length=None, pad_to_max_tokens=False,
                 vocabulary=None, idf_weights=None, sparse=False, ragged=False, encoding="utf-8",
                 vocabulary_size=None, **kw):
        caller = "TextVectorization"
        self.standardize = _checked(standardize, ("lower_and_strip_punctuation", "lower", "strip_punctuation"),
                                    caller, "standardize", allow_none=True, allow_callables=True)
        self.split = _checked(split, ("whitespace", "character"), caller, "split", allow_none=True,
                              allow_callables=True)
        self.output_mode = _mode(output_mode, caller)
        self.ngrams = _ngram_widths(ngrams)
        length = output_sequence_length
        if self.output_mode == "int" and not (length is None or isinstance(length, Tensor) and length.weak and
                                              length.value.dtype.kind == "i"):
            raise TdfValueError(f"`output_sequence_length` must be either None or an integer when `output_mode` is "
                                f"'int'. Received: output_sequence_length={plain(length)}")
        if self.output_mode != "int" and length is not None:
            raise TdfValueError(f"`output_sequence_length` must not be set if `output_mode` is not 'int'. Received "
                                f"output_sequence_length={plain(length)}.")
        self.ragged = flag(ragged)
        if self.ragged and self.output_mode != "int":
            raise TdfValueError(f"`ragged` must not be true if `output_mode` is `'int'`. Received: ragged=True and "
                                f"output_mode={self.output_mode}")
        if self.ragged and _is_callable(self.split):
            raise TdfValueError("TextVectorization: tapecli gives ragged=True's rows for the whitespace and "
                                "character splits, not a program's split")
        self.output_sequence_length = None if length is None else integer(length, "output_sequence_length")
        super().__init__(interp, **kw)
        self.lookup = StringLookup(interp, max_tokens=max_tokens, vocabulary=vocabulary, idf_weights=idf_weights,
                                   pad_to_max_tokens=pad_to_max_tokens, mask_token="", output_mode=output_mode,
                                   sparse=sparse, encoding=encoding, vocabulary_size=vocabulary_size)

    def _apply_program(self, fn, values: np.ndarray) -> np.ndarray:
        """A program's standardize or split function of a string tensor: its string result's values."""
        return _values(self.interp.call_value(fn, [Tensor(values)]), "string")

    def tokens(self, values: np.ndarray) -> tuple:
        """Keras's _preprocess of strings: standardized, split (a string's tokens along a new last axis, the rows
        padded with ""; a last axis of 1 replaced), then the n-grams of each row (along the last axis); and the
        rows' lengths (TensorFlow's ragged rows), None where nothing was split."""
        from tapecli.library import tf_strings          # (a deferred family: programs without strings skip it)
        text = Tensor(values)
        if self.standardize in ("lower", "lower_and_strip_punctuation"):
            text = tf_strings.lower(text)
        if self.standardize in ("strip_punctuation", "lower_and_strip_punctuation"):
            text = tf_strings.regex_replace(text, _PUNCTUATION, "")
        values = self._apply_program(self.standardize, text.value) if _is_callable(self.standardize) else text.value
        if self.split is not None and values.ndim > 1:
            if values.shape[-1] != 1:
                raise TdfValueError(f"When using `TextVectorization` to tokenize strings, the input rank must be 1 or "
                                    f"the last shape dimension must be 1. Received: inputs.shape="
                                    f"{tuple(values.shape)} with rank={values.ndim}")
            values = values.reshape(values.shape[:-1])
        if self.split in ("whitespace", "character"):
            cut = tf_strings.split if self.split == "whitespace" else lambda s: tf_strings.unicode_split(s, "UTF-8")
            rows = [cut(Tensor(np.array(s, dtype=object))).value.tolist() for s in values.reshape(-1)]
            lead = values.shape
        else:
            if self.split is not None:
                values = self._apply_program(self.split, values)
            if self.ngrams is None:
                return values, None
            rows, lead = values.reshape(-1, values.shape[-1] if values.ndim else 1).tolist(), values.shape[:-1]
        if self.ngrams is not None:
            rows = [tf_strings.ngrams(Tensor(np.array(row, dtype=object)), self.ngrams).value.tolist() for row in rows]
        return _padded(rows, lead), [len(row) for row in rows]

    def apply(self, interp, x, training=None, **given):
        """Keras's call: the lookup of the tokens; in int mode their indices padded with 0 (the shorter rows, and
        all to ``output_sequence_length`` where it is set) or cut at ``output_sequence_length``."""
        strings = _values(x, "string")
        self.build_for(strings.shape, None)
        tokens, lengths = self.tokens(strings)
        found = self.lookup.apply(interp, Tensor(tokens))
        length = self.output_sequence_length
        if self.ragged and self.split is not None:      # (its rows, cut at output_sequence_length)
            if found.ndim != 2:
                raise TdfValueError(f"TextVectorization: tapecli gives ragged=True's rows of a batch of strings "
                                    f"(rank 1), got rank {strings.ndim}")
            from tapecli.library.tf_ragged import from_tensor
            kept = np.minimum(lengths, found.shape[1] if length is None else length)
            return from_tensor(found, lengths=Tensor(np.asarray(kept, dtype=np.int64)))
        if self.output_mode != "int" or length is None or found.ndim == 0:
            return found
        indices = found.value[..., :length]
        return Tensor(np.pad(indices, [(0, 0)] * (indices.ndim - 1) + [(0, length - indices.shape[-1])]))

    def adapt(self, data, batch_size=None, steps=None):
        self.lookup.reset_state()
        for batch in _batches(data, steps, "string"):
            self.lookup.update_state(self.tokens(batch)[0])
        self.lookup.finalize_state()

    def output_shape(self, shape):
        """Keras's compute_output_shape."""
        if self.output_mode == "int":
            return (shape[0], self.output_sequence_length)
        if self.split is None:
            return self.lookup.output_shape((*shape, 1) if len(shape) <= 1 else shape)
        return self.lookup.output_shape((*shape, None))

    def output_dtype(self, dtype):
        return self.lookup.output_dtype(dtype)

    def methods(self):
        lookup = self.lookup.methods()
        return {**super().methods(), "adapt": self.adapt,
                **{name: lookup[name] for name in ("get_vocabulary", "vocabulary_size", "set_vocabulary")}}

    def config_values(self):
        return {"vocabulary": self.lookup.config_values()["vocabulary"],
                "vocabulary_size": self.lookup.vocabulary_size(), "output_mode": self.output_mode}


LAYERS = [StringLookup, IntegerLookup, TextVectorization]
