"""Keras 3's attention layers (Attention, AdditiveAttention, MultiHeadAttention, GroupQueryAttention) and
EinsumDense beyond the recorded values
(tests/tf_expectations/keras_attention.json, tests/data/tf_fresh_programs_attn.json): their argument checks with
Keras's messages, dropout only in training, symbolic shapes and a tape through a functional model. Each program
runs on the interpreter and on CPython (TAPECLI_TF_ON_CPYTHON=0 and 1)."""
from __future__ import annotations

import textwrap

import pytest

import tapecli
from tapecli.errors import TdfTypeError, TdfValueError

HEAD = "import numpy as np\nfrom tensorflow import keras\nx = np.ones((1, 2, 3), 'float32')\n"


@pytest.fixture(params=["0", "1"], ids=["interpreter", "cpython"])
def on_cpython(request, monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", request.param)


def run(source):
    return tapecli.run(HEAD + textwrap.dedent(source).lstrip("\n")).output


@pytest.mark.parametrize("statement, error, message", [
    ("keras.layers.MultiHeadAttention(0, 2)", TdfValueError,
     "Received an invalid value for argument `num_heads`, expected a positive integer. Received: num_heads=0"),
    ("keras.layers.MultiHeadAttention(2, 2, value_dim=0)", TdfValueError,
     "expected a positive integer or `None`. Received: value_dim=0"),
    ("keras.layers.Attention(score_mode='x')", TdfValueError,
     "Invalid value for argument score_mode. Expected one of {'dot', 'concat'}. Received: score_mode=x"),
    ("keras.layers.Attention()(x)", TdfValueError, "Attention layer must be called on a list of inputs"),
    ("keras.layers.AdditiveAttention()([x])", TdfValueError,
     "AdditiveAttention layer accepts inputs list of length 2 or 3"),
    ("keras.layers.Attention()([x, x], mask=x)", TdfValueError, "Attention layer mask must be a list"),
    ("keras.layers.MultiHeadAttention(2, 2)(x, x, np.ones((1, 3, 3), 'float32'))", TdfValueError,
     "All dimensions of `value` and `key`, except the last one, must be equal"),
    ("keras.layers.MultiHeadAttention(2, 2)(x, x, foo=1)", TdfTypeError,
     "MultiHeadAttention.call\\(\\): got an unexpected keyword argument 'foo'"),
    ("keras.layers.GroupQueryAttention(2, 4, 3)", TdfValueError,
     "`num_query_heads` must be divisible by `num_key_value_heads`."),
    ("keras.layers.EinsumDense('ab,bc', 4)(x)", TdfValueError, "Invalid einsum equation 'ab,bc'"),
    ("keras.layers.EinsumDense('abc,cd->abd', (5, 4))(x)", TdfValueError,
     "Input shape and output shape do not match at shared dimension 'b'. Input shape is 2, and output shape is 5."),
    ("keras.layers.EinsumDense('abc,cd->abd', (None, 4), bias_axes='x')(x)", TdfValueError,
     "Bias dimension 'x' was requested, but is not part of the output spec 'abd'"),
])
def test_misuses_raise_keras_messages(statement, error, message, on_cpython):
    with pytest.raises(error, match=message):
        run(statement)


def test_dropout_acts_only_in_training(on_cpython):
    out = run("""
        q = np.sin(np.arange(24, dtype='float32')).reshape(2, 3, 4)
        for make in (lambda rate: keras.layers.MultiHeadAttention(2, 3, dropout=rate),
                     lambda rate: keras.layers.Attention(dropout=rate)):
            plain, dropped = make(0.0), make(0.5)
            call = (lambda layer, **kw: layer(q, q, **kw)) if isinstance(plain, keras.layers.MultiHeadAttention) \\
                else (lambda layer, **kw: layer([q, q], **kw))
            call(plain)
            call(dropped)
            dropped.set_weights(plain.get_weights())
            same = np.allclose(call(plain).numpy(), call(dropped, training=False).numpy())
            differs = not np.allclose(call(plain).numpy(), call(dropped, training=True).numpy())
            print(same, differs)
    """)
    assert out == ["True True", "True True"]


def test_symbolic_shapes_and_a_tape_through_a_functional_model(on_cpython):
    out = run("""
        import tensorflow as tf
        query, value = keras.Input((3, 4)), keras.Input((5, 6))
        attended, scores = keras.layers.Attention()([query, keras.layers.Dense(4)(value)],
                                                    return_attention_scores=True)
        crossed = keras.layers.MultiHeadAttention(2, 3, output_shape=(2, 5))(query, value)
        print(attended.shape, scores.shape, crossed.shape)
        grouped, group_scores = keras.layers.GroupQueryAttention(2, 4, 2)(query, keras.layers.Dense(4)(value),
                                                                          return_attention_scores=True)
        print(grouped.shape, group_scores.shape)
        model = keras.Model([query, value], [attended, crossed])
        q, v = tf.ones((2, 3, 4)), tf.ones((2, 5, 6))
        with tf.GradientTape() as tape:
            a, c = model([q, v])
            loss = tf.reduce_sum(a) + tf.reduce_sum(c * c)
        grads = tape.gradient(loss, model.trainable_variables)
        print(len(grads), [g is None for g in grads].count(True), c.shape)
    """)
    assert out == ["(None, 3, 4) (None, 3, 5) (None, 3, 2, 5)", "(None, 3, 4) (None, 4, 3, 5)", "10 0 (2, 3, 2, 5)"]
