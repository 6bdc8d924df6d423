"""tf.strings: TensorFlow's string ops on string tensors (object arrays of bytes, runtime.values.text_array), each
as its C++ kernel computes it. None has a gradient (TensorFlow's string ops have none, and tapes skip them).

Ops whose result is ragged take a scalar here, for which TensorFlow's result is a dense tensor (``split`` of one
string, ``unicode_decode`` of one string); a batch of strings gives a RaggedTensor in TensorFlow, which tapecli
leaves out (library/scope.py). Regular expressions are RE2's in TensorFlow; here CPython's engine runs them on
the UTF-8 text, each search bounded in time (runtime/searches.py): the patterns both engines read alike (RE2 has
no backreferences or lookarounds) match alike."""
from __future__ import annotations

import re

import numpy as np

from tapecli import ops
from tapecli.errors import KernelValueError, ShapeError, TdfTypeError, TdfValueError
from tapecli.interpreter.printing import tf_print_text
from tapecli.interpreter.registry import builtin
from tapecli.library.core import to_dtype, to_int, to_shape, truth
from tapecli.runtime.limits import admit_bytes
from tapecli.runtime.searches import SearchTimer
from tapecli.runtime.values import Tensor, dtype_name, text_array

_RAGGED = "of more than one string is a RaggedTensor in TensorFlow, which tapecli leaves out (its tensors are dense)"
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
    text = pieces[0] + "".join(tf_print_text(t, summarize) + piece for t, piece in zip(tensors, pieces[1:]))
    return _made([text.encode("utf-8", "surrogateescape")], (), "tf.strings.format's result")


# ------------------------------------------------------------------ splitting and Unicode

def _one(input, what: str) -> bytes:  # noqa: A002
    values = string_values(input, what)
    if values.ndim:
        raise TdfTypeError(f"{what} {_RAGGED}", hint="give it one string at a time")
    return values[()]


@builtin("strings.split")
def split(input, sep=None, maxsplit=-1, name=None):  # noqa: A002
    s = _one(input, "tf.strings.split")
    maxsplit = to_int(maxsplit, "maxsplit")
    parts = s.split(None if sep is None else _bytes(sep, "sep") or None, maxsplit)
    return _made(parts, (len(parts),), "tf.strings.split's result")


@builtin("strings.bytes_split")
def bytes_split(input, name=None):  # noqa: A002
    s = _one(input, "tf.strings.bytes_split")
    return _made([bytes([b]) for b in s], (len(s),), "tf.strings.bytes_split's result")


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


@builtin("strings.unicode_decode")
def unicode_decode(input, input_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                   replace_control_characters=False, name=None):
    codes = _decoded(_one(input, "tf.strings.unicode_decode"), input_encoding, errors, replacement_char,
                     "UnicodeDecode")
    return Tensor(np.array(codes, dtype=np.int32))


@builtin("strings.unicode_decode_with_offsets")
def unicode_decode_with_offsets(input, input_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                                replace_control_characters=False, name=None):
    s = _one(input, "tf.strings.unicode_decode_with_offsets")
    codes = _decoded(s, input_encoding, errors, replacement_char, "UnicodeDecodeWithOffsets")
    offsets, at = [], 0
    for c in codes:
        offsets.append(at)
        at += len(chr(c).encode(_codec(input_encoding, "UnicodeDecodeWithOffsets"), "surrogatepass"))
    return [Tensor(np.array(codes, dtype=np.int32)), Tensor(np.array(offsets, dtype=np.int64))]


@builtin("strings.unicode_split")
def unicode_split(input, input_encoding, errors="replace", replacement_char=65533, name=None):  # noqa: A002
    codes = _decoded(_one(input, "tf.strings.unicode_split"), input_encoding, errors, replacement_char,
                     "UnicodeSplit")
    codec = _codec(input_encoding, "UnicodeSplit")
    return _made([chr(c).encode(codec) for c in codes], (len(codes),), "tf.strings.unicode_split's result")


@builtin("strings.unicode_split_with_offsets")
def unicode_split_with_offsets(input, input_encoding, errors="replace", replacement_char=65533, name=None):  # noqa: A002
    codes, offsets = unicode_decode_with_offsets(input, input_encoding, errors, replacement_char)
    codec = _codec(input_encoding, "UnicodeSplitWithOffsets")
    return [_made([chr(c).encode(codec) for c in codes.value], codes.shape, "tf.strings.unicode_split's result"),
            offsets]


@builtin("strings.ngrams")
def ngrams(data, ngram_width, separator=" ", pad_values=None, padding_width=None, preserve_short_sequences=False,
           name=None):
    values = string_values(data, "StringNGrams")
    if values.ndim != 1:
        raise TdfTypeError(f"tf.strings.ngrams of a tensor of rank {values.ndim} {_RAGGED}"
                           if values.ndim else "tf.strings.ngrams takes a 1-D tensor of strings")
    widths = [to_int(w, "ngram_width") for w in (ngram_width if isinstance(ngram_width, (list, tuple))
                                                  else [ngram_width])]
    sep = _bytes(separator, "separator")
    if pad_values is None:
        left = right = b""
    elif isinstance(pad_values, (list, tuple)):
        left, right = (_bytes(v, "pad_values") for v in pad_values)
    else:
        left = right = _bytes(pad_values, "pad_values")
    out = []
    for width in widths:
        pad = 0 if pad_values is None else width - 1 if padding_width is None else to_int(padding_width, "padding_width")
        row = [left] * pad + list(values) + [right] * pad
        count = max(len(row) - width + 1, 0)
        admit_bytes(count, count * (width * (max((len(v) for v in row), default=0) + len(sep)) + _OBJECT_BYTES),
                    "tf.strings.ngrams's result")         # (before the grams are made)
        grams = [sep.join(row[i:i + width]) for i in range(len(row) - width + 1)]
        if not grams and truth(preserve_short_sequences) and values.size:
            grams = [sep.join(row)]
        out += grams
    return _made(out, (len(out),), "tf.strings.ngrams's result")


@builtin("strings.unicode_encode")
def unicode_encode(input, output_encoding, errors="replace", replacement_char=65533, name=None):  # noqa: A002
    t = ops.to_tensor(input)
    if t.dtype.kind not in "iu":
        raise TdfTypeError(f"unicode_encode takes int32 code points, got {dtype_name(t.dtype)}")
    if t.ndim != 1:
        raise TdfTypeError(f"tf.strings.unicode_encode of a tensor of rank {t.ndim}: a batch of rows {_RAGGED}"
                           if t.ndim > 1 else "unicode_encode takes a 1-D tensor of code points")
    codec = _codec(output_encoding, "UnicodeEncode")
    replacement = chr(to_int(replacement_char, "replacement_char"))
    text = "".join(chr(c) if 0 <= c <= 0x10FFFF and not 0xD800 <= c <= 0xDFFF else replacement
                   for c in (int(v) for v in t.value))
    return _made([text.encode(codec)], (), "tf.strings.unicode_encode's result")


@builtin("strings.unicode_transcode")
def unicode_transcode(input, input_encoding, output_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                      replace_control_characters=False, name=None):
    source, target = _codec(input_encoding, "UnicodeTranscode"), _codec(output_encoding, "UnicodeTranscode")
    replacement = chr(to_int(replacement_char, "replacement_char"))
    return _each(lambda s: s.decode(source, "replace").replace("\ufffd", replacement).encode(target), input,
                 "UnicodeTranscode")
