"""warnings' filters and records, print redirected, exception chains, __init_subclass__, sliding windows."""
import contextlib
import io
import warnings

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def old_api(x):
    warnings.warn(f"old_api({x}) is deprecated", DeprecationWarning, stacklevel=2)
    return x * 2


with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    warnings.warn("careful")
    old_api(3)
    warnings.warn(RuntimeWarning("an instance"))
print(len(caught), [str(w.message) for w in caught], [w.category.__name__ for w in caught])
print([w.lineno for w in caught][1:], caught[0].lineno > 0)

with warnings.catch_warnings():
    warnings.simplefilter("error", category=UserWarning)
    try:
        warnings.warn("now an error")
    except UserWarning as e:
        print("raised:", e, type(e).__name__)
    warnings.warn("not this one", FutureWarning)     # (shown: not a UserWarning)

with warnings.catch_warnings(record=True) as caught:
    warnings.filterwarnings("ignore", message="quiet")
    warnings.filterwarnings("always", category=UserWarning)
    warnings.warn("QUIET please")
    warnings.warn("loud")
    for _ in range(3):
        warnings.warn("each time")
print([str(w.message) for w in caught])

with warnings.catch_warnings(record=True) as caught:
    warnings.resetwarnings()
    warnings.simplefilter("once")
    for _ in range(3):
        warnings.warn("once only")
print(len(caught))

buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    print("captured", 1, 2, sep="-")
    print("line two")
print(repr(buf.getvalue()))


class ConfigError(Exception):
    pass


def load(key):
    try:
        return {"a": 1}[key]
    except KeyError as e:
        raise ConfigError(f"missing {key}") from e


try:
    load("b")
except ConfigError as e:
    print(repr(e), repr(e.__cause__), e.__suppress_context__, type(e.__context__).__name__)

try:
    try:
        1 / 0
    except ZeroDivisionError:
        raise ValueError("while handling")
except ValueError as e:
    print(repr(e.__context__), e.__cause__, e.__suppress_context__)


class Plugin:
    registry = {}

    def __init_subclass__(cls, name=None, **kwargs):
        super().__init_subclass__(**kwargs)
        Plugin.registry[name or cls.__name__.lower()] = cls


class Resize(Plugin, name="resize"):
    pass


class Crop(Plugin):
    pass


print(sorted(Plugin.registry), Plugin.registry["resize"].__name__)

signal = np.array([1.0, 3.0, 2.0, 5.0, 4.0, 6.0])
windows = sliding_window_view(signal, 3)
print(windows.shape, windows.mean(axis=1), windows.max(axis=1))
image = np.arange(16.0).reshape(4, 4)
patches = sliding_window_view(image, (2, 2))[::2, ::2]
print(patches.reshape(-1, 4).max(axis=1))
try:
    windows[0, 0] = 1.0
except ValueError as e:
    print("ValueError:", e)


# a program's own warnings.showwarning is called with each warning shown (NumPy's too), undone by catch_warnings
def shown_here(message, category, filename, lineno, file=None, line=None):
    print(f"shown: {category.__name__}: {message} (line {lineno}) {type(message).__name__}")


with warnings.catch_warnings():
    warnings.simplefilter("always")
    warnings.showwarning = shown_here
    warnings.warn("custom shown", RuntimeWarning)
    np.array([1.0]) / np.array([0.0])
    with warnings.catch_warnings():
        warnings.showwarning = lambda *parts: print("inner", parts[0])
        warnings.warn("in block")
    warnings.warn("after block", UserWarning)
    with warnings.catch_warnings(record=True) as got:
        warnings.warn("recorded")
    print(len(got), str(got[0].message))


# the program's own sys.stdout: a Tee, a StringIO, contextlib's redirect inside them; print and sys.stdout agree
import sys


class Tee:
    def __init__(self, stream):
        self.stream, self.lines = stream, []

    def write(self, text):
        self.lines.append(text)
        return self.stream.write(text.upper())

    def flush(self):
        pass


before = sys.stdout
tee = Tee(before)
sys.stdout = tee
print("epoch 1 loss 0.5")
with contextlib.redirect_stdout(io.StringIO()) as inner:
    print("hidden")
    print(sys.stdout is inner)
print(sys.stdout is tee)
sys.stdout = before
print("restored", tee.lines, repr(inner.getvalue()), sys.stdout is before)
sys.stdout = captured = io.StringIO()
print("captured")
sys.stdout.write("written\n")
sys.stdout = before
print(repr(captured.getvalue()))

# contextlib.redirect_stderr: the program's sys.stderr is its stream inside, as CPython's (argparse's errors too)
import argparse

errors = io.StringIO()
with contextlib.redirect_stderr(errors):
    print("to stderr", file=sys.stderr)
    sys.stderr.write("written to stderr\n")
    parser = argparse.ArgumentParser(prog="train")
    parser.add_argument("--n", type=int)
    try:
        parser.parse_args(["--n", "x"])
    except SystemExit as e:
        print("exit", e.code)
print(repr(errors.getvalue()))
