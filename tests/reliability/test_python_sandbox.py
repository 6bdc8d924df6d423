"""The guards of a Python program run by CPython (tapecli/execution): every way out of the sandbox is refused
with exit 3 and a message naming it, every limit holds through C-level consumers, operators and NumPy, and two
runs in one process never see each other."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tapecli import api, execution
from tapecli.errors import LimitError, TdfError
from tapecli.runtime.limits import Limits

from python_oracle import through_cpython

# a frame of the program's as traceback.walk_tb yields it (run_traceback.FrameView)
_WALKED = ("import traceback\ntry:\n    1 / 0\nexcept Exception as e:\n"
           "    for f, n in traceback.walk_tb(e.__traceback__):\n        x = ")
ESCAPES = {
    "a function's code replaced": "def f():\n    pass\ng = lambda: 1\nf.__code__ = g.__code__",
    "a builtin renamed": "print.__name__ = 'x'",
    "dunder chain": "x = ().__class__.__base__.__subclasses__()",
    "getattr": "x = getattr(1, '__class__')\ny = getattr(x, '__subclasses__')",
    "function globals": "f = lambda: 0\ng = f.__globals__",
    "defaults of a library function": "import json\nd = json.dumps.__kwdefaults__",
    "defaults of a library method": "import random\nd = random.Random().choices.__defaults__",
    "closure of a library function": "import functools\nc = functools.lru_cache(maxsize=2).__closure__",
    "private of an ArgumentParser": "import argparse\np = argparse.ArgumentParser()\nr = p._registries",
    "frame": "g = (x for x in [1])\nf = g.gi_frame",
    "traceback": "try:\n    1 / 0\nexcept Exception as e:\n    t = e.__traceback__.tb_frame",
    "str.format field": "s = '{0.__class__.__base__}'.format(1)",
    "str.format unbound": "s = str.format('{0.__class__.__subclasses__}', 1)",
    "format_map": "s = '{x.__class__.__base__}'.format_map({'x': 1})",
    "string.Formatter": "import string\ns = string.Formatter().format('{0.__class__.__base__}', 1)",
    "attrgetter": "import operator\ng = operator.attrgetter('__class__.__base__')(1)",
    "methodcaller": "import operator\ng = operator.methodcaller('__subclasses__')(object)",
    "vars of a class": "d = vars(type)",
    "module reaching sys": "import dataclasses\ns = dataclasses.sys",
    "module reaching sys again": "import statistics\nw = statistics.sys",
    "os files": "import os\nos.listdir('.')",
    "os processes": "import os\nos.system('true')",
    "os.path files": "import os.path\nos.path.exists('/etc/passwd')",
    "os.path home": "from os import path\npath.expanduser('~')",
    "os module of os": "import os\nos.sys",
    "import subprocess": "import subprocess",
    "star import of a module left out": "from pylab import *\nx = linspace(0, 1, 3)",
    "zlib's compression": "import zlib\nb = zlib.decompress(zlib.compress(b'a'))",
    "import sys": "from sys import modules",
    "sys frames": "import sys\nf = sys._getframe",
    "sys settrace": "import sys\nsys.settrace(None)",
    "time's C clock": "import time\nt = time.clock_gettime(0)",
    "relative import": "from . import x",
    "numpy load": "import numpy as np\nnp.load('x.npy')",
    "numpy lib": "import numpy as np\nnp.lib.format",
    "numpy ctypeslib": "import numpy\nnumpy.ctypeslib",
    "numpy info importing a module": "import numpy as np\nnp.info('x', toplevel='antigravity')",
    "array tofile": "import numpy as np\nnp.zeros(2).tofile('x')",
    "masked array dump": "import numpy as np\nnp.ma.array([1.0]).dump('x')",
    "an array subclass's dump": "import numpy as np\nclass A(np.ndarray):\n    pass\nnp.zeros(2).view(A).dump('x')",
    "dump set on a class": "import numpy as np\nclass A(np.ndarray):\n    pass\nA.dump = np.ndarray.dump",
    "numpy.ma loads": "import numpy.ma as ma\nma.loads(b'')",
    "numpy.ma load": "from numpy.ma import load",
    "array ctypes": "import numpy as np\np = np.zeros(2).ctypes",
    "bit generator ctypes": "import numpy as np\np = np.random.default_rng().bit_generator.ctypes",
    # an annotation string is evaluated by the run's evaluator, never by eval: no call, no private or dunder name,
    # attributes read through the guard, no library's namespace
    "typing hints running code": "import typing\ndef f(x: '__import__(\"os\").system(\"true\")'):\n    pass\n"
                                 "h = typing.get_type_hints(f)",
    "typing hints of a dunder attribute": "import typing\ndef f(x: 'f.__globals__'):\n    pass\n"
                                          "h = typing.get_type_hints(f)",
    "typing hints of the run's builtins": "import typing\ndef f(x: '__builtins__'):\n    pass\nh = typing.get_type_hints(f)",
    "typing hints of a nested forward reference": "import typing\ndef f(x: typing.List['f.__code__']):\n    pass\n"
                                                  "h = typing.get_type_hints(f)",
    "typing hints in a library's namespace": "import typing\nr = typing.ForwardRef('sys', module='typing')\n"
                                             "def f(x: typing.List[r]):\n    pass\nh = typing.get_type_hints(f)",
    "open": "open('/etc/passwd')",
    "eval": "eval('1')",
    "exec": "exec('x = 1')",
    "compile": "compile('1', 'f', 'eval')",
    "globals": "g = globals()",
    # locals() is a function's snapshot; at module and class level it would be the namespace, the run's names in it
    "locals at module level": "g = locals()",
    "locals in a class body": "class A:\n    g = locals()",
    "__import__": "m = __import__('os')",
    "__build_class__": "b = __build_class__",
    "change a library class": "import random\nrandom.Random.random = None",
    "setattr on a type": "setattr(int, 'x', 1)",
    "a library class while a class statement runs": "class A:\n    def __init_subclass__(cls):\n        int.x = 1\n"
                                                     "class B(A):\n    pass",
    "a type of the same name while its class statement runs": "class A:\n    def __init_subclass__(cls):\n"
                                                              "        setattr(type(cls), 'x', 1)\nclass B(A):\n"
                                                              "    pass",
    "private of a library object": "import random\nr = random.Random()\nx = r._randbelow",
    "catch the refusal": "try:\n    import subprocess\nexcept BaseException:\n    pass\nx = 1",
    "warnings reading a file": "import warnings\ns = warnings.formatwarning('m', UserWarning, '/etc/passwd', 1)",
    "warnings showing a file's line": "import warnings\nwarnings.showwarning('m', UserWarning, '/etc/passwd', 1)",
    "warn_explicit": "import warnings\nwarnings.warn_explicit('m', UserWarning, '/etc/passwd', 1)",
    "argparse reading a file": "import argparse\np = argparse.ArgumentParser(fromfile_prefix_chars='@')\n"
                               "p.add_argument('x', nargs='*')\na = p.parse_args(['@/etc/hostname'])",
    "argparse's prefix set later": "import argparse\np = argparse.ArgumentParser()\np.fromfile_prefix_chars = '@'\n"
                                   "p.add_argument('x', nargs='*')\na = p.parse_args(['@/etc/hostname'])",
    "numpy's install path": "import numpy as np\ns = np.get_include()",
    "numpy lib's files": "from numpy.lib import npyio",
    "numpy.char's unbounded format": "import numpy as np\nx = np.char.mod(np.array(['%d']), 3)",
    "numpy.strings' unbounded table": "import numpy as np\nx = np.strings.translate(np.array(['a']), {97: 'b'})",
    "csv's process-wide dialects": "import csv\ncsv.register_dialect('x', delimiter=';')",
    "calendar's process-wide weekday": "import calendar\ncalendar.setfirstweekday(6)",
    "calendar's locale": "import calendar\nc = calendar.LocaleTextCalendar()",
    "a match's untimed pattern": "import re\np = re.match('a', 'a').re",
    "a match's pattern by getattr": "import re\np = getattr(re.match('a', 'a'), 're')",
    "re's untimed scanner": "import re\ns = re.Scanner",
    # Python's attribute access itself (object.__setattr__ of a frozen dataclass, super().__setattr__) asks the guard
    "object.__getattribute__": "f = lambda: 0\ng = object.__getattribute__(f, '__globals__')",
    "object.__getattribute__ of a class": "g = object.__getattribute__(int, '__subclasses__')",
    "super().__getattribute__": "class A:\n    def f(self):\n        return super().__getattribute__('__class__')"
                                ".__base__.__subclasses__()\nA().f()",
    "super() of a function": "def f():\n    pass\ng = super(type(f), f).__getattribute__('__code__')",
    "object.__setattr__ of a library object": "import sys\nobject.__setattr__(sys.stdout, '_write', print)",
    "object.__setattr__ of a function": "f = lambda: 0\nobject.__setattr__(f, '__code__', None)",
    "object.__delattr__": "import sys\nobject.__delattr__(sys.stdout, '_write')",
    "shlex's standard input": "import shlex\ns = shlex.shlex()",
    "hashlib's file objects": "import hashlib\nd = hashlib.file_digest",
    "base64's file objects": "import base64\nbase64.decode",
    "an array's file": "from array import array\narray('b').tofile(None)",
    "numpy.rec's files": "import numpy as np\nnp.rec.fromfile",
    "numpy's text reader of a path": "import numpy as np\nnp.loadtxt('data.csv')",
    "numpy's reader of a path-like": "import numpy as np\nclass P:\n    def __fspath__(self):\n        return 'x'\n"
                                     "np.genfromtxt(P())",
    "numpy's writer of a path": "import numpy as np\nnp.save('x.npy', np.ones(2))",
    "numpy's pickles, loaded": "import io\nimport numpy as np\nnp.load(io.BytesIO(b'x'), allow_pickle=True)",
    "numpy's pickles, loaded by place": "import io\nimport numpy as np\nnp.load(io.BytesIO(b'x'), None, True)",
    "numpy's pickles, written": "import io\nimport numpy as np\nnp.save(io.BytesIO(), np.ones(2), True)",
    "logging: a file handler": "import logging\nlogging.FileHandler('x.log')",
    "logging: basicConfig to a file": "import logging\nlogging.basicConfig(filename='x.log')",
    "logging.handlers": "import logging.handlers",
    "logging.config": "import logging.config",
    "logging's config as a name": "import logging\nc = logging.config",
    "logging.captureWarnings": "import logging\nlogging.captureWarnings(True)",
    "logging's sys": "import logging\ns = logging.sys",
    "logging's frames": "import logging\nf = logging.currentframe()",
    "logging: a logging function's globals": "import logging\ng = logging.Logger.info.__globals__",
    "logging: a record's traceback's frame": "import logging\nclass H(logging.Handler):\n    def emit(self, record):\n"
                                             "        self.f = record.exc_info[2].tb_frame\nlogging.getLogger().addHandler(H())\n"
                                             "try:\n    1 / 0\nexcept Exception:\n    logging.exception('x')",
    "traceback: a walked frame's frame": _WALKED + "f._frame",
    "traceback: a walked frame's code": _WALKED + "f.f_code",
    "traceback: a walked frame's globals": _WALKED + "f.f_globals",
    "traceback: a walked frame's caller": _WALKED + "f.f_back",
    "traceback: a traceback's next": "try:\n    1 / 0\nexcept Exception as e:\n    t = e.__traceback__.tb_next",
    "traceback: a frame's locals": "import traceback\ns = traceback.extract_stack()\n"
                                   "s = traceback.StackSummary.extract(traceback.walk_stack(None), capture_locals=True)",
    "traceback: clearing frames": "import traceback\ntry:\n    1 / 0\nexcept Exception as e:\n"
                                  "    traceback.clear_frames(e.__traceback__)",
    "traceback's linecache": "import traceback\nc = traceback.linecache",
    "traceback's sys": "import traceback\ns = traceback.sys",
    "traceback: a function's globals": "import traceback\ng = traceback.print_exc.__globals__",
    "logging: a brace format's attribute": "import logging, sys\nh = logging.StreamHandler(sys.stdout)\n"
                                           "h.setFormatter(logging.Formatter('{msg.__init__.__globals__}', style='{'))\n"
                                           "logging.getLogger().addHandler(h)\nlogging.warning('x')",
    "logging: a handler's lock's internals": "import logging\nl = logging.Handler().lock._at_fork_reinit",
    # matplotlib's stand-in (run_matplotlib.py), in each way a program imports it
    "matplotlib: a pyplot function's globals": "import matplotlib.pyplot as plt\ng = plt.plot.__globals__",
    "matplotlib: a figure method's globals": "import matplotlib.pyplot as plt\nfig = plt.figure()\n"
                                             "g = type(fig).__init__.__globals__",
    "matplotlib: pyplot's dictionary": "from matplotlib import pyplot as plt\nd = plt.__dict__",
    "matplotlib: pyplot's loader": "import matplotlib.pyplot as plt\nl = plt.__loader__",
    "matplotlib: pyplot's spec": "import matplotlib.pyplot\ns = matplotlib.pyplot.__spec__",
    "matplotlib: vars of pyplot": "import matplotlib as mpl\nv = vars(mpl.pyplot)",
    "matplotlib: the module behind its view": "import matplotlib as mpl\nm = mpl._own",
    "matplotlib: a module's attribute hook": "import matplotlib as mpl\nh = mpl.__getattr__",
    "matplotlib: a stand-in's attribute hook": "import matplotlib.pyplot as plt\nh = plt.gca().__getattr__",
    "matplotlib: a stand-in's state": "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\ns = ax._cell",
    "matplotlib: a stand-in class's dictionary": "import matplotlib.pyplot as plt\nd = type(plt.gca()).__dict__",
    "matplotlib: an unknown method's globals": "import matplotlib.pyplot as plt\n"
                                               "g = plt.gca().anything.__init__.__globals__",
    "matplotlib: a pyplot function's closure": "import matplotlib.pyplot as plt\nc = plt.gcf.__closure__",
    "matplotlib: a pyplot function's code": "import matplotlib.pyplot as plt\nc = plt.subplots.__code__",
    "matplotlib: a submodule's class's globals": "from matplotlib.figure import Figure\ng = Figure.gca.__globals__",
    "matplotlib: a submodule's bound function's owner": "import matplotlib.style\no = matplotlib.style.use.__self__",
    "matplotlib: a file": "import matplotlib.pyplot as plt\nplt.savefig('x.png')\nf = open('x.png')",
}


def _run(source, **limits):
    return api.run_source(source, "prog.py", api.Options(limits=Limits(**limits)))


@pytest.mark.parametrize("source", ESCAPES.values(), ids=ESCAPES.keys())
def test_every_way_out_is_refused(source):
    assert execution.python_only(source, "prog.py") is not None
    with pytest.raises(TdfError) as e:
        _run(source)
    assert e.value.kind in ("NameError", "SyntaxError"), e.value
    assert e.value.line is not None


LIMITED = {
    "endless loop": "while True:\n    pass",
    "caught limit": "while True:\n    try:\n        while True:\n            pass\n    except BaseException:\n        pass",
    "endless C consumer": "import itertools\nx = list(itertools.repeat(1))",
    "counted forever": "import itertools\nx = sum(itertools.count())",
    "sum of a huge range": "x = sum(range(10**12))",
    "list of a huge range": "x = list(range(10**10))",
    "iter with a sentinel": "x = [*iter(int, 1)]",
    "repeated list": "x = [0] * 10**10",
    "repeated string": "x = 'ab' * 10**10",
    "huge power": "x = 2 ** (10 ** 10)",
    "huge pow()": "x = pow(3, 10 ** 10)",
    "huge shift": "x = 1 << 10 ** 11",
    "bytes": "x = bytes(10**11)",
    "join": "x = ('x' * 10**5).join(['a'] * 10**5)",
    "padding": "x = 'a'.ljust(10**11)",
    "numpy full": "import numpy as np\nx = np.full((20000, 20000), 1.0)",
    "numpy arange": "import numpy as np\nx = np.arange(0, 1, 1e-12)",
    "numpy repeat": "import numpy as np\nx = np.repeat(np.ones(10), 10**8)",
    "numpy choice": "import numpy as np\nx = np.random.choice(10**9, 3, replace=False)",
    "numpy astype": "import numpy as np\nx = np.zeros(10).astype('U100000000')",
    "numpy tolist": "import numpy as np\nx = np.zeros(10**8 // 2).tolist()",
    # (a count of bins is what NumPy makes, whatever the data: these ran for minutes)
    "numpy histogram's bins": "import numpy as np\nc, e = np.histogram(np.arange(10.0), bins=10**9)",
    "numpy histogram2d's bins": "import numpy as np\nx = np.arange(3.0)\nh = np.histogram2d(x, x, bins=10**5)",
    "numpy bincount": "import numpy as np\nx = np.bincount([10**10])",
    "numpy meshgrid": "import numpy as np\nx = np.meshgrid(np.arange(20000), np.arange(10000))",
    "numpy indices": "import numpy as np\nx = np.indices((20000, 10000))",
    "a program's endless stack for traceback": "import traceback\nclass F:\n    def __init__(self):\n"
                                                "        for name in ('f_back', 'f_code'):\n"
                                                "            vars(self)[name] = self\n"
                                                "        vars(self).update(f_lineno=1, f_globals={}, co_filename='x', "
                                                "co_name='f')\ns = traceback.format_stack(F())",
    "a logged message's width": "import logging\nlogging.warning('%999999999999d', 1)",
    "numpy broadcast": "import numpy as np\nx = np.ones((1, 10**5)) * np.ones((10**5, 1))",
    "struct's padding": "import struct\nb = struct.pack('1000000000x')",
    "a Struct's padding": "import struct\nb = struct.Struct('1000000000x').pack()",
    "repeated array": "from array import array\nx = array('d', [0.0]) * 10**10",
    "array of a huge range": "from array import array\nx = array('b', range(10**10))",
    "array of an endless iterator": "import itertools\nfrom array import array\nx = array('b', itertools.repeat(1))",
    "a buffer's items as a list": "x = memoryview(bytes(10**8)).tolist()",
    "record array's shape": "import numpy as np\nx = np.rec.array(None, shape=10**9, formats='f8,i8')",
    "a Template's substitution": "import string\nt = string.Template('$a' * 10000)\ns = t.pattern.sub('y' * 10**5, t.template)",
    "a Template's values": "import string\ns = string.Template('$a' * 10000).substitute(a='y' * 10**5)",
    "a substitution function's pieces": "import re\ny = 'y' * 10**5\ns = re.sub('a', lambda m: y, 'a' * 10**4)",
    "deep recursion": None,
}


@pytest.mark.parametrize("source", [s for s in LIMITED.values() if s], ids=[k for k, s in LIMITED.items() if s])
def test_every_limit_holds(source):
    with pytest.raises(LimitError):
        _run(source, max_steps=10**6, max_memory=200 << 20)


def test_sparse_grids_are_weighed_as_the_small_arrays_they_are():
    """meshgrid(sparse=True) and indices(sparse=True) make one array per axis, of that axis's length: a grid whose
    dense form would be over --max-elements runs (its dense form is refused: LIMITED)."""
    scope = _run("import numpy as np\nm = np.meshgrid(np.arange(20000), np.arange(10000), sparse=True)\n"
                 "i = np.indices((20000, 10000), sparse=True)\nshapes = [a.shape for a in (*m, *i)]").scope.vars
    assert scope["shapes"] == [(1, 20000), (10000, 1), (20000, 1), (1, 10000)]


def test_recursion_ends_as_python_says():
    with pytest.raises(TdfError) as e:
        _run("def f(n):\n    return f(n + 1)\nf(0)")
    assert e.value.kind == "RecursionError"
    # CPython's message where the program's own calls reach the limit, not a guard's comparison's
    caught = _run("def f(n):\n    return f(n + 1)\ntry:\n    f(0)\nexcept RecursionError as e:\n    m = str(e)")
    assert caught.scope.vars["m"] == "maximum recursion depth exceeded"
    assert _run("def f(n):\n    return 0 if n == 0 else 1 + f(n - 1)\nx = f(900)").scope.vars["x"] == 900


def test_a_program_sets_its_recursion_limit_within_the_runs_room():
    """sys.setrecursionlimit(10**6) before a search a few hundred frames deep runs; the program recurses no deeper
    than the run lets it (CPython's 1,000, or --max-depth), warned, and the process's limit comes back."""
    before = sys.getrecursionlimit()
    source = ("import sys\nsys.setrecursionlimit(10**6)\nasked = sys.getrecursionlimit()\n"
              "def f(n):\n    return 0 if n == 0 else 1 + f(n - 1)\nx = f(900)\ntry:\n    f(5000)\n"
              "except RecursionError as e:\n    m = str(e)\nsys.setrecursionlimit(50)\ntry:\n    f(60)\n"
              "except RecursionError as e:\n    low = str(e)\ny = f(40)")
    result = _run(source)
    got = {k: result.scope.vars[k] for k in ("asked", "x", "m", "low", "y")}
    assert got == {"asked": 10**6, "x": 900, "m": "maximum recursion depth exceeded",
                   "low": "maximum recursion depth exceeded", "y": 40}
    assert any("sys.setrecursionlimit(1000000)" in w["message"] and w["line"] == 2 for w in result.warnings)
    assert _run("import sys\nsys.setrecursionlimit(10**6)\ndef f(n):\n    return 0 if n == 0 else 1 + f(n - 1)\n"
                "x = f(3000)", max_depth=5000).scope.vars["x"] == 3000
    assert sys.getrecursionlimit() == before


def test_a_program_names_its_own_functions():
    source = ("def make(q):\n    def loss(a):\n        return a * q\n    loss.__name__ = f'pinball_{q}'\n"
              "    loss.__qualname__, loss.__doc__, loss.__defaults__ = 'l', 'doc', None\n    return loss\n"
              "f = make(3)\nnames = (f.__name__, f.__qualname__, f.__doc__, f(2))")
    assert _run(source).scope.vars["names"] == ("pinball_3", "l", "doc", 6)


def test_a_programs_own_dump_method_and_descriptors_are_its_own():
    source = ("class Field:\n    def __set_name__(self, owner, name):\n        self.name = '_' + name\n"
              "    def __get__(self, obj, kind=None):\n        return getattr(obj, self.name)\n"
              "    def __set__(self, obj, value):\n        setattr(obj, self.name, value)\n"
              "class Positive(Field):\n    def __set__(self, obj, value):\n        super().__set__(obj, abs(value))\n"
              "class Serializer:\n    size = Positive()\n    def dump(self, x):\n        return repr(x)\n"
              "s = Serializer()\ns.size = -3\nout = s.dump([s.size])\ns.tofile = 'mine'\nmine = s.tofile")
    scope = _run(source).scope.vars
    assert (scope["out"], scope["mine"]) == ("[3]", "mine")


def test_a_programs_exception_is_its_own_class_at_its_line():
    with pytest.raises(TdfError) as e:
        _run("class Oops(ValueError):\n    pass\n\nraise Oops('bad thing')")
    assert (e.value.kind, e.value.message, e.value.line) == ("Oops", "bad thing", 4)


def test_two_runs_never_see_each_other():
    first = _run("import random, numpy as np\nimport math\nmath.tau = 1\nrandom.seed(5)\nnp.random.seed(5)\n"
                 "np.set_printoptions(precision=1)\nnp.seterr(all='raise')\na = random.random()\n")
    with pytest.raises(TdfError) as e:
        _run("import numpy as np\nnp.seterr(all='raise')\nx = np.float64(1.0) / np.float64(0.0)")
    assert e.value.kind == "FloatingPointError"
    second = _run("import random, math, numpy as np\nt = math.tau\nb = random.random()\nc = str(np.array([0.123]))\n"
                  "d = np.float64(1.0) / np.float64(0.0)")
    assert second.scope.vars["t"] != 1
    assert second.scope.vars["b"] == _run("import random\nb = random.random()").scope.vars["b"]
    assert first.scope.vars["a"] != second.scope.vars["b"]
    assert second.scope.vars["c"] == "[0.123]"
    assert second.scope.vars["d"] == float("inf")
    assert any("divide by zero" in w["message"] for w in second.warnings)


def test_a_runs_polynomial_print_style_goes_with_it():
    """np.polynomial.set_default_printstyle changes a class attribute of NumPy's: the next run prints as a fresh
    CPython does (unicode)."""
    first = _run("import numpy as np\nnp.polynomial.set_default_printstyle('ascii')\n"
                 "s = str(np.polynomial.Polynomial([1, 2]))")
    second = _run("import numpy as np\ns = str(np.polynomial.Polynomial([1, 2]))")
    assert (first.scope.vars["s"], second.scope.vars["s"]) == ("1.0 + 2.0 x", "1.0 + 2.0\u00b7x")


def test_a_runs_masked_print_option_goes_with_it():
    first = _run("import numpy as np\nnp.ma.masked_print_option.set_display('?')\n"
                 "s = str(np.ma.array([1, 2], mask=[0, 1]))")
    second = _run("import numpy as np\ns = str(np.ma.array([1, 2], mask=[0, 1]))")
    assert (first.scope.vars["s"], second.scope.vars["s"]) == ("[1 ?]", "[1 --]")


def test_a_run_makes_its_own_module_state_for_the_modules_it_imports(monkeypatch):
    """A run's own values for a module's state (execution/state.py) are made when the program first reaches that
    module, and are the same as made at the run's start: NumPy's generator from its seed, string's and re's one
    regex module."""
    from tapecli.execution import state
    made = []
    real = state._numpy_random
    monkeypatch.setattr(state, "_numpy_random", lambda: made.append(1) or real())
    assert _run("import random\nb = random.random()").scope.vars["b"] is not None and made == []
    scope = _run("import numpy as np\na = np.random.rand()\nnp.random.seed(3)\nb = np.random.rand()").scope.vars
    assert made == [1]
    assert scope["a"] == np.random.RandomState(state.NUMPY_RANDOM_SEED).rand()
    assert scope["b"] == np.random.RandomState(3).rand()
    scope = _run("import re, string\nt = string.Template('$x').substitute(x=re.escape('a.b'))").scope.vars
    assert scope["t"] == "a\\.b"


def test_a_from_import_imports_an_allowed_submodule_not_yet_imported(monkeypatch):
    """``from numpy.lib import recfunctions`` in a fresh process: numpy.lib holds no ``recfunctions`` until the
    submodule is imported, and CPython's from-list imports it."""
    import numpy.lib
    monkeypatch.delitem(sys.modules, "numpy.lib.recfunctions", raising=False)
    monkeypatch.delattr(numpy.lib, "recfunctions", raising=False)
    scope = _run("from numpy.lib import recfunctions as rfn\nimport numpy as np\n"
                 "z = np.zeros(2, dtype=[('x', float), ('y', float)])\n"
                 "u = rfn.structured_to_unstructured(z).shape\nname = np.lib.recfunctions.__name__").scope.vars
    assert (scope["u"], scope["name"]) == ((2, 2), "numpy.lib.recfunctions")


def test_the_cli_reports_a_python_error_with_exit_3_and_json():
    done = subprocess.run([sys.executable, "-m", "tapecli", "run", "--json", "-"], input="x = {}['k']\n",
                          capture_output=True, text=True)
    assert done.returncode == 3
    error = json.loads(done.stdout)["error"]
    assert (error["kind"], error["message"], error["line"]) == ("KeyError", "'k'", 1)


def test_argparse_reads_no_arguments():
    result = _run("import argparse\np = argparse.ArgumentParser()\np.add_argument('--n', type=int, default=3)\n"
                  "n = p.parse_args().n")
    assert result.scope.vars["n"] == 3


def test_argparse_writes_where_cpythons_does(tmp_path):
    """Help to standard output or the file given (a redirect's, a StringIO), usage and errors to standard error."""
    sys.path.insert(0, str(Path(__file__).parents[1]))
    from python_oracle import script_through_cpython, script_through_tapecli
    source = ("import argparse, contextlib, io, sys\np = argparse.ArgumentParser(prog='train')\n"
              "p.add_argument('--opt', choices=['sgd', 'adam'], default='adam')\np.print_usage()\nbuf = io.StringIO()\n"
              "p.print_help(file=buf)\nprint(len(buf.getvalue().splitlines()))\n"
              "with contextlib.redirect_stdout(io.StringIO()) as out:\n    p.print_help()\nprint(out.getvalue().split()[:2])\n"
              "try:\n    p.parse_args(['--opt', 'x'])\nexcept SystemExit as e:\n    print('exit', e.code)\n"
              "p.print_usage(file=sys.stderr)\np.exit(0, 'bye\\n')\n")
    path = tmp_path / "prog.py"
    assert script_through_tapecli(source, path) == script_through_cpython(source, path)


def test_an_unbound_name_is_pythons_name_error():
    """A Python program that names something it never binds is still Python: NameError when the line runs,
    with the lines before it printed, as CPython runs it (not a TDF syntax error)."""
    sys.path.insert(0, str(Path(__file__).parents[1]))
    from python_oracle import agree
    agree("print('before')\ntry:\n    total = undefined_thing + 1\nexcept NameError as e:\n    print(type(e).__name__, e)\n"
          "class Base(missing.Parent):\n    pass\n")
    agree("def outer():\n    n = 0\n    def bump():\n        nonlocal n\n        n += 1\n    bump()\n    return n\n"
          "print(outer())\nprint(not_defined_anywhere)\n")


def test_a_runs_decimal_context_stays_its_own():
    import decimal
    before = decimal.getcontext()
    precision = before.prec
    first = _run("import decimal\ndecimal.getcontext().prec = 5\nx = str(decimal.Decimal(1) / decimal.Decimal(7))")
    assert first.scope.vars["x"] == "0.14286"
    assert decimal.getcontext() is before and before.prec == precision
    second = _run("from decimal import Decimal\nx = str(Decimal(1) / Decimal(7))")
    assert second.scope.vars["x"] == "0.1428571428571428571428571429"


def test_the_decimal_modules_shared_contexts_are_the_runs_own():
    _run("import decimal\ndecimal.DefaultContext.prec = 3\ndecimal.ExtendedContext.prec = 2\n")
    later = _run("import decimal\nx = str(decimal.Context().prec) + ' ' + str(decimal.ExtendedContext.prec)\n")
    assert later.scope.vars["x"] == "28 9"


def test_a_refused_numpy_name_says_why_whichever_guard_meets_it():
    """np.fromfile is both a name NumPy's table refuses and an attribute the guard never reads: the message is
    the table's, with its reason."""
    with pytest.raises(TdfError) as e:
        _run("import numpy as np\nf = np.fromfile")
    assert e.value.message == "numpy.fromfile is not available in tapecli programs: it reads or writes files"


def test_numpy_functions_that_look_outside_their_arguments_see_the_program():
    """np.bmat('A, B') reads the names of the program's frame (a function's locals too), and what np.info prints
    is the program's output, as under CPython."""
    sys.path.insert(0, str(Path(__file__).parents[1]))
    from python_oracle import agree
    agree("import numpy as np\nA = np.asmatrix('1 2; 3 4')\ndef f():\n    B = np.asmatrix('5; 6')\n"
          "    return np.bmat('A, B; B.T, A[0, 0:1]')\nprint(f())\nprint(np.bmat('A', gdict={'A': np.asmatrix('7')}))\n")
    agree("import numpy as np\nprint('before')\nnp.info(np.polyval)\nnp.info('polyval')\nprint('after')\n")
    result = _run("import numpy as np\nnp.info(np.info)")
    assert result.output and result.output[0].startswith(" info(")


def test_a_programs_numpy_error_callback_ends_with_its_run():
    """np.seterrcall is process-wide in NumPy: a run's callback (and the objects it holds) is gone when it ends."""
    import numpy as np
    before = np.geterrcall()
    ran = _run("import numpy as np\nseen = []\nnp.seterrcall(lambda kind, flag: seen.append(kind))\n"
               "with np.errstate(divide='call'):\n    x = np.float64(1.0) / np.float64(0.0)\n")
    assert ran.scope.vars["seen"] == ["divide by zero"]
    assert np.geterrcall() is before


def test_time_reads_the_runs_own_clock_the_same_on_every_run():
    """time's clock starts at 2024-01-01 00:00 UTC and moves 1 ms per reading (sleep by its seconds, at once): the
    output is the same on every run, an elapsed time is never zero, and the run is warned once, at its line."""
    source = ("import time\nt0 = time.time()\nc0 = time.perf_counter()\ntime.sleep(2.5)\n"
              "elapsed = time.time() - t0\nsince = time.perf_counter() - c0\nday = time.strftime('%Y-%m-%d %H:%M')\n"
              "zone = time.localtime().tm_hour == time.gmtime().tm_hour\n")
    first, second = _run(source), _run(source)
    values = first.scope.vars
    assert values["t0"] == 1_704_067_200.001
    assert values["elapsed"] == pytest.approx(2.502) and values["since"] == pytest.approx(2.502)    # (4 readings)
    assert values["day"] == "2024-01-01 00:00" and values["zone"] is True
    assert {k: v for k, v in values.items() if k != "time"} == {k: v for k, v in second.scope.vars.items()
                                                                 if k != "time"}
    assert [w["line"] for w in first.warnings if "clock" in w["message"]] == [2]
    with pytest.raises(TdfError) as e:
        _run("import time\ntime.sleep(-1)")
    assert (e.value.kind, e.value.message) == ("ValueError", "sleep length must be non-negative")


def test_os_gives_the_runs_own_environment_and_paths_as_strings(monkeypatch):
    monkeypatch.setenv("TAPECLI_TEST_SECRET", "x")
    values = _run("import os\nseen = os.environ.get('TAPECLI_TEST_SECRET'), os.getenv('HOME', 'none'), len(os.environ)\n"
                  "os.environ['TF_CPP_MIN_LOG_LEVEL'] = '2'\nos.environ.setdefault('A', 'b')\n"
                  "level = os.environ['TF_CPP_MIN_LOG_LEVEL']\n"
                  "p = os.path.join('logs', 'fit'), os.path.splitext('w.h5'), os.path.basename('/a/b.py')\n").scope.vars
    assert values["seen"] == (None, "none", 0)
    assert values["level"] == "2"
    assert values["p"] == ("logs/fit", ("w", ".h5"), "b.py")
    assert _run("import os\nn = len(os.environ)").scope.vars["n"] == 0         # the next run's is its own
    with pytest.raises(TdfError) as e:
        _run("import os\nos.environ['N'] = 1")
    assert (e.value.kind, e.value.message) == ("TypeError", "str expected, not int")
    with pytest.raises(TdfError) as e:
        _run("import os\nos.makedirs('logs')")
    assert e.value.message == ("os.makedirs is not available in tapecli programs: it reaches files, the environment "
                               "or processes")


def test_sys_gives_the_programs_arguments_streams_and_exit():
    result = _run("import sys\nprint('out')\nprint('err', file=sys.stderr)\nsys.stdout.write('w\\n')\n"
                  "a = sys.argv\nbig = sys.maxsize > 2**31\nsys.exit(0)\nprint('not reached')\n")
    assert result.output == ["out", "err", "w"]
    assert result.scope.vars["a"] == ["prog.py"] and result.scope.vars["big"] is True
    with pytest.raises(TdfError) as e:
        _run("import sys\nprint('checked')\nsys.exit(2)")
    assert "exited with status 2" in e.value.message and e.value.output == ["checked"]


def test_exit_and_quit_end_the_run_as_sys_exit_does():
    """A script's ``exit()``/``quit()`` (CPython's site builtins) raise SystemExit: status 0 or none ends the run
    with its output, another is the run's error, as ``sys.exit``'s."""
    assert _run("for i in range(5):\n    print(i)\n    if i == 1:\n        exit()\n").output == ["0", "1"]
    assert _run("print('a')\nquit(0)\nprint('b')\n").output == ["a"]
    with pytest.raises(TdfError) as e:
        _run("print('checked')\nexit(2)")
    assert "exited with status 2" in e.value.message and e.value.output == ["checked"]


def test_a_program_names_its_own_file_as_run_was_given_it():
    """``__file__`` is the program's path as ``sys.argv[0]`` is (CPython's is absolute; a program does not read the
    working directory): its base name and stem are CPython's, and a program naming it is still Python."""
    source = "import os, sys\nname = os.path.splitext(os.path.basename(__file__))\nsame = __file__ == sys.argv[0]\n"
    assert execution.python_only(source, "prog.py") is not None
    scope = _run(source).scope.vars
    assert (scope["name"], scope["same"]) == (("prog", ".py"), True)


def test_sys_gives_the_runs_own_streams_back_where_a_program_restores_them():
    """``sys.__stdout__``/``__stderr__`` are the run's own streams (a Tee's program puts them back so), the very
    ``sys.stdout``/``sys.stderr`` the program starts with, encoded as CPython's are; what it set is undone when
    the run ends."""
    import io
    result = _run("import sys, io\nsame = sys.stdout is sys.__stdout__, sys.stderr is sys.__stderr__\n"
                  "sys.stdout = io.StringIO()\nprint('kept')\nkept = sys.stdout.getvalue()\n"
                  "sys.stdout = sys.__stdout__\nprint('shown', sys.stdout.encoding)\n"
                  "sys.stdout = io.StringIO()\n")
    assert result.output == ["shown utf-8"]
    assert result.scope.vars["same"] == (True, True) and result.scope.vars["kept"] == "kept\n"
    assert not isinstance(sys.stdout, io.StringIO)


def test_sys_gives_the_programs_own_recursion_limit():
    """``sys.getrecursionlimit()`` is the depth the program may reach (CPython's 1000, or --max-depth if more),
    not the process's limit, which counts the frames of the run's machinery under the program's."""
    source = "import sys\nlimit = sys.getrecursionlimit()\n"
    assert _run(source).scope.vars["limit"] == 1000
    assert _run(source, max_depth=5000).scope.vars["limit"] == 5000


def test_sys_exc_info_shows_no_stop_of_the_runs_own():
    """A limit met goes up through the program's ``finally`` blocks as no exception of the program's: there
    ``sys.exc_info()`` and ``sys.exception()`` say none is being handled (no handler of the program's sees it)."""
    with pytest.raises(LimitError) as e:
        _run("import sys\ntry:\n    while True:\n        pass\nfinally:\n"
             "    print(sys.exc_info(), sys.exception())\n", max_steps=1000)
    assert e.value.output == ["(None, None, None) None"]


@pytest.mark.parametrize("source", [
    "import sys\nx = sys.stdout.sandbox",
    "import sys\nx = sys.stdout._write.__self__",
    "import sys\nclass O(type(sys.stdout)):\n    pass\nx = O(1).__init__.__self__",
    "import string\nx = string.Formatter().sandbox",
    "import string\nx = string.Formatter()._read.__self__",
    "import string\nclass F(string.Formatter):\n    pass\nx = F()._read.__self__",
])
def test_the_objects_a_program_holds_lead_to_no_sandbox(source):
    """What a program reaches of sys.stdout and string.Formatter (and of classes it derives from them) holds the
    sandbox's write and the guard's read alone: any way to the Sandbox itself is an error."""
    with pytest.raises(TdfError) as e:
        _run(source)
    assert e.value.kind in ("NameError", "AttributeError", "TypeError"), e.value


def test_a_regular_expression_that_backtracks_without_end_is_a_limit(monkeypatch):
    from tapecli.runtime import searches
    monkeypatch.setattr(searches, "SEARCH_SECONDS", 0.3)
    source = "import re\nprint('before')\nm = re.match(r'(a+)+$', 'a' * 40 + 'b')\n"
    with pytest.raises(LimitError) as e:
        _run(source)
    assert e.value.line == 3 and "more than 0.3 s" in e.value.message and e.value.output == ["before"]
    with pytest.raises(LimitError) as e:        # a compiled pattern's search, inside a substitution's function
        _run("import re\np = re.compile(r'(a+)+$')\ns = re.sub('x', lambda m: str(p.search('a' * 40 + 'b')), 'x')")
    assert "more than 0.3 s" in e.value.message
    with pytest.raises(LimitError) as e:        # a Template subclass's pattern, compiled as its class is made
        _run("import string\nclass T(string.Template):\n"
             "    pattern = r'(?P<escaped>x)|(?P<named>(a+)+b)|(?P<braced>y)|(?P<invalid>z)'\n"
             "s = T('a' * 40 + 'c').safe_substitute()")
    assert "more than 0.3 s" in e.value.message
    with pytest.raises(LimitError) as e:        # the run's own time limit, where it ends sooner
        _run(source, max_seconds=0.2)
    assert "ran longer than 0.2 s" in e.value.message
    assert _run("import re\nm = re.match(r'(a+)+$', 'a' * 40)\n").scope.vars["m"] is not None    # (the timer is off)


def test_a_substitution_is_weighed_before_it_is_made():
    with pytest.raises(LimitError):
        _run("import re\ns = re.sub('', 'x' * 10_000, 'a' * 100_000)", max_memory=200 * 2**20)


def test_a_search_outside_the_main_thread_is_refused():
    import threading
    errors = []
    thread = threading.Thread(target=lambda: errors.append(pytest.raises(LimitError, _run, "import re\nre.search('a', 'a')")))
    thread.start()
    thread.join()
    assert "main thread" in errors[0].value.message


def test_datetime_reads_the_runs_clock_in_utc(monkeypatch):
    """A TensorBoard log directory named from datetime.now() is the same on every run and machine: the run's
    clock (2024-01-01 00:00 UTC, 1 ms a reading), local time taken as UTC whatever the machine's zone."""
    import time
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        result = _run("import datetime\nfrom datetime import date, timedelta\n"
                      "log = datetime.datetime.now().strftime('%Y%m%d-%H%M%S')\nt = date.today().isoformat()\n"
                      "kinds = isinstance(datetime.datetime.now(), date), type(datetime.datetime.now()).__name__\n"
                      "epoch = str(datetime.datetime.fromtimestamp(0))\nstamp = datetime.datetime(2020, 1, 1).timestamp()\n"
                      "zone = datetime.datetime(2020, 1, 1).astimezone().isoformat()\n"
                      "later = (datetime.datetime(2024, 3, 1) + timedelta(days=30)).isoformat()\n"
                      "shown = repr(datetime.datetime(2024, 3, 1, 12)), repr(date(2024, 3, 1))\n"
                      "d = datetime.datetime(2000, 1, 1)\nbehind = str(super(datetime.datetime, d).now())[:4], "
                      "str(super(datetime.date, d).today())[:4], str(super(date, date(2000, 1, 1)).today())[:4]\n")
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    found = result.scope.vars
    assert found["log"] == "20240101-000000" and found["t"] == "2024-01-01"
    assert found["kinds"] == (True, "datetime") and found["epoch"] == "1970-01-01 00:00:00"
    assert found["stamp"] == 1577836800.0 and found["zone"] == "2020-01-01T00:00:00+00:00"
    assert found["later"] == "2024-03-31T00:00:00"
    assert found["shown"] == ("datetime.datetime(2024, 3, 1, 12, 0)", "datetime.date(2024, 3, 1)")
    assert found["behind"] == ("2024", "2024", "2024")      # (super() reaches no reading of the machine's clock)


@pytest.mark.parametrize("lineage, names", [
    ("C.__mro__", ["C", "datetime", "date", "object"]), ("C.mro()", ["C", "datetime", "date", "object"]),
    ("datetime.datetime.__mro__", ["datetime", "date", "object"]), ("C.__bases__[0].__bases__", ["date"]),
    ("type(datetime.datetime.now()).mro()", ["datetime", "date", "object"]),
    ("'{0.__mro__}'.format(C) and C.__mro__", ["C", "datetime", "date", "object"])])
def test_a_classs_lineage_leaves_out_the_classes_that_read_the_machines_clock(lineage, names):
    """A class's ``__mro__``, ``__bases__`` and ``mro()`` are readable (``KeyError.__mro__``), without the classes
    a program cannot name: CPython's ``datetime.datetime``, whose ``today()`` reads the machine's clock, and tapecli's
    own clocked bases. What is left is the lineage CPython shows for a class derived from its own datetime."""
    found = _run(f"import datetime\nclass C(datetime.datetime):\n    pass\nlineage = {lineage}\n"
                 "years = {str(k.today())[:4] for k in lineage if hasattr(k, 'today')}\n"
                 "names = [k.__qualname__ for k in lineage]\n").scope.vars
    assert found["years"] == {"2024"} and found["names"] == names


@pytest.mark.parametrize("call", ["np.strings.center(np.array(['a']), 10**10)", "np.char.multiply(np.array(['ab']), 10**8)",
                                  "np.char.zfill(np.array(['1']), 10**10)",
                                  "np.strings.replace(np.array(['a' * 100] * 100), '', 'x' * 10**5)"])
def test_a_string_functions_result_is_weighed_before_it_is_made(call):
    with pytest.raises(LimitError):
        _run(f"import numpy as np\nx = {call}\n", max_memory=200 * 2**20)


# NumPy makes an array of the memory an object's __array_interface__ names: every way a program could give an
# object that name ends in a refusal or in an object NumPy does not read memory through (execution/interfaces.py).
# Each runs in its own process, which an escape would crash.
_INTERFACE = "{'data': (4096, False), 'shape': (10,), 'typestr': '<f8', 'version': 3}"
RAW_MEMORY_ROUTES = {
    "instance attribute": f"class P:\n    pass\nx = P()\nx.__array_interface__ = {_INTERFACE}",
    "setattr": f"class P:\n    pass\nx = P()\nsetattr(x, '__array_' + 'interface__', {_INTERFACE})",
    "instance dictionary": f"class P:\n    pass\nx = P()\nvars(x)['__array_' + 'interface__'] = {_INTERFACE}",
    "class attribute": f"class P:\n    __array_interface__ = {_INTERFACE}\nx = P()",
    "property": f"class P:\n    @property\n    def __array_interface__(self):\n        return {_INTERFACE}\nx = P()",
    "__getattr__": f"class P:\n    def __getattr__(self, n):\n        return {_INTERFACE}\nx = P()",
    "__getattribute__": f"class P:\n    def __getattribute__(self, n):\n        return {_INTERFACE}\nx = P()",
    "__getattr__ set later": f"class P:\n    pass\nP.__getattr__ = lambda self, n: {_INTERFACE}\nx = P()",
    "subclass's __getattr__": f"class A:\n    pass\nclass P(A):\n    def __getattr__(self, n):\n"
                              f"        return {_INTERFACE}\nx = P()",
    "type()": f"P = type('P', (), {{'__array_interface__': {_INTERFACE}}})\nx = P()",
    "program metaclass": f"class M(type):\n    pass\nP = M('P', (), {{'__array_interface__': {_INTERFACE}}})\nx = P()",
    "the class itself": "class M(type):\n    pass\nclass P(metaclass=M):\n    pass\nx = P",
    "SimpleNamespace": f"import types\nx = types.SimpleNamespace(**{{'__array_interface__': {_INTERFACE}}})",
    "argparse.Namespace": f"import argparse\nx = argparse.Namespace(**{{'__array_interface__': {_INTERFACE}}})",
    "make_dataclass": f"import dataclasses\nP = dataclasses.make_dataclass('P', ['__array_interface__'])\n"
                      f"x = P({_INTERFACE})",
    "__array_struct__": "class P:\n    __array_struct__ = 1\nx = P()",
}
RAW_MEMORY_ROUTES.update({
    "abc.ABCMeta": f"import abc\nP = abc.ABCMeta('P', (), {{'__array_interface__': {_INTERFACE}}})\nx = P()",
    "enum's functional form": f"import enum\nE = enum.Enum('E', {{'A': 1, '__array_interface__': {_INTERFACE}}})\n"
                              f"x = E.A",
})
# Not yet closed: type() called by another name (CPython makes the class in C, where no guard runs).
_OPEN = {"type by another name": f"t = type\nP = t('P', (), {{'__array_interface__': {_INTERFACE}}})\nx = P()"}


@pytest.mark.parametrize("source", [*RAW_MEMORY_ROUTES.values(), *(
    pytest.param(s, marks=pytest.mark.xfail(reason="open: a class made outside a class statement", strict=True))
    for s in _OPEN.values())], ids=[*RAW_MEMORY_ROUTES, *_OPEN])
def test_no_object_a_program_makes_hands_numpy_raw_memory(tmp_path, source):
    program = tmp_path / "prog.py"
    program.write_text("import numpy as np\n" + source + "\nprint(np.asarray([x]).dtype)\nprint(np.zeros(10) + 1)\n")
    proc = subprocess.run([sys.executable, "-m", "tapecli", "run", "--no-color", str(program)], capture_output=True,
                          text=True, timeout=120, cwd=Path(__file__).resolve().parents[2])
    assert proc.returncode in (0, 3), proc.stderr[-2000:]
    if proc.returncode == 3:
        assert "Error" in proc.stderr and "Traceback" not in proc.stderr
    else:
        assert proc.stdout.startswith("object\n"), proc.stdout


@pytest.mark.parametrize("shape, strides", [((10**6,), (8,)), ((3,), (-8,)), ((2, 2), (8, 24)), ((5,), None)])
def test_as_strided_views_only_its_arrays_memory(shape, strides):
    with pytest.raises(TdfError) as e:
        _run(f"import numpy as np\nx = np.arange(4.0)\n"
             f"v = np.lib.stride_tricks.as_strided(x[:2], {shape}, {strides})")
    assert (e.value.kind, e.value.line) == ("ValueError", 3) and "reaches bytes" in e.value.message


def test_as_strided_within_its_array_is_numpys():
    source = ("import numpy as np\nfrom numpy.lib.stride_tricks import as_strided\nx = np.arange(10.0)\n"
              "print(as_strided(x, shape=(8, 3), strides=(8, 8)).sum(axis=1))\n"
              "print(as_strided(x[2:], shape=(3,), strides=(-8,)))\nb = np.zeros((3, 3))\n"
              "v = as_strided(b, shape=(3,), strides=(32,))\nv += 1\nprint(b)\n")
    assert _run(source).output == through_cpython(source)[0]


def test_the_librarys_own_classes_may_name_the_interfaces_outside_a_run():
    # PIL's SupportsArrayInterface protocol (imported by matplotlib for `tapecli plot`): the refusal is a run's
    import abc
    _run("x = 1\n")
    made = abc.ABCMeta("SupportsArrayInterface", (), {"__array_interface__": property(lambda self: {})})
    assert "__array_interface__" in made.__dict__
