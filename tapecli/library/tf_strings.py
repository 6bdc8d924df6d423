"""tf.strings: TensorFlow's string ops on string tensors (object arrays of bytes, runtime.values.text_array), each
as its C++ kernel computes it. None has a gradient (TensorFlow's string ops have none, and tapes skip them).

The ops that split strings give a dense tensor for one string and a tf.RaggedTensor (tf_ragged.py) for a batch,
as TensorFlow's; the elementwise ops and reduce_join take ragged tensors too (tf_ragged_math.py). Regular
expressions are RE2's in TensorFlow; here CPython's engine runs them on the UTF-8 text, each search bounded in time
(runtime/searches.py): the patterns both engines read alike (RE2 has no backreferences or lookarounds) match
alike."""
from __future__ import annotations

import re

import numpy as np

from tapecli import ops
from tapecli.errors import KernelValueError, ShapeError, TdfTypeError, TdfValueError
from tapecli.interpreter.printing import tf_summary_text
from tapecli.interpreter.registry import builtin
from tapecli.library.core import to_dtype, to_int, to_shape, truth
from tapecli.library.tf_ragged import is_ragged, ragged_input, ragged_rows
from tapecli.library import tf_ragged_math     # (the ops that take the ragged tensors these ops make)
from tapecli.runtime.limits import admit_bytes
from tapecli.runtime.searches import SearchTimer
from tapecli.runtime.values import Tensor, dtype_name, text_array

_OBJECT_BYTES = 33          # what CPython's bytes object holds beside its characters
_size = len                 # (substr's parameter is named len)


def string_values(x, what: str) -> np.ndarray:
    """A string argument's values: an object array of bytes (a Python str or list of them converts)."""
    t = Tensor(text_array(x)) if isinstance(x, (str, bytes, list, tuple)) else ops.to_tensor(x)
    if not t.dtype.hasobject:
        raise KernelValueError(f"cannot compute {what} as input #0(zero-based) was expected to be a string tensor "
                               f"but is a {dtype_name(t.dtype)} tensor")        # (TensorFlow's words)
    return t.value


def _made(values, shape, what: str) -> Tensor:
    """A string tensor of ``values`` (bytes, in order), weighed as the memory its strings take."""
    values = list(values)
    admit_bytes(len(values), sum(len(v) for v in values) + _OBJECT_BYTES * len(values), what, allocated=True)
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return Tensor(out.reshape(shape))


def _each(f, x, what: str) -> Tensor:
    """``f`` of each string of ``x``, a string tensor of x's shape."""
    values = string_values(x, what)
    return _made((f(v) for v in values.reshape(-1)), values.shape, what)


def _utf8_chars(s: bytes) -> int:
    """The UTF-8 characters of ``s`` as TensorFlow counts them: the bytes that do not continue a character."""
    return sum(1 for b in s if b & 0xC0 != 0x80)


@builtin("strings.length")
def length(input, unit="BYTE", name=None):  # noqa: A002 (TensorFlow's parameter names)
    values = string_values(input, "StringLength")
    count = _unit(unit, len, _utf8_chars)
    return Tensor(np.array([count(v) for v in values.reshape(-1)], dtype=np.int32).reshape(values.shape))


def _unit(unit, byte, char):
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise TdfValueError(f"unit must be BYTE or UTF8_CHAR, got {unit!r}")
    return byte if unit == "BYTE" else char


def _case(change: str):
    def convert(input, encoding="", name=None):  # noqa: A002
        if encoding not in ("", "utf-8", "UTF-8", "utf8", "UTF8"):
            raise KernelValueError(f"encoding must be '' or 'utf-8', got {encoding!r}")
        if encoding == "":       # ASCII letters alone, as the kernel's default
            return _each(getattr(bytes, change), input, f"String{change.title()}")
        return _each(lambda s: getattr(s.decode("utf-8", "replace"), change)().encode(), input,
                     f"String{change.title()}")
    convert.__name__ = change
    return convert


lower = builtin("strings.lower")(_case("lower"))
upper = builtin("strings.upper")(_case("upper"))


@builtin("strings.strip")
def strip(input, name=None):  # noqa: A002
    return _each(bytes.strip, input, "StringStrip")       # (ASCII whitespace, as absl's StripAsciiWhitespace)


@builtin("strings.join")
def join(inputs, separator="", name=None):
    if not isinstance(inputs, (list, tuple)):
        raise TdfTypeError("tf.strings.join takes a list of string tensors")
    parts = [string_values(x, "StringJoin") for x in inputs]
    shapes = {p.shape for p in parts if p.ndim}
    if len(shapes) > 1:
        raise ShapeError(f"Input shapes do not match: {' vs. '.join(str(list(s)) for s in shapes)}")
    shape = next(iter(shapes), ())
    sep = _bytes(separator, "separator")
    columns = [np.broadcast_to(p, shape).reshape(-1) for p in parts]
    return _made((sep.join(row) for row in zip(*columns)) if columns else [b""] * int(np.prod(shape)), shape,
                 "tf.strings.join's result")


@builtin("strings.reduce_join")
def reduce_join(inputs, axis=None, keepdims=False, separator="", name=None):
    """The strings joined along ``axis``; of several axes, the first listed varies fastest (TensorFlow's order,
    which for None, every axis from the last, is the row-major order)."""
    values = string_values(inputs, "ReduceJoin")
    listed = list(range(values.ndim - 1, -1, -1)) if axis is None else \
        to_shape(axis if isinstance(axis, (list, tuple, Tensor)) else [axis], negative=True)
    axes = []
    for a in listed:
        if not -values.ndim <= a < max(values.ndim, 1):
            raise KernelValueError(f"Invalid reduction dimension {a} for input with {values.ndim} dimensions")
        if a % max(values.ndim, 1) in axes:
            raise KernelValueError(f"Duplicate reduction dimension {a}")
        axes.append(a % max(values.ndim, 1))
    kept = [d for d in range(values.ndim) if d not in axes]
    rows = np.transpose(values, kept + axes[::-1]).reshape([values.shape[d] for d in kept] + [-1])
    sep = _bytes(separator, "separator")
    shape = tuple(1 if d in axes else values.shape[d] for d in range(values.ndim)) if truth(keepdims) else \
        tuple(values.shape[d] for d in kept)
    return _made((sep.join(row) for row in rows.reshape(-1, rows.shape[-1])), shape, "tf.strings.reduce_join's result")


@builtin("strings.unsorted_segment_join")
def unsorted_segment_join(inputs, segment_ids, num_segments, separator="", name=None):
    values = string_values(inputs, "UnsortedSegmentJoin")
    ids = ops.int_indices(segment_ids, "unsorted_segment_join")
    num = to_int(num_segments, "num_segments")
    if ids.shape != values.shape[:ids.ndim]:
        raise ShapeError(f"segment_ids.shape = {list(ids.shape)} does not prefix data.shape = {list(values.shape)}")
    rows = values.reshape((ids.size, -1))
    segments: list[list] = [[] for _ in range(num)]
    for i, segment in enumerate(ids.reshape(-1)):
        if not 0 <= segment < num:
            if segment < 0:
                continue                # (a negative id drops its row, as the kernel does)
            raise KernelValueError(f"segment_ids[{i}] = {segment} is out of range [0, {num})")
        segments[segment].append(rows[i])
    sep = _bytes(separator, "separator")
    inner = values.shape[ids.ndim:]
    joined = [sep.join(row[j] for row in segment) for segment in segments for j in range(rows.shape[1])]
    return _made(joined, (num, *inner), "tf.strings.unsorted_segment_join's result")


# reduce_join of a ragged tensor joins a ragged dimension's rows by segment (tf_ragged_math.py)
tf_ragged_math.reductions("strings.reduce_join",
                          lambda x, axis, keepdims, separator="": reduce_join(x, axis, keepdims, separator),
                          unsorted_segment_join)


def _bytes(value, what: str) -> bytes:
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, bytes):
        return value
    t = ops.to_tensor(value)
    if t.dtype.hasobject and t.ndim == 0:
        return t.value[()]
    raise TdfTypeError(f"{what} must be a string, got {dtype_name(t.dtype)}")


@builtin("strings.substr")
def substr(input, pos, len, unit="BYTE", name=None):  # noqa: A002
    values = string_values(input, "Substr")
    starts, lengths = (ops.int_indices(v, "substr") for v in (pos, len))
    if starts.shape != lengths.shape:
        raise ShapeError(f"pos and len should have the same shape, got: {list(starts.shape)} vs. "
                         f"{list(lengths.shape)}")
    if starts.ndim and starts.shape != values.shape:
        raise ShapeError(f"pos and input should have the same shape, got: {list(starts.shape)} vs. "
                         f"{list(values.shape)}")
    pieces = _unit(unit, lambda s: s, _characters)
    out = []
    for i, (s, start, size) in enumerate(zip(values.reshape(-1), np.broadcast_to(starts, values.shape).reshape(-1),
                                             np.broadcast_to(lengths, values.shape).reshape(-1))):
        units = pieces(s)
        n = _size(units)
        if not -n <= start <= n:
            raise KernelValueError(f"pos {start} out of range for string b'{s.decode('utf-8', 'replace')}' at "
                                   f"index {i}")
        start = start + n if start < 0 else start
        chosen = units[start:start + max(size, 0)]
        out.append(chosen if isinstance(chosen, bytes) else b"".join(chosen))
    return _made(out, values.shape, "tf.strings.substr's result")


def _characters(s: bytes) -> list[bytes]:
    """``s`` cut into its UTF-8 characters (a byte that begins none stands alone, as TensorFlow's reader takes it)."""
    starts = [i for i, b in enumerate(s) if b & 0xC0 != 0x80] or [0]
    if starts[0]:
        starts.insert(0, 0)
    return [s[a:b] for a, b in zip(starts, starts[1:] + [len(s)]) if a < b]


# ------------------------------------------------------------------ regular expressions

def _pattern(pattern, what: str) -> re.Pattern:
    text = _bytes(pattern, "pattern").decode("utf-8", "surrogateescape")
    try:
        return re.compile(text)
    except re.error as e:
        raise KernelValueError(f"Invalid pattern: {text}, error: {e}") from None


def _search(f, values: np.ndarray, what: str):
    timer = SearchTimer()
    out = []
    for v in values.reshape(-1):
        with timer:
            out.append(f(v.decode("utf-8", "surrogateescape")))
    return out


@builtin("strings.regex_full_match")
def regex_full_match(input, pattern, name=None):  # noqa: A002
    values = string_values(input, "RegexFullMatch")
    found = _pattern(pattern, "RegexFullMatch").fullmatch
    return Tensor(np.array(_search(lambda s: found(s) is not None, values, "RegexFullMatch"),
                           dtype=bool).reshape(values.shape))


_REWRITE = re.compile(r"\\(\d|\\)|\\")


def _template(rewrite: str) -> str:
    """RE2's rewrite string (``\\1``, ``\\0`` the whole match, ``\\\\`` a backslash) as CPython's template."""
    def part(m):
        if m.group(1) is None:
            raise KernelValueError(f"Invalid rewrite pattern: {rewrite}")
        return "\\\\" if m.group(1) == "\\" else f"\\g<{m.group(1)}>"
    return _REWRITE.sub(part, rewrite)


@builtin("strings.regex_replace")
def regex_replace(input, pattern, rewrite, replace_global=True, name=None):  # noqa: A002
    values = string_values(input, "StaticRegexReplace")
    compiled = _pattern(pattern, "StaticRegexReplace")
    template = _template(_bytes(rewrite, "rewrite").decode("utf-8", "surrogateescape"))
    count = 0 if truth(replace_global) else 1
    admit_bytes(values.size, sum(len(v) for v in values.reshape(-1)) * (1 + len(template)),
                "tf.strings.regex_replace's result")
    out = _search(lambda s: compiled.sub(template, s, count), values, "StaticRegexReplace")
    return _made((s.encode("utf-8", "surrogateescape") for s in out), values.shape, "tf.strings.regex_replace's result")


# ------------------------------------------------------------------ numbers and text

_NUMBER_TYPES = ("float32", "float64", "int32", "int64")


@builtin("strings.to_number")
def to_number(string_tensor, out_type=None, name=None):
    values = string_values(string_tensor, "StringToNumber")
    dtype = np.dtype(np.float32) if out_type is None else to_dtype(out_type)
    if dtype_name(dtype) not in _NUMBER_TYPES:
        raise KernelValueError(f"Value for attr 'out_type' of {dtype_name(dtype)} is not in the list of allowed "
                               f"values: float, double, int32, int64")
    read = float if dtype.kind == "f" else _integer
    out = np.empty(values.size, dtype=dtype)
    for i, v in enumerate(values.reshape(-1)):
        try:
            number = read(v.decode("ascii").strip())
            out[i] = number
        except (ValueError, UnicodeDecodeError, OverflowError):
            raise KernelValueError(f"StringToNumberOp could not correctly convert string: "
                                   f"{v.decode('utf-8', 'replace')}") from None
        if dtype.kind == "i" and out[i] != number:
            raise KernelValueError(f"StringToNumberOp could not correctly convert string: {v.decode()}")
    return Tensor(out.reshape(values.shape))


def _integer(text: str) -> int:
    if not re.fullmatch(r"[-+]?\d+", text):
        raise ValueError(text)
    return int(text)


_FILLS = ("", " ", "+", "-", "#", "0")


@builtin("as_string", "strings.as_string")
def as_string(input, precision=-1, scientific=False, shortest=False, width=-1, fill="", name=None):  # noqa: A002
    t = ops.to_tensor(input)
    t = ops.materialize(t) if t.weak else t
    precision, width = to_int(precision, "precision"), to_int(width, "width")
    scientific, shortest = truth(scientific), truth(shortest)
    kind = t.dtype.kind
    if kind == "O":
        return Tensor(t.value.copy())
    if len(fill) > 1:
        raise KernelValueError("Fill string must be one or fewer characters")
    if fill not in _FILLS:
        raise KernelValueError(f'Fill argument not supported: "{fill}"')
    if scientific and shortest:
        raise KernelValueError("Cannot select both scientific and shortest notation")
    if kind != "f" and (precision > -1 or scientific or shortest):
        what = "precision" if precision > -1 else "scientific" if scientific else "shortest"
        raise KernelValueError(f"{what} not supported for datatype {dtype_name(t.dtype)}")
    spec = "%" + fill + (str(width) if width > -1 else "")
    if kind == "f":
        spec += (f".{precision}" if precision > -1 else "") + ("g" if shortest else "e" if scientific else "f")
    elif kind in "iu":
        spec += "d"
    else:
        spec += "s"
    admit_bytes(t.size, t.size * (max(width, 0) + 40 + _OBJECT_BYTES), "tf.strings.as_string's result")
    words = {True: "true", False: "false"}
    return _made(((spec % (words[bool(v)] if kind == "b" else float(v) if kind == "f" else int(v))).encode()
                  for v in t.value.reshape(-1)), t.shape, "tf.strings.as_string's result")


@builtin("strings.format")
def format(template, inputs, placeholder="{}", summarize=3, name=None):  # noqa: A001
    items = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    pieces = template.split(placeholder)
    if len(pieces) - 1 != len(items):
        raise TdfValueError(f"The template expects {len(pieces) - 1} tensors, but the inputs only has "
                            f"{len(items)}. Please ensure the number of placeholders in template matches "
                            f"inputs length.")
    summarize = to_int(summarize, "summarize")
    tensors = [ops.to_tensor(x) for x in items]
    shown = sum(t.size if summarize < 0 else min(t.size, 2 * summarize ** max(t.ndim, 1)) for t in tensors)
    admit_bytes(shown, shown * 32 + len(template), "tf.strings.format's text")   # (before it is written)
    text = pieces[0] + "".join(tf_summary_text(t, summarize) + piece for t, piece in zip(tensors, pieces[1:]))
    return _made([text.encode("utf-8", "surrogateescape")], (), "tf.strings.format's result")


# ------------------------------------------------------------------ splitting and Unicode

def _split_each(input, what: str, pieces, make):  # noqa: A002
    """``pieces(s)`` of each string of ``input``, made a tensor by ``make``: one string's a tensor, a batch's a
    RaggedTensor of one more dimension (its rows ragged), as TensorFlow's."""
    values = string_values(input, what)
    parts = [pieces(v) for v in values.reshape(-1)]
    flat = make([p for part in parts for p in part])
    return ragged_rows(flat, [len(p) for p in parts], values.shape) if values.ndim else flat


def _texts(what: str):
    return lambda items: _made(items, (len(items),), what)


def _codes(items) -> Tensor:
    return Tensor(np.array(items, dtype=np.int32))


def _offsets(items) -> Tensor:
    return Tensor(np.array(items, dtype=np.int64))


@builtin("strings.split")
def split(input, sep=None, maxsplit=-1, name=None):  # noqa: A002
    maxsplit = to_int(maxsplit, "maxsplit")
    separator = None if sep is None else _bytes(sep, "sep") or None
    return _split_each(input, "tf.strings.split", lambda s: s.split(separator, maxsplit),
                       _texts("tf.strings.split's result"))


@builtin("strings.bytes_split")
def bytes_split(input, name=None):  # noqa: A002
    return _split_each(input, "tf.strings.bytes_split", lambda s: [bytes([b]) for b in s],
                       _texts("tf.strings.bytes_split's result"))


_ENCODINGS = {"UTF-8": "utf-8", "UTF8": "utf-8", "UTF-16-BE": "utf-16-be", "UTF-32-BE": "utf-32-be"}


def _codec(encoding, what: str) -> str:
    codec = _ENCODINGS.get(str(encoding).upper())
    if codec is None:
        raise KernelValueError(f"{what}: encoding must be one of {', '.join(_ENCODINGS)}, got {encoding!r}")
    return codec


def _decoded(s: bytes, encoding, errors, replacement_char, what: str) -> list[int]:
    if errors not in ("replace", "ignore", "strict"):
        raise TdfValueError(f"errors must be 'replace', 'ignore' or 'strict', got {errors!r}")
    try:
        text = s.decode(_codec(encoding, what), "strict" if errors == "strict" else "replace")
    except UnicodeDecodeError:
        raise KernelValueError(f"Invalid formatting on input string: {s!r}") from None
    codes = [ord(c) for c in text]
    if errors == "ignore":
        return [c for c in codes if c != 0xFFFD]
    return [to_int(replacement_char, "replacement_char") if c == 0xFFFD else c for c in codes]


def _with_offsets(s: bytes, encoding, errors, replacement_char, what: str) -> list[tuple[int, int]]:
    """Each character's code point and the byte offset it starts at."""
    codec, pairs, at = _codec(encoding, what), [], 0
    for c in _decoded(s, encoding, errors, replacement_char, what):
        pairs.append((c, at))
        at += len(chr(c).encode(codec, "surrogatepass"))
    return pairs


@builtin("strings.unicode_decode")
def unicode_decode(input, input_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                   replace_control_characters=False, name=None):
    return _split_each(input, "tf.strings.unicode_decode",
                       lambda s: _decoded(s, input_encoding, errors, replacement_char, "UnicodeDecode"), _codes)


@builtin("strings.unicode_decode_with_offsets")
def unicode_decode_with_offsets(input, input_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                                replace_control_characters=False, name=None):
    what = "UnicodeDecodeWithOffsets"
    return [_split_each(input, what, lambda s: [c for c, _ in _with_offsets(s, input_encoding, errors,
                                                                            replacement_char, what)], _codes),
            _split_each(input, what, lambda s: [o for _, o in _with_offsets(s, input_encoding, errors,
                                                                            replacement_char, what)], _offsets)]


def _encoded_characters(input_encoding, errors, replacement_char, what: str):
    codec = _codec(input_encoding, what)
    return lambda s: [chr(c).encode(codec) for c in _decoded(s, input_encoding, errors, replacement_char, what)]


@builtin("strings.unicode_split")
def unicode_split(input, input_encoding, errors="replace", replacement_char=65533, name=None):  # noqa: A002
    return _split_each(input, "tf.strings.unicode_split",
                       _encoded_characters(input_encoding, errors, replacement_char, "UnicodeSplit"),
                       _texts("tf.strings.unicode_split's result"))


@builtin("strings.unicode_split_with_offsets")
def unicode_split_with_offsets(input, input_encoding, errors="replace", replacement_char=65533, name=None):  # noqa: A002
    what = "UnicodeSplitWithOffsets"
    return [_split_each(input, what, _encoded_characters(input_encoding, errors, replacement_char, what),
                        _texts("tf.strings.unicode_split's result")),
            unicode_decode_with_offsets(input, input_encoding, errors, replacement_char)[1]]


@builtin("strings.ngrams")
def ngrams(data, ngram_width, separator=" ", pad_values=None, padding_width=None, preserve_short_sequences=False,
           name=None):
    """The n-grams of each row (the last dimension) of ``data``: a tensor of a 1-D tensor's, a RaggedTensor of a
    batch's (a ragged tensor's rows, or a dense tensor's)."""
    widths = [to_int(w, "ngram_width") for w in (ngram_width if isinstance(ngram_width, (list, tuple))
                                                  else [ngram_width])]
    sep = _bytes(separator, "separator")
    if pad_values is None:
        left = right = b""
    elif isinstance(pad_values, (list, tuple)):
        left, right = (_bytes(v, "pad_values") for v in pad_values)
    else:
        left = right = _bytes(pad_values, "pad_values")
    padding = None if padding_width is None else to_int(padding_width, "padding_width")

    def grams_of(values) -> list:
        out = []
        for width in widths:
            pad = 0 if pad_values is None else width - 1 if padding is None else padding
            row = [left] * pad + list(values) + [right] * pad
            count = max(len(row) - width + 1, 0)
            admit_bytes(count, count * (width * (max((len(v) for v in row), default=0) + len(sep)) + _OBJECT_BYTES),
                        "tf.strings.ngrams's result")         # (before the grams are made)
            grams = [sep.join(row[i:i + width]) for i in range(len(row) - width + 1)]
            if not grams and truth(preserve_short_sequences) and len(values):
                grams = [sep.join(row)]
            out += grams
        return out

    made = _texts("tf.strings.ngrams's result")
    if is_ragged(data):
        rows = [grams_of(row.value) for row in ragged_input(data).innermost_rows()]
        return data.with_innermost(ragged_rows(made([g for r in rows for g in r]), [len(r) for r in rows], (0,)))
    values = string_values(data, "StringNGrams")
    if values.ndim == 0:
        raise TdfTypeError("tf.strings.ngrams takes a tensor of strings of rank 1 or more")
    rows = [grams_of(row) for row in values.reshape(-1, values.shape[-1])]
    flat = made([g for r in rows for g in r])       # (a dense batch's rows have as many grams each: dense)
    return ops.reshape(flat, (*values.shape[:-1], len(rows[0]) if rows else 0)) if values.ndim > 1 else flat


@builtin("strings.unicode_encode")
def unicode_encode(input, output_encoding, errors="replace", replacement_char=65533, name=None):  # noqa: A002
    """Each row of code points (the last dimension, or a ragged tensor's rows) as one string."""
    codec = _codec(output_encoding, "UnicodeEncode")
    replacement = chr(to_int(replacement_char, "replacement_char"))

    def encoded(codes) -> bytes:
        return "".join(chr(c) if 0 <= c <= 0x10FFFF and not 0xD800 <= c <= 0xDFFF else replacement
                       for c in (int(v) for v in codes)).encode(codec)

    if is_ragged(input):
        rt = ragged_input(input)
        texts = [encoded(row.value) for row in rt.innermost_rows()]
        result = _made(texts, (len(texts),), "tf.strings.unicode_encode's result")
        return result if rt.ragged_rank == 1 else rt.with_innermost(result)
    t = ops.to_tensor(input)
    if t.dtype.kind not in "iu":
        raise TdfTypeError(f"unicode_encode takes int32 code points, got {dtype_name(t.dtype)}")
    if t.ndim == 0:
        raise TdfTypeError("unicode_encode takes a tensor of code points of rank 1 or more")
    rows = t.value.reshape(-1, t.shape[-1])
    return _made([encoded(row) for row in rows], t.shape[:-1], "tf.strings.unicode_encode's result")


@builtin("strings.unicode_transcode")
def unicode_transcode(input, input_encoding, output_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                      replace_control_characters=False, name=None):
    source, target = _codec(input_encoding, "UnicodeTranscode"), _codec(output_encoding, "UnicodeTranscode")
    replacement = chr(to_int(replacement_char, "replacement_char"))
    return _each(lambda s: s.decode(source, "replace").replace("\ufffd", replacement).encode(target), input,
                 "UnicodeTranscode")


# ------------------------------------------------------------------- CSV

_CSV_TYPES = ("float32", "float64", "int32", "int64", "string")


@builtin("io.decode_csv")
def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, na_value="", select_cols=None,
               name=None):
    """TensorFlow's DecodeCSV: each record (a string tensor's element) split into fields as RFC 4180 reads
    them, each column parsed as its default's dtype (an empty or ``na_value`` field takes the default; a
    default of no elements makes the column required). One tensor of the records' shape per column."""
    cols = None if select_cols is None else [to_int(c, "select_cols") for c in select_cols]
    if cols is not None and any(a >= b for a, b in zip(cols, cols[1:])):
        raise TdfValueError("select_cols is not strictly increasing.")
    if cols is not None and cols and cols[0] < 0:
        raise TdfValueError("select_cols contains negative values.")
    if cols is not None and len(cols) != len(record_defaults):
        raise TdfValueError("Length of select_cols and record_defaults do not match.")
    values = string_values(records, "DecodeCSV")
    defaults = [_csv_default(d) for d in record_defaults]
    delim, na = _text_bytes(field_delim), _text_bytes(na_value)
    if len(delim) != 1:
        raise KernelValueError("field_delim should be only 1 char")
    quoting = truth(use_quote_delim)
    columns = [[] for _ in defaults]
    for i, record in enumerate(values.reshape(-1)):
        fields = _csv_fields(record, delim[0], quoting, cols)
        if len(fields) != len(defaults):
            raise KernelValueError(f"Expect {len(defaults)} fields but have {len(fields)} in record {i}")
        for f, (field, default, column) in enumerate(zip(fields, defaults, columns)):
            if not field or field == na:
                if default.size != 1:
                    raise KernelValueError(f"Field {f} is required but missing in record {i}!")
                column.append(default.value.reshape(-1)[0])
            else:
                column.append(_csv_value(field, default.dtype, f, i))
    out = []
    for default, column in zip(defaults, columns):
        if default.dtype.hasobject:
            out.append(_made(column, values.shape, "DecodeCSV"))
        else:
            out.append(Tensor(np.array(column, dtype=default.dtype).reshape(values.shape)))
    return out


decode_csv.item_lists = True    # (record_defaults's items are a column each: [[0], [0.0]] an int32 and a float32)


def _text_bytes(value) -> bytes:
    return value.encode() if isinstance(value, str) else bytes(value)


def _csv_default(value) -> Tensor:
    """A record default as TensorFlow converts it: a scalar or a vector of at most one element."""
    t = Tensor(text_array(value)) if isinstance(value, (str, bytes)) or (
        isinstance(value, (list, tuple)) and any(isinstance(v, (str, bytes)) for v in value)) else \
        ops.materialize(ops.to_tensor(value))
    name = "string" if t.dtype.hasobject else dtype_name(t.dtype)
    if name not in _CSV_TYPES:
        raise KernelValueError(f"Value for attr 'OUT_TYPE' of {name} is not in the list of allowed values: "
                               f"float, double, int32, int64, string")
    if t.ndim > 1:
        raise KernelValueError("Each record default should be at most rank 1")
    return t


def _csv_value(field: bytes, dtype, f: int, i: int):
    """One field parsed as strings::safe_strto32/64 and safe_strtof/d parse it (spaces around allowed)."""
    if dtype.hasobject:
        return field
    kind = {"int32": "int32", "int64": "int64", "float32": "float", "float64": "double"}[dtype_name(dtype)]
    try:
        text = field.decode("ascii").strip()
        number = _integer(text) if dtype.kind == "i" else float(text)
        if dtype.kind == "i" and not np.iinfo(dtype).min <= number <= np.iinfo(dtype).max:
            raise ValueError(text)
    except (ValueError, UnicodeDecodeError):
        raise KernelValueError(f"Field {f} in record {i} is not a valid {kind}: "
                               f"{field.decode('utf-8', 'replace')}") from None
    return number


def _csv_fields(record: bytes, delim: int, quoting: bool, cols) -> list:
    """The kernel's ExtractFields: the record's fields (only those of ``cols`` when given), line breaks between
    fields skipped, a quoted field's doubled quotes read as one."""
    fields, at, parsed, wanted = [], 0, 0, 0
    size = len(record)
    while at < size:
        if record[at] in b"\r\n":
            at += 1
            continue
        include = cols is None or cols[wanted] == parsed
        field = bytearray()
        if quoting and record[at] == ord('"'):
            at += 1
            while at < size - 1 and (record[at] != ord('"') or record[at + 1] != delim):
                if record[at] != ord('"'):
                    field.append(record[at])
                    at += 1
                else:
                    if record[at + 1] != ord('"'):
                        raise KernelValueError("Quote inside a string has to be escaped by another quote")
                    field.append(ord('"'))
                    at += 2
            if not (at < size and record[at] == ord('"') and (at == size - 1 or record[at + 1] == delim)):
                raise KernelValueError("Quoted field has to end with quote followed by delim or end")
            at += 2
        else:
            while at < size and record[at] != delim:
                if (quoting and record[at] == ord('"')) or record[at] in b"\r\n":
                    raise KernelValueError("Unquoted fields cannot have quotes/CRLFs inside")
                field.append(record[at])
                at += 1
            at += 1
        parsed += 1
        if include:
            fields.append(bytes(field))
            wanted += 1
            if cols is not None and wanted == len(cols):
                return fields
    if size and (cols is None or cols[wanted] == parsed) and record[-1] == delim:
        fields.append(b"")       # a record ending in the delimiter: its last field is empty
    return fields
