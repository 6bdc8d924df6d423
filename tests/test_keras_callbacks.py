"""Keras's callbacks that fit runs (tapecli/library/keras/callbacks.py), each case against what Keras 3 under
TensorFlow 2.21 gives for the same program (recorded in the development venv: with zero initial weights, plain
SGD and unshuffled batches, the losses are Keras's within float32, so the epoch training stops at is too)."""
from __future__ import annotations

import pytest

import tapecli
from tapecli.errors import TdfError

PROGRAM = """import numpy as np
import tensorflow as tf
x = np.linspace(-1, 1, 32, dtype="float32").reshape(16, 2)
y = (2 * x[:, :1] - x[:, 1:] + 0.5).astype("float32")
model = tf.keras.Sequential([tf.keras.Input(shape=(2,)), tf.keras.layers.Dense(1, kernel_initializer="zeros")])
model.compile(optimizer=tf.keras.optimizers.SGD(0.05), loss="mse", metrics=["mae"])
stop = tf.keras.callbacks.EarlyStopping({options})
h = model.fit(x, y, epochs=40, batch_size=16, shuffle=False, verbose=0, validation_data=(x[:4], y[:4]),
              callbacks=[stop])
result = [len(h.history["loss"]), stop.stopped_epoch, stop.best_epoch, round(float(np.sum(model.get_weights()[0])), 4)]
"""


@pytest.mark.parametrize("options, keras", [
    ("monitor='loss', min_delta=0.05, patience=2", [10, 9, 7, 0.52]),
    ("monitor='val_mae', patience=1, min_delta=0.02, restore_best_weights=True", [2, 1, 0, 0.0708]),
    ("monitor='loss', baseline=0.01, patience=3", [40, 0, 39, 0.9469]),
    ("monitor='val_loss', mode='max', patience=0", [2, 1, 0, 0.1365]),
])
def test_early_stopping_stops_where_keras_does(options, keras):
    assert tapecli.run(PROGRAM.format(options=options)).values["result"] == keras


def test_a_callback_tapecli_does_not_run_is_refused_by_name():
    source = PROGRAM.format(options="").replace("callbacks=[stop]", "callbacks=[stop, 3]")
    with pytest.raises(TdfError) as e:
        tapecli.run(source)
    assert "the callback" in e.value.message and "keras.callbacks.EarlyStopping" in e.value.hint
    missing = tapecli.run(PROGRAM.format(options="monitor='val_thing', patience=1"))
    assert missing.values["result"][0] == 40            # Keras: no stop, and a warning naming what is there
    assert any("`val_thing` which is not available. Available metrics are: loss,mae,val_loss,val_mae" in w["message"]
               for w in missing.warnings)
