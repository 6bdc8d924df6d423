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
    missing = tapecli.run(PROGRAM.format(options="monitor='val_thing', mode='min', patience=1"))
    assert missing.values["result"][0] == 40            # Keras: no stop, and a warning naming what is there
    with pytest.raises(TdfError) as e:                  # Keras: mode="auto" cannot tell the direction of "thing"
        tapecli.run(PROGRAM.format(options="monitor='val_thing', patience=1"))
    assert "EarlyStopping callback received monitor=val_thing, but Keras isn't able" in e.value.message
    assert any("`val_thing` which is not available. Available metrics are: loss,mae,val_loss,val_mae" in w["message"]
               for w in missing.warnings)


SCHEDULED = """\
import tensorflow as tf, keras, numpy as np
m = keras.Sequential([keras.layers.Dense(1)])
m.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
def s1(epoch, lr):
    print("got", type(epoch).__name__, type(lr).__name__, repr(lr))
    return lr * tf.math.exp(-0.1) if epoch > 0 else lr
try:
    h = m.fit(np.ones((4, 2)), np.ones((4, 1)), epochs=2, verbose=0, callbacks=[keras.callbacks.LearningRateScheduler(s1)])
except ValueError as e:
    print(e)
def s0(epoch, lr):
    return lr * 0.5
h = m.fit(np.ones((4, 2)), np.ones((4, 1)), epochs=2, verbose=0, callbacks=[keras.callbacks.LearningRateScheduler(s0)])
print(h.history["learning_rate"], list(h.history))
def s2(epoch):
    return 0.5 / (epoch + 1)
h = m.fit(np.ones((4, 2)), np.ones((4, 1)), epochs=2, verbose=0, callbacks=[keras.callbacks.LearningRateScheduler(s2, verbose=1)])
print(h.history["learning_rate"], float(m.optimizer.learning_rate))
def s3(epoch, lr):
    return 1
try:
    m.fit(np.ones((4, 2)), np.ones((4, 1)), epochs=1, verbose=0, callbacks=[keras.callbacks.LearningRateScheduler(s3)])
except Exception as e:
    print(type(e).__name__, e)
"""

# What Keras 3 under TensorFlow 2.21 printed for SCHEDULED.
SCHEDULED_BY_KERAS = """\
got int float 0.10000000149011612
got int float 0.10000000149011612
The output of the `schedule` function should be a float. Got: 0.09048374742269516
[0.05000000074505806, 0.02500000037252903] ['loss', 'learning_rate']

Epoch 1: LearningRateScheduler setting learning rate to 0.5.

Epoch 2: LearningRateScheduler setting learning rate to 0.25.
[0.5, 0.25] 0.25
ValueError The output of the `schedule` function should be a float. Got: 1
"""


def test_learning_rate_scheduler_sets_the_rate_each_epoch_and_logs_it_as_keras_does():
    """schedule(epoch, lr) with the float32 rate as a Python float, or schedule(epoch); a tensor or an int
    refused as Keras refuses it; verbose=1's lines; the rate in each epoch's logs, after the loss (CPython runs
    this program: it catches errors)."""
    assert tapecli.run(SCHEDULED).output == SCHEDULED_BY_KERAS.splitlines()


def test_learning_rate_scheduler_on_the_interpreter(monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "0")
    source = SCHEDULED.split("def s1")[0] + "def s0" + SCHEDULED.split("def s0")[1].split("def s3")[0]
    assert "try" not in source and "__name__" not in source
    from tapecli.execution import python_only
    assert python_only(source) is None          # (the interpreter runs it)
    assert tapecli.run(source).output == SCHEDULED_BY_KERAS.splitlines()[3:-1]


CUSTOM = """\
import numpy as np
import tensorflow as tf
from tensorflow import keras


class LossHistory(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.per_batch_losses = []
        print("begin", sorted(self.params))

    def on_train_batch_end(self, batch, logs=None):
        self.per_batch_losses.append(round(logs.get("loss"), 4))

    def on_epoch_end(self, epoch, logs=None):
        print(f"epoch {epoch}: loss={logs['loss']:.4f} mae={logs['mae']:.4f}")
        if logs["loss"] < 0.3:
            self.model.stop_training = True


class Quiet(keras.callbacks.Callback):
    pass


model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1, kernel_initializer="zeros")])
model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse", metrics=["mae"])
x = np.linspace(-1, 1, 16, dtype="float32").reshape(8, 2)
y = x[:, :1] * 2 + 1
history_cb = LossHistory()
h = model.fit(x, y, epochs=20, batch_size=4, shuffle=False, verbose=0, callbacks=[history_cb, Quiet()])
print(len(h.history["loss"]), history_cb.per_batch_losses[:4], model.stop_training)
print(history_cb.model is model, history_cb.params["epochs"], history_cb.params["steps"])
"""

# What Keras 3 under TensorFlow 2.21 printed for CUSTOM.
CUSTOM_BY_KERAS = """\
begin ['epochs', 'steps', 'verbose']
epoch 0: loss=2.1857 mae=1.2232
epoch 1: loss=0.9946 mae=0.8326
epoch 2: loss=0.4600 mae=0.5754
epoch 3: loss=0.2157 mae=0.3983
4 [0.3956, 2.1857, 0.2306, 0.9946] True
True 20 2
"""


def test_a_program_s_callback_hears_fit_as_keras_s_callback_list_tells_it():
    """A keras.callbacks.Callback subclass: on_train_begin with self.params, each batch's logs, each epoch's, the
    inherited methods doing nothing, self.model the model fitted, whose stop_training ends fit after the epoch."""
    assert tapecli.run(CUSTOM).output == CUSTOM_BY_KERAS.splitlines()


TIMED = """\
import time
import tensorflow as tf
from tensorflow import keras


class Timer(keras.callbacks.Callback):
    def on_epoch_begin(self, epoch, logs=None):
        self.start = time.time()

    def on_epoch_end(self, epoch, logs=None):
        print(f"epoch {epoch} took {time.time() - self.start:.3f}s")


class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.d = keras.layers.Dense(1, kernel_initializer="ones")

    def call(self, x):
        return self.d(x)


start = time.perf_counter()
net = Net()
net.compile(optimizer="sgd", loss="mse")
net.fit(tf.ones((4, 2)), tf.zeros((4, 1)), epochs=2, verbose=0, callbacks=[Timer()])
time.sleep(0.5)
print(f"total {time.perf_counter() - start:.3f}s")
"""


@pytest.mark.parametrize("on_cpython", ["0", "1"])
def test_a_training_script_that_times_its_epochs_runs_on_the_run_s_clock(monkeypatch, on_cpython):
    """time's readings and sleep on either runner: the run's clock (2024-01-01 UTC, 1 ms a reading), so the Keras
    subclass's fit is timed alike."""
    from tapecli.execution import PythonRun
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on_cpython)
    result = tapecli.run(TIMED)
    assert isinstance(result.run.interpreter, PythonRun) == (on_cpython == "1")
    assert result.output == ["epoch 0 took 0.001s", "epoch 1 took 0.001s", "total 0.505s"]
    assert [w["line"] for w in result.warnings if "clock is tapecli's own" in w["message"]] == [23]
