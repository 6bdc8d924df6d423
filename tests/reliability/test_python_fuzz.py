"""Random programs written as Python (§11 forms, hostile ones included) either run or raise a TdfError:
never another exception (which the CLI would report as an internal error, exit 4)."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st

import tapecli
from tapecli.errors import TdfError, UsageError

ATOMS = ["1", "2.5", "-3", "'s'", "x", "xs", "d", "[1.0, 2.0]", "None", "True", "tf.constant([1.0, 2.0])",
         "w", "(1, 2)", "{}", "[]", "f'{x:.2f}'", "'{}'.format(x)", "'%d' % 2", "lambda t: t"]
UNARY = ["len({})", "list({})", "sorted({})", "sum({})", "min({})", "max({}, 1)", "float({})", "int({})",
         "str({})", "zip({}, xs)", "enumerate({})", "dict({})", "[v for v in {}]", "{{k: 1 for k in {}}}",
         "{}.numpy()", "{}.append(1)", "{}.keys()", "{}[0]", "{}[-1:]", "tf.reduce_sum({})", "tf.square({})",
         "({} if x else 2)", "-{}", "not {}", "{}.shape", "tf.reshape({}, [-1])", "{}.__init__", "isinstance({}, list)"]
BINARY = ["{} + {}", "{} * {}", "{} % {}", "{} in {}", "{} == {}", "min({}, {})", "{} @ {}", "{} ** {}"]

exprs = st.recursive(st.sampled_from(ATOMS), lambda inner: st.one_of(
    st.tuples(st.sampled_from(UNARY), inner).map(lambda p: p[0].format(p[1])),
    st.tuples(st.sampled_from(BINARY), inner, inner).map(lambda p: p[0].format(p[1], p[2]))), max_leaves=6)

STATEMENTS = ["y = {}", "a, b = {}, {}", "del xs[0]", "assert {}", "for i, v in enumerate({}):\n    z = v",
              "class C:\n    def __init__(self):\n        self.v = {}\n    def __call__(self, q):\n        return self.v\n"
              "c = C()\nr = c({})", "with tf.GradientTape() as tape:\n    tape.watch(w)\n    l = {}\ng = tape.gradient(l, w)"]

PRELUDE = "import tensorflow as tf\nx = 1.5\nxs = [1.0, 2.0, 3.0]\nd = {'a': 1}\nw = tf.Variable([1.0, 2.0])\n"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(STATEMENTS), st.lists(exprs, min_size=2, max_size=2)), min_size=1,
                max_size=4))
def test_python_programs_run_or_raise_a_program_error(stmts):
    source = PRELUDE + "".join(s.format(*e) + "\n" for s, e in stmts)
    try:
        tapecli.run(source)
    except (TdfError, UsageError):
        pass
