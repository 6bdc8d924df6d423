"""String tensors beyond what the recorded programs print (tests/data/tf_programs_strings.json, run by
tests/conformance/test_tf_programs_both_runners.py): the interpreter's run, the conversion, the kernels' refusals and the
limits' weighing."""
from __future__ import annotations

import numpy as np
import pytest

from tapecli import api
from tapecli.errors import KernelValueError, LimitError, TdfTypeError
from tapecli.runtime.values import text_array

def test_the_interpreter_runs_string_tensors_where_it_may():
    """A program without bytes of its own runs on the interpreter, whose ops and printing give TensorFlow's."""
    source = ('import tensorflow as tf\nt = tf.constant(["b", "a", "b"])\nu, i = tf.unique(t)\n'
              'print(u, i.numpy(), t == "b", tf.strings.upper(t)[0])\n')
    assert api.run_source(source, "p.py").output == [
        "tf.Tensor([b'b' b'a'], shape=(2,), dtype=string) [0 1 0] tf.Tensor([ True False  True], shape=(3,), "
        "dtype=bool) tf.Tensor(b'B', shape=(), dtype=string)"]


def test_a_string_tensor_holds_utf8_bytes_as_tensorflow_converts_them():
    values = text_array([["é", b"\x00a"], ["", "z"]])
    assert values.dtype == object and values.tolist() == [[b"\xc3\xa9", b"\x00a"], [b"", b"z"]]


@pytest.mark.parametrize("source, error", [
    ('tf.reduce_sum(tf.constant(["a"]))', KernelValueError),       # no kernel for strings: TensorFlow's error
    ('tf.sort(tf.constant(["b", "a"]))', KernelValueError),
    ('tf.constant(["a"]) * 2', (KernelValueError, TdfTypeError)),
    ('tf.cast(tf.constant(["1"]), tf.float32)', KernelValueError),
    ('tf.strings.split(tf.constant(["a b"])) + 1', (KernelValueError, TdfTypeError)),    # (a ragged tensor's flat values)
])
def test_what_tensorflow_refuses_of_strings_is_refused(source, error):
    with pytest.raises(error):
        api.run_source(f"import tensorflow as tf\nx = {source}\n", "p.py")


@pytest.mark.parametrize("call", [
    "tf.strings.as_string(tf.range(4), width=500000000)",
    "tf.strings.ngrams(tf.constant(['a' * 1000] * 20000), 1000)",
    "tf.strings.format('{}', tf.zeros([30000000]), summarize=-1)",
])
def test_a_string_result_is_weighed_against_the_memory_limit_before_it_is_made(call):
    with pytest.raises(LimitError):
        api.run_source(f"import tensorflow as tf\nx = {call}\n", "p.py",
                       api.Options(limits=api.Limits(max_memory=200 * 2**20)))


def test_a_kernel_on_string_scalars_keeps_trailing_nuls():
    """NumPy makes bytes a fixed-width array that drops trailing NULs; a string tensor's element stays whole."""
    source = 'import tensorflow as tf\nx = tf.constant("a") + "\\x00"\nprint(tf.strings.length(x).numpy(), x)\n'
    assert api.run_source(source, "p.py").output == ["2 tf.Tensor(b'a\\x00', shape=(), dtype=string)"]
    assert np.array(b"a\x00").item() == b"a"        # (what NumPy alone would give)
