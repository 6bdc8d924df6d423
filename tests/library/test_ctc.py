"""CTC's errors and refusals (what a recorded program cannot show: tests/data/tf_programs_ctc.json has the values):
the CTCLoss kernel's checks of a SparseTensor's labels, and a ``unique=`` that is not ctc_unique_labels' pair,
float64 logits and a length past the frames as clear errors."""
from __future__ import annotations

import pytest

from tapecli.api import Options, run_source
from tapecli.errors import TdfError

PROLOGUE = "import tensorflow as tf\nz = tf.zeros([3, 2, 4])\n"


@pytest.mark.parametrize("call, words", [
    ("tf.nn.ctc_loss(tf.sparse.from_dense(tf.constant([[1, 2], [3, 0]])), z, None, [3, 3])",
     "Argument `blank_index` must be provided"),
    ("tf.nn.ctc_loss(tf.sparse.from_dense(tf.constant([[1, 2], [3, 0]])), z, None, [3, 0], blank_index=0)",
     "Not enough time for target transition sequence (required: 1, available: 0)1"),
    ("tf.nn.ctc_loss(tf.sparse.from_dense(tf.constant([[1, 2], [0, 0]])), z, None, [3, 3], blank_index=0)",
     "Labels length is zero in batch 1"),
    ("tf.nn.ctc_loss(tf.sparse.from_dense(tf.constant([[1, 2], [3, 0]], tf.int64)), z, None, [3, 3], blank_index=0)",
     "must be int32"),
    ("tf.nn.ctc_loss([[1, 2], [3, 0]], z, [2, 1], [3, 3], unique=tf.constant([[1, 2], [3, 0]]))",
     "unique must be the pair"),
    ("tf.nn.ctc_loss([[1, 2], [3, 0]], tf.cast(z, tf.float64), [2, 1], [3, 3])", "float32"),
    ("tf.nn.ctc_greedy_decoder(z, [3, 4])", "sequence_length(1) <= 3"),
])
def test_ctc_refusals_are_clear_errors(call, words):
    with pytest.raises(TdfError, match=words.replace("(", r"\(").replace(")", r"\)")):
        run_source(PROLOGUE + f"r = {call}\n", "p.py", Options())
