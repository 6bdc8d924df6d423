"""Keras's fit and evaluate served by loop plans (library/keras/fit_plans.py): on both runners, an epoch's batches
after the two traced ones run as the plan (the run's ``loop_replayed`` counts them), with the same bits as the
reference path (TAPECLI_ACCEL=0), which replays none; a step or a callback a plan does not take leaves its epochs
as written. A program's own train_step and test_step (and the compute_loss they call) are planned by the rules of a
hand-written loop; one that reads a value into Python runs as written. (What TensorFlow prints for the stored
programs: tests/data/tf_programs_keras_fit_plans.json, on both runners in
tests/conformance/test_tf_programs_both_runners.py.)"""
import json
import textwrap
from pathlib import Path

import pytest

from tapecli.api import Options, run_source
from tapecli.errors import LimitError, TdfError
from tapecli.runtime.limits import Limits

from conftest import cli

STORED = json.loads((Path(__file__).resolve().parents[1] / "data" / "tf_programs_keras_fit_plans.json").read_text())

HEAD = """
import numpy as np
import tensorflow as tf
keras = tf.keras
keras.utils.set_random_seed(0)
rng = np.random.default_rng(1)
X = rng.standard_normal((200, 6)).astype("float32")
Y = rng.integers(0, 3, size=200)
"""

# batch normalization's moving statistics (a plan's updates) and RMSprop, sample weights, batches of 20 in order
STATEFUL = HEAD + """
W = rng.uniform(0.5, 2.0, size=200).astype("float32")
model = keras.Sequential([keras.Input((6,)), keras.layers.Dense(8, activation="relu"), keras.layers.BatchNormalization(),
                          keras.layers.Dense(3, activation="softmax")])
model.compile(optimizer="rmsprop", loss="sparse_categorical_crossentropy", weighted_metrics=["accuracy"])
h = model.fit(X, Y, sample_weight=W, batch_size=20, epochs=2, shuffle=False, verbose=0)
print(h.history)
print(model.evaluate(X, Y, sample_weight=W, batch_size=20, verbose=0))
print([w.tolist() for w in model.get_weights()])
"""

# dropout's draws (a plan's), SGD with momentum, the learning rate a callback changes at each epoch's start
SCHEDULED = HEAD + """
model = keras.Sequential([keras.Input((6,)), keras.layers.Dense(8, activation="tanh"), keras.layers.Dropout(0.25),
                          keras.layers.Dense(3)])
model.compile(optimizer=keras.optimizers.SGD(0.1, momentum=0.9),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
stop = keras.callbacks.EarlyStopping(monitor="loss", patience=1)
schedule = keras.callbacks.LearningRateScheduler(lambda epoch, lr: lr * 0.5)
h = model.fit(X, Y, batch_size=16, epochs=3, callbacks=[stop, schedule], verbose=0)
print(h.history)
print([w.tolist() for w in model.get_weights()])
"""

# mean squared error reads its labels into Python by the plans' rule (losses.Loss.replay_kind): as written
REGRESSION = HEAD + """
T = rng.standard_normal((200, 2)).astype("float32")
model = keras.Sequential([keras.Input((6,)), keras.layers.Dense(2)])
model.compile(optimizer="adam", loss="mse", metrics=["mae"])
print(model.fit(X, T, batch_size=16, epochs=2, verbose=0).history)
print([w.tolist() for w in model.get_weights()])
"""

# 200 rows in batches of 16: 13, the last of 8; the first batch runs as written, the next two traced, the short
# last one as written (its layout is not the plan's): 9 replayed an epoch (of 120 rows, 4; of 10 batches of 20, 7)
CASES = {
    "validation": (STORED["fit_plans_validation"]["program"], 2 * 9 + 2 * 4 + 9),
    "dataset": (STORED["fit_plans_dataset"]["program"], 2 * 9 + 2 * 9),      # (its mse model's fit: as written)
    "sample_weight": (STORED["fit_plans_sample_weight"]["program"], 2 * 7 + 7),
    # a program's train_step (its model's compute_loss the Trainer's; the interpreter's: `keras = tf.keras`)
    "train_step": (STORED["fit_plans_train_step"]["program"], 2 * 9),
    # its own train_step and test_step: fit's batches, the validation pass's (7 batches, the last as written: 3
    # replayed), evaluate's
    "own_steps": (STORED["fit_plans_own_steps"]["program"], 2 * 9 + 2 * 3 + 9),
    "own_compute_loss": (STORED["fit_plans_own_compute_loss"]["program"], 2 * 9),  # (its train_step's call of it)
    "own_step_read": (STORED["fit_plans_own_step_read"]["program"], 0),     # (a loss read into Python each batch)
    # Keras's step, the program's call and compute_loss let in; a subclassed model (its validation pass of 4
    # batches too few for a plan)
    "own_loss_default_step": (STORED["fit_plans_own_loss_default_step"]["program"], 2 * 9),
    "subclass_default_step": (STORED["fit_plans_subclass_default_step"]["program"], 2 * 6 + 9),
    "batch_callback": (STORED["fit_plans_program_callback"]["program"], 0),   # (a callback hearing each batch)
    # a program's callbacks of epochs alone (fit and evaluate planned), of test batches, of batches (as written)
    "epoch_callbacks": (STORED["fit_plans_epoch_callbacks"]["program"], 2 * 9 + 2 * 9 + 9),
    "stateful": (STATEFUL, 2 * 7 + 7),
    "scheduled": (SCHEDULED, 3 * 9),
    "regression": (REGRESSION, 0),
}


def _run(source: str, runner: str, accel: str, monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", runner)
    monkeypatch.setenv("TAPECLI_ACCEL", accel)
    result = run_source(textwrap.dedent(source), "fit.py")
    return [str(line) for line in result.output], list(result.warnings), result.context.loop_replayed


@pytest.mark.parametrize("runner", ["0", "1"], ids=["interpreter", "cpython"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_fit_replays_its_batches_with_the_bits_of_the_reference_path(case, runner, monkeypatch):
    source, replayed = CASES[case]
    *planned, count = _run(source, runner, "1", monkeypatch)
    *written, none = _run(source, runner, "0", monkeypatch)
    assert planned == written
    assert (count, none) == (replayed, 0)



# a label out of range in the tenth batch, one the plan takes: its check refuses it before any state changes, and
# the batch runs as written, raising the loss's error at fit's line
BAD_LABEL = HEAD + """
Y[150] = 7
model = keras.Sequential([keras.Input((6,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(3)])
model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
model.fit(X, Y, batch_size=16, epochs=1, shuffle=False, verbose=0)
"""


@pytest.mark.parametrize("runner", ["0", "1"], ids=["interpreter", "cpython"])
def test_a_batch_the_plan_refuses_raises_the_error_as_written(runner, monkeypatch):
    errors = []
    for accel in ("1", "0"):
        with pytest.raises(TdfError) as e:
            _run(BAD_LABEL, runner, accel, monkeypatch)
        errors.append((e.value.line, e.value.message))
    assert errors[0] == errors[1] and "label value of 7" in errors[0][1]


@pytest.mark.parametrize("accel", ["1", "0"])
def test_bench_reports_a_fits_replayed_batches_only_with_the_fast_paths_on(tmp_path, accel):
    program = tmp_path / "fit.py"
    program.write_text(STORED["fit_plans_validation"]["program"])
    r = cli("bench", "--json", "--repeat", "1", "--warmup", "0", program, env={"TAPECLI_ACCEL": accel})
    assert r.code == 0, r.stderr
    assert json.loads(r.stdout)["loop_replayed"] == (CASES["validation"][1] if accel == "1" else 0)


@pytest.mark.parametrize("runner", ["0", "1"], ids=["interpreter", "cpython"])
def test_a_planned_step_of_the_program_s_stops_at_max_steps_where_it_does_as_written(runner, monkeypatch):
    # the calls of a program's train_step are steps: a plan counts them as its batches as written do (the limits
    # around the last step these runs take, at this writing the 128th on CPython and the 166th on the interpreter)
    source = STORED["fit_plans_own_steps"]["program"]
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", runner)
    stopped = []
    for max_steps in (127, 128, 165, 166):
        outcomes = []
        for accel in ("1", "0"):
            monkeypatch.setenv("TAPECLI_ACCEL", accel)
            try:
                result = run_source(source, "fit.py", Options(limits=Limits(max_steps=max_steps)))
                outcomes.append([str(line) for line in result.output])
            except LimitError as e:
                outcomes.append((str(e), e.line, [str(line) for line in e.output]))
        assert outcomes[0] == outcomes[1], max_steps
        stopped.append(isinstance(outcomes[0], tuple))
    assert True in stopped and False in stopped      # (the limits straddle the last step)
