"""A program's ``logging`` is CPython's, the run's own: what a program logs is what CPython prints of it, line for
line on standard output and standard error (CPython runs each program as a script, in a process of its own, its
oracle); a run's loggers, handlers and settings are its own and go with it; what would reach files or frames is
refused or shows the program's frames alone."""
from __future__ import annotations

import gc
import logging
import weakref

import pytest

from tapecli import api
from tapecli.errors import TdfError

from python_oracle import script_through_cpython, script_through_tapecli, without_library_frames

PROGRAMS = {
    "basicConfig and module loggers": '''
import logging
logging.basicConfig(level=logging.INFO, format="%(levelname)s:%(name)s:%(message)s")
log = logging.getLogger(__name__)
for epoch in range(3):
    log.info("epoch %d loss %.4f", epoch, 0.5 / (epoch + 1))
logging.warning("careful %s", "now")
log.debug("hidden")
logging.getLogger("a.b").error("child of %r", "a")
print(log.isEnabledFor(logging.DEBUG), log.getEffectiveLevel(), logging.getLevelName(20), logging.getLevelName("ERROR"))
''',
    "basicConfig to stdout, once": '''
import logging, sys
logging.basicConfig(stream=sys.stdout, level=logging.DEBUG, format="%(name)s %(levelname)s %(message)s")
logging.basicConfig(level=logging.ERROR)
logging.debug("kept at %s", logging.getLevelName(logging.getLogger().level))
logging.basicConfig(stream=sys.stdout, level=logging.ERROR, format="new %(message)s", force=True)
logging.warning("dropped")
logging.error("forced")
''',
    "handlers, formatters, propagation": '''
import logging, sys
out = logging.getLogger("train")
handler = logging.StreamHandler(sys.stdout)
handler.setFormatter(logging.Formatter("[%(levelname)-8s] %(name)s %(filename)s:%(lineno)d %(funcName)s: %(message)s"))
out.addHandler(handler)
out.setLevel(logging.DEBUG)
def step(n):
    out.debug("step %d of %r", n, [1, 2])
step(1)
out.propagate = False
step(2)
print(len(out.handlers), out.propagate, out.level, out.parent.name, out.hasHandlers())
out.removeHandler(handler)
out.warning("no handler left: the last resort")
err = logging.StreamHandler()
err.setFormatter(logging.Formatter("{levelname}|{name}|{message}", style="{"))
out.addHandler(err)
out.error("braces %s", "too")
tmpl = logging.StreamHandler(sys.stdout)
tmpl.setFormatter(logging.Formatter("$levelname $message", style="$"))
out.addHandler(tmpl)
out.critical("dollars")
''',
    "a handler that collects records": '''
import logging
class Collect(logging.Handler):
    def __init__(self):
        super().__init__(level=logging.INFO)
        self.records = []
    def emit(self, record):
        self.records.append(record)
collect = Collect()
log = logging.getLogger("collect")
log.addHandler(collect)
log.setLevel(logging.DEBUG)
log.warning("w %d", 1, extra={"user": "bob"})
log.debug("below the handler's level")
log.info("i")
for r in collect.records:
    print(r.getMessage(), r.levelname, r.levelno, r.name, r.lineno, r.funcName, r.args, r.module, r.filename)
print(collect.records[0].user, len(collect.records))
class OnlyInfo(logging.Filter):
    def filter(self, record):
        return record.levelno == logging.INFO
collect.addFilter(OnlyInfo())
log.warning("filtered")
log.info("passes")
print([r.msg for r in collect.records])
adapter = logging.LoggerAdapter(log, {"user": "amy"})
adapter.info("adapted")
print(collect.records[-1].user)
''',
    "exceptions and stacks": '''
import logging
logging.basicConfig(format="%(levelname)s %(message)s")
def divide(a, b):
    return a / b
try:
    divide(1, 0)
except ZeroDivisionError:
    logging.exception("failed")
try:
    {}["k"]
except KeyError as e:
    logging.error("with info", exc_info=e)
    logging.error("with info too", exc_info=True)
try:
    try:
        int("x")
    except ValueError as e:
        raise RuntimeError("wrapped") from e
except RuntimeError:
    logging.getLogger("chain").exception("chained")
logging.warning("stack", stack_info=True)
def helper():
    logging.warning("reported at the caller", stacklevel=2)
helper()
''',
    "levels, disable, names": '''
import logging, sys
logging.basicConfig(stream=sys.stdout, format="%(levelname)s:%(message)s", level=logging.DEBUG)
logging.addLevelName(25, "NOTICE")
logging.log(25, "notice")
print(logging.getLevelName(25), logging.getLevelName(26), logging.getLevelNamesMapping()["NOTICE"])
logging.disable(logging.WARNING)
logging.warning("disabled")
logging.error("shown")
logging.disable(logging.NOTSET)
logging.info("back")
log = logging.getLogger("x")
log.setLevel("ERROR")
print(log.level, log.getEffectiveLevel(), logging.getLogger("x") is log, logging.root is logging.getLogger())
print(sorted(logging.root.manager.loggerDict))
print(logging.getLogger().handlers, log, logging.getLogger("y.z"), logging.StreamHandler())
''',
    "a program's formatter and adapter": '''
import logging, sys, json
class JsonFormatter(logging.Formatter):
    def format(self, record):
        return json.dumps({"level": record.levelname, "msg": record.getMessage(), "line": record.lineno,
                           "fields": sorted(k for k in vars(record) if not k.startswith("_"))[:5]})
class Upper(logging.LoggerAdapter):
    def process(self, msg, kwargs):
        return msg.upper(), kwargs
h = logging.StreamHandler(sys.stdout)
h.setFormatter(JsonFormatter())
log = logging.getLogger("json")
log.addHandler(h)
log.propagate = False
log.warning("hello %s", "you")
Upper(log, {}).error("shout %d", 5)
child = log.getChild("sub")
print(child.name, child.parent is log, child.getEffectiveLevel())
child.critical("from child")
h2 = logging.StreamHandler(sys.stdout)
h2.setFormatter(logging.Formatter("%(levelname)s %(app)s %(message)s", defaults={"app": "demo"}))
h2.setLevel(logging.ERROR)
log.addHandler(h2)
log.warning("only json")
log.error("both")
print(logging.getLevelName(logging.getLogger("json").getEffectiveLevel()), h2.level, h2.name)
print(repr(logging.getLogger("json")), logging.getLogger("json.sub"))
print(logging.Formatter("%(message)s").format(logging.makeLogRecord({"msg": "made %s", "args": ("x",)})))
try:
    logging.Formatter("%(bad")
except ValueError as e:
    print("ValueError", e)
try:
    logging.getLogger().setLevel("LOUD")
except ValueError as e:
    print("ValueError", e)
try:
    logging.Formatter("{x", style="{")
except ValueError as e:
    print("ValueError", e)
root = logging.getLogger()
print(root.handlers, root.level, logging.WARNING, logging.BASIC_FORMAT)
logging.basicConfig(handlers=[logging.StreamHandler(sys.stdout)], format="%(levelname)s|%(message)s")
logging.warning("via handlers=")
print(logging.getHandlerNames() if hasattr(logging, "getHandlerNames") else "no getHandlerNames")  # (3.12)
''',
    "exception groups and a library's frames": '''
import json
import logging
def fail(n):
    raise ValueError(f"bad {n}")
def collect():
    errors = []
    for n in range(2):
        try:
            fail(n) if n else json.loads("{")
        except ValueError as e:
            errors.append(e)
    raise ExceptionGroup("several", errors)
try:
    collect()
except ExceptionGroup:
    logging.exception("group")
try:
    json.loads("[1,")
except json.JSONDecodeError:
    logging.exception("json")
''',
    "a message that does not fit its arguments": '''
import logging
logging.warning("x %d", "y")
print("after")
logging.raiseExceptions = False
logging.warning("x %d", "y")
print("quiet")
''',
}


@pytest.mark.parametrize("source", PROGRAMS.values(), ids=PROGRAMS.keys())
def test_a_programs_logging_prints_what_cpython_prints(source, tmp_path):
    path = tmp_path / "prog.py"
    theirs = script_through_cpython(source, path)
    ours = script_through_tapecli(source, path)
    assert ours == (theirs[0], without_library_frames(theirs[1], str(path)))


def test_two_runs_never_see_each_others_logging_and_the_process_keeps_its_own():
    root, handlers, level = logging.getLogger(), list(logging.getLogger().handlers), logging.getLogger().level
    first = api.run_source('import logging, sys\nlogging.basicConfig(stream=sys.stdout, level=logging.DEBUG)\n'
                           'logging.getLogger("shared").addHandler(logging.NullHandler())\nlogging.disable(10)\n'
                           'logging.addLevelName(5, "TRACE")\nlogging.raiseExceptions = False\n', "one.py")
    assert first.output == []
    second = api.run_source('import logging\nr = logging.getLogger()\nprint(len(r.handlers), r.level)\n'
                            'print(len(logging.getLogger("shared").handlers), logging.getLevelName(5))\n'
                            'logging.debug("x")\nprint(logging.raiseExceptions)\n', "two.py")
    assert second.output == ["0 30", "0 Level 5", "True"]
    assert logging.getLogger() is root and root.handlers == handlers and root.level == level
    assert "shared" not in logging.root.manager.loggerDict and logging.getLevelName(5) == "Level 5"
    assert logging.root.manager.disable == 0 and logging.raiseExceptions


def test_a_runs_logging_goes_with_the_run():
    result = api.run_source('import logging\nlogging.basicConfig()\nlog = logging.getLogger("gone")\n', "prog.py")
    held = weakref.ref(result.scope.vars["log"])
    del result
    gc.collect()
    assert held() is None


def test_a_record_tells_nothing_of_the_machine():
    result = api.run_source("import logging\nr = logging.makeLogRecord({'msg': 'x'})\n"
                            "print(r.process, r.processName, r.pathname)\n", "prog.py")
    assert result.output == ["None MainProcess "]


def test_loggings_own_patterns_only_search():
    """A format check's pattern is a class attribute a program reads: a substitution by it would not be weighed."""
    with pytest.raises(TdfError) as e:
        api.run_source("import logging\np = logging.StrFormatStyle.field_spec\nm = p.match('a.b')\n"
                       "s = p.sub('y' * 10**4, 'x' * 10**4)", "prog.py")
    assert e.value.kind == "AttributeError" and e.value.line == 4


# What TensorFlow 2.21 writes to standard error for this program (its logger's handler; `warn`'s DeprecationWarning,
# shown by CPython as a warning, is left out: the run's warnings are tapecli's).
TF_LOGGER = ('import tensorflow as tf\nl = tf.get_logger()\nl.warning("w %d", 3)\nl.info("i")\nl.setLevel("INFO")\n'
             'l.info("i2")\nl.fatal("f")\nl.error("e %s", "x")\nprint(l.level)\n')
TF_LOGGER_STDERR = ["WARNING:tensorflow:w 3", "INFO:tensorflow:i2", "CRITICAL:tensorflow:f", "ERROR:tensorflow:e x"]


@pytest.mark.parametrize("on_cpython", ["auto", "1"], ids=["interpreter", "cpython"])
def test_tf_get_logger_writes_what_tensorflow_writes_on_both_runners(on_cpython, monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on_cpython)
    printed, written = script_through_tapecli(TF_LOGGER, "prog.py")
    assert (printed, written) == (["20"], TF_LOGGER_STDERR)


@pytest.mark.parametrize("on_cpython", ["auto", "1"], ids=["interpreter", "cpython"])
def test_a_huge_width_in_tf_get_loggers_message_is_a_limit_on_both_runners(on_cpython, monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on_cpython)
    with pytest.raises(TdfError) as e:
        api.run_source('import tensorflow as tf\ntf.get_logger().error("%99999999999d", 1)\n', "prog.py")
    assert e.value.kind == "LimitError" and e.value.line == 2
