class AppError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


class NotFound(AppError):
    pass


def find(d, key):
    try:
        return d[key]
    except KeyError as e:
        raise NotFound(404, f"missing {key}") from e


for k in ["a", "z"]:
    try:
        v = find({"a": 1}, k)
    except AppError as e:
        print("error", type(e).__name__, e.code, str(e), type(e.__cause__).__name__ if False else "cause")
    else:
        print("found", v)
    finally:
        print("done", k)

try:
    int("x")
except (TypeError, ValueError) as e:
    print("value error:", e)

try:
    [][1]
except IndexError as e:
    print(repr(e))

try:
    {}["k"]
except LookupError as e:
    print("lookup", e)


def risky(n):
    if n > 2:
        raise ValueError(f"too big: {n}")
    return n


results = []
for i in range(5):
    try:
        results.append(risky(i))
    except ValueError:
        results.append(None)
        continue
    finally:
        results.append("f")
print(results)

try:
    try:
        1 / 0
    finally:
        print("inner finally")
except ZeroDivisionError as e:
    print("outer", e)

try:
    raise RuntimeError("bad")
except Exception as e:
    print(e.args, str(e))
assert 1 + 1 == 2, "math"
try:
    assert 1 > 2, "not so"
except AssertionError as e:
    print("assertion:", e)

# sys.exc_info() and sys.exception(): the exception being handled, none outside a handler
import sys
print(sys.exc_info(), sys.exception())
try:
    {}["k"]
except KeyError:
    kind, value, tb = sys.exc_info()
    print(kind, repr(value), tb.tb_lineno, type(tb).__name__, sys.exception() is value)
    try:
        1 / 0
    except ZeroDivisionError:
        print(sys.exc_info()[0].__name__)
    print(sys.exc_info()[0].__name__)
print(sys.exc_info())


def cleanup():
    try:
        raise ValueError("inner")
    finally:
        print("finally sees", repr(sys.exc_info()[1]))


try:
    cleanup()
except ValueError as e:
    print("caught", e, sys.exc_info()[1] is e)

# an exception's notes (add_note) read back
noted = ValueError("with notes")
noted.add_note("first note")
noted.add_note("second note")
print(noted.__notes__, getattr(ValueError("none"), "__notes__", "no notes"))

# exit() and quit(), as a script has them from CPython's site module
print(repr(exit), str(quit), type(exit).__name__)
for ender, code in ((exit, 3), (quit, "bye"), (exit, None)):
    try:
        ender(code)
    except SystemExit as e:
        print("SystemExit", repr(e.code))
raise KeyError("last")
