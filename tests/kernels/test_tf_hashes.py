"""TensorFlow's hashes of strings (kernels/tf_hashes.py, library/tf_hashing.py) against TensorFlow's own answers,
recorded by benchmarks/record_tf_hashes.py (tests/data/tf_hashes.json): strings of every length from 0 to 200
bytes (each branch of FarmHash's Fingerprint64, every tail of the 8-byte loops), random bytes and non-ASCII UTF-8,
each with its tf.fingerprint bytes and its to_hash_bucket_fast, _strong and legacy buckets, for 7 buckets and for
2**63 - 1 (nearly all of a hash's bits)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tapecli.errors import KernelValueError, TdfTypeError
from tapecli.kernels import tf_hashes
from tapecli.library import tf_hashing
from tapecli.runtime.values import Tensor, text_array

RECORD = json.loads((Path(__file__).parents[1] / "data" / "tf_hashes.json").read_text())
STRINGS = [bytes.fromhex(s) for s in RECORD["strings"]]


def strings() -> Tensor:
    return Tensor(text_array(STRINGS))


def test_the_record_covers_every_length_branch_and_non_ascii_text():
    lengths = {len(s) for s in STRINGS}
    assert set(range(201)) <= lengths and any(b >= 0x80 for s in STRINGS for b in s)


@pytest.mark.parametrize("buckets", RECORD["buckets"])
def test_the_three_bucketings_are_tensorflows(buckets):
    assert tf_hashing.to_hash_bucket_fast(strings(), buckets).value.tolist() == RECORD[f"fast_{buckets}"]
    assert tf_hashing.to_hash_bucket_strong(strings(), buckets, RECORD["key"]).value.tolist() == \
        RECORD[f"strong_{buckets}"]
    assert tf_hashing.to_hash_bucket(strings(), buckets).value.tolist() == RECORD[f"legacy_{buckets}"]


def test_fingerprints_are_tensorflows_bytes():
    out = tf_hashing.fingerprint(strings()).value
    assert out.dtype == np.uint8 and out.tolist() == RECORD["fingerprint"]


@pytest.mark.parametrize("hash_of", [tf_hashes.fingerprint64, lambda s: tf_hashes.siphash(s, (3, 4)),
                                     tf_hashes.legacy_hash64], ids=["farmhash", "siphash", "legacy"])
def test_a_string_hashes_alike_alone_and_among_strings_of_other_lengths(hash_of):
    """The rounds run over the strings sorted by length (a prefix a round): each string's hash is its own."""
    chosen = STRINGS[::7]
    together = hash_of(chosen)
    assert together.tolist() == [int(hash_of([s])[0]) for s in chosen]
    assert hash_of([]).shape == (0,)


def test_a_batch_keeps_its_shape_and_a_scalar_is_one_bucket():
    matrix = tf_hashing.to_hash_bucket_fast(Tensor(text_array([["a", "b"], ["c", "d"]])), 10)
    assert matrix.shape == (2, 2) and matrix.dtype == np.int64
    assert tf_hashing.to_hash_bucket_fast("abc", 10).shape == ()


def test_a_numeric_tensor_is_fingerprinted_by_each_rows_bytes():
    rows = np.arange(6, dtype=np.int32).reshape(2, 3)
    expected = [tf_hashes.fingerprint64([row.astype("<i4").tobytes()])[0] for row in rows]
    got = tf_hashing.fingerprint(Tensor(rows)).value
    assert got.view("<u8").reshape(-1).tolist() == expected
    assert tf_hashing.fingerprint(Tensor(np.zeros((0, 3), np.float32))).shape == (0, 8)


@pytest.mark.parametrize("call, error, message", [
    (lambda: tf_hashing.to_hash_bucket_fast(["a"], 0), KernelValueError,
     "Value for attr 'num_buckets' of 0 must be at least minimum 1"),
    (lambda: tf_hashing.to_hash_bucket_fast(["a"], 2**63), KernelValueError,
     "Value for attr 'num_buckets' of -1 must be at least minimum 1"),
    (lambda: tf_hashing.to_hash_bucket_strong(["a"], 3, [1, 2, 3]), KernelValueError, "Key must have 2 elements"),
    (lambda: tf_hashing.to_hash_bucket_strong(["a"], 3, 5), TdfTypeError,
     "Expected list for 'key' argument to 'string_to_hash_bucket_strong' Op, not 5."),
    (lambda: tf_hashing.to_hash_bucket_fast(Tensor(np.array([1, 2], np.int32)), 3), KernelValueError,
     "cannot compute StringToHashBucketFast as input #0(zero-based) was expected to be a string tensor but is a "
     "int32 tensor"),
    (lambda: tf_hashing.fingerprint(Tensor(np.array(1, np.int32))), KernelValueError,
     "`data` should have at least one dimension: []"),
    (lambda: tf_hashing.fingerprint(Tensor(np.array([1], np.int32)), "md5"), KernelValueError,
     "Unsupported fingerprint method: md5"),
], ids=["no buckets", "wrapped buckets", "three words", "no list", "numbers", "scalar", "method"])
def test_tensorflows_errors(call, error, message):
    with pytest.raises(error) as caught:
        call()
    assert caught.value.args[0] == message
