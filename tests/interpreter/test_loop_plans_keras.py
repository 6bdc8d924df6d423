"""Loop plans over the Keras surface: random training loops (layers, functional models, recurrent layers,
optimizers, losses, metrics) give the bits they give as written, planned or not; and the layers a plan may
take are those whose calls compute by kernels alone."""
import textwrap

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from interpreter.test_loop_plans import KERAS, _compared, _run, _state, runner  # noqa: F401  (runner: each test on both runners)
from conftest import fast_paths

pytestmark = [fast_paths]

ACTIVATIONS = ["None", '"relu"', '"tanh"', '"sigmoid"', '"softmax"', '"gelu"', '"elu"', '"selu"', '"softplus"',
               '"swish"', '"leaky_relu"', '"linear"']
# layers between the input's and the output's, for inputs of shape [batch, features]
FLAT_LAYERS = ['tf.keras.layers.Dense(5, activation={act})', 'tf.keras.layers.Dense(4, activation={act}, use_bias=False)',
               'tf.keras.layers.Activation({act})', "tf.keras.layers.LeakyReLU(0.2)", "tf.keras.layers.ELU()",
               "tf.keras.layers.Softmax()", "tf.keras.layers.Identity()", "tf.keras.layers.PReLU()",
               "tf.keras.layers.Rescaling(0.5, 0.1)", "tf.keras.layers.UnitNormalization()",
               "tf.keras.layers.ReLU(max_value=1.0)", "tf.keras.layers.LayerNormalization()",
               "tf.keras.layers.BatchNormalization()", "tf.keras.layers.Dropout(0.25)",
               "tf.keras.layers.GaussianNoise(0.2)"]
# layers of images: before a Conv2D, and from its output to [batch, features]
IMAGE_LAYERS = ["tf.keras.layers.ZeroPadding2D(1)", "tf.keras.layers.Cropping2D(1)", "tf.keras.layers.UpSampling2D(2)",
                "tf.keras.layers.Permute((2, 1, 3))"]
POOLING = ["tf.keras.layers.MaxPooling2D(2)", "tf.keras.layers.AveragePooling2D(2)"]
TO_FLAT = ["tf.keras.layers.Flatten()", "tf.keras.layers.GlobalAveragePooling2D()",
           "tf.keras.layers.GlobalMaxPooling2D()"]
OPTIMIZERS = ["Adam(learning_rate=0.01)", "Adam(learning_rate=0.01, amsgrad=True)", "AdamW(learning_rate=0.01)",
              "SGD(learning_rate=0.1, momentum=0.9, nesterov=True)", "RMSprop(learning_rate=0.01, centered=True)",
              "Adagrad(learning_rate=0.1)", "Adamax(learning_rate=0.01)", "Nadam(learning_rate=0.01)",
              "Adam(learning_rate=0.01, clipnorm=0.5)", "SGD(learning_rate=0.1, clipvalue=0.01)",
              "Adam(learning_rate=tf.keras.optimizers.schedules.ExponentialDecay(0.01, 3, 0.5))"]
# (loss, labels: sparse integers or one-hot, and whether the model ends in a softmax); a loss may be NaN
LOSSES = [("SparseCategoricalCrossentropy(from_logits=True)", "sparse", False),
          ("SparseCategoricalCrossentropy()", "sparse", True),
          ("CategoricalCrossentropy(from_logits=True, label_smoothing=0.1)", "one_hot", False),
          ("MeanSquaredError()", "one_hot", False), ("Huber()", "one_hot", False),
          ("BinaryCrossentropy(from_logits=True)", "one_hot", False), ("KLDivergence()", "one_hot", True),
          ("CosineSimilarity()", "one_hot", False)]
# a term added to the loss: the math builtins with negative literals (an axis, bounds)
PENALTIES = ["", " + 0.01 * tf.reduce_mean(tf.reduce_sum(logits, axis=-1))",
             " + 0.01 * tf.reduce_mean(tf.clip_by_value(logits, -1.0, 1.0))",
             " + 0.001 * tf.reduce_sum(tf.square(logits - 1.0))",
             " + 0.01 * tf.reduce_mean(tf.nn.softmax(logits, axis=-1) * -1.0)"]
# what the loop does besides its step (each: lines of the body)
EXTRAS = ["losses.append(loss)", "metric.update_state(loss)", "ran = metric(loss)",
          "ran = metric(loss)\nlosses.append(ran * 2.0)", "accuracy.update_state(labels, logits)",
          "if step % 3 == 0:\n    print(step, metric.result())", "if step % 4 == 0:\n    metric.reset_state()",
          "count = opt.apply_gradients(zip([g * 0.0 for g in grads], model.trainable_variables))",
          "losses.append(tf.random.normal((2,)))", "losses.append(tf.random.uniform((2,), seed=5) + loss)"]

# test_loop_plans.KERAS with its model, loss and labels drawn, two metrics made, and the lines drawn at its end
LOOP = (KERAS.replace("Y = tf.random.uniform", "labels = tf.random.uniform")
        .replace("model = tf.keras.Sequential([{layers}])", "Y = {y}\n{model}")
        .replace("SparseCategoricalCrossentropy(from_logits=True)", "{loss}")
        .replace("loss = loss_fn(Y, logits)", "loss = loss_fn(Y, logits){penalty}")
        .replace("losses = []", "metric = tf.keras.metrics.Mean()\naccuracy = tf.keras.metrics.SparseCategoricalAccuracy()\n"
                                "losses = []")
        .replace("    losses.append(loss)\n", "{extras}\n"))


def _output(softmax) -> str:
    """The model's last layer: three logits, or three probabilities."""
    return 'tf.keras.layers.Dense(3, activation="softmax")' if softmax else "tf.keras.layers.Dense(3)"


@st.composite
def _sequential(draw, softmax):
    """(the input's shape, a Sequential model's line)."""
    batch = draw(st.sampled_from([4, 6]))
    layers = []
    if draw(st.booleans()):
        side = draw(st.sampled_from([7, 8]))
        shape = (batch, side, side, draw(st.sampled_from([1, 2])))
        if draw(st.booleans()):
            layers.append(draw(st.sampled_from(IMAGE_LAYERS)))
        padding = draw(st.sampled_from(['"valid"', '"same"']))
        layers.append(f"tf.keras.layers.Conv2D(3, 3, activation={draw(st.sampled_from(ACTIVATIONS[:4]))}, "
                      f"padding={padding})")
        if draw(st.booleans()):
            layers.append(draw(st.sampled_from(POOLING)))
        layers.append(draw(st.sampled_from(TO_FLAT)))
    else:
        shape = (batch, draw(st.integers(3, 6)))
    for layer in draw(st.lists(st.sampled_from(FLAT_LAYERS), max_size=2)):
        layers.append(layer.format(act=draw(st.sampled_from(ACTIVATIONS))))
    layers.append(_output(softmax))
    return shape, f"model = tf.keras.Sequential([{', '.join(layers)}])"


@st.composite
def _recurrent(draw, softmax):
    rnn = draw(st.sampled_from(["SimpleRNN", "LSTM", "GRU"]))
    sequences = draw(st.booleans())
    layers = [f"tf.keras.layers.{rnn}(4, return_sequences={sequences})"]
    if sequences:
        layers.append("tf.keras.layers.Flatten()")
    layers.append(_output(softmax))
    return (4, draw(st.integers(2, 3)), 3), f"model = tf.keras.Sequential([{', '.join(layers)}])"


@st.composite
def _functional(draw, softmax):
    merge = draw(st.sampled_from(["Add()", "Subtract()", "Multiply()", "Average()", "Maximum()", "Minimum()",
                                  "Concatenate()", "Dot(axes=1)"]))
    act = draw(st.sampled_from(ACTIVATIONS[:4]))
    return (6, 4), textwrap.dedent(f"""\
        inputs = tf.keras.Input(shape=(4,))
        a = tf.keras.layers.Dense(5, activation={act})(inputs)
        b = tf.keras.layers.Dense(5)(inputs)
        outputs = {_output(softmax)}(tf.keras.layers.{merge}([a, b]))
        model = tf.keras.Model(inputs, outputs)""")


@st.composite
def _subclassed(draw, softmax):
    act = draw(st.sampled_from(ACTIVATIONS[:4]))
    return (6, 4), textwrap.dedent(f"""\
        class Net(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.hidden = tf.keras.layers.Dense(5, activation={act})
                self.last = {_output(softmax)}

            def call(self, x, training=False):
                return self.last(self.hidden(x))

        model = Net()""")


@st.composite
def _programs(draw):
    loss, labels, softmax = draw(st.sampled_from(LOSSES))
    shape, model = draw(st.one_of(_sequential(softmax), _recurrent(softmax), _functional(softmax),
                                  _subclassed(softmax)))
    extras = draw(st.lists(st.sampled_from(EXTRAS if labels == "sparse" else EXTRAS[:4] + EXTRAS[5:]),
                           max_size=2, unique=True))
    return LOOP.format(x_shape=shape, batch=shape[0], model=model, loss=loss,
                       y="labels" if labels == "sparse" else "tf.one_hot(labels, 3)",
                       optimizer=draw(st.sampled_from(OPTIMIZERS)), steps=draw(st.integers(6, 9)),
                       penalty=draw(st.sampled_from(PENALTIES)),
                       extras=textwrap.indent("\n".join(extras), "    "))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(program=_programs())
def test_random_keras_training_loops_give_the_bits_they_have_as_written(program, monkeypatch):
    planned, written = _run(program, True, monkeypatch), _run(program, False, monkeypatch)
    assert _state(planned) == _state(written), program
    assert planned.interpreter.output == written.interpreter.output


STEP = """
import tensorflow as tf
X = tf.random.normal((6, 4), seed=1)
Y = tf.random.uniform((6,), maxval=3, dtype=tf.int32, seed=2)
{model}
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
opt = tf.keras.optimizers.Adam(learning_rate=0.01)
train_loss = tf.keras.metrics.Mean()
train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy()
for step in range(9):
    with tf.GradientTape() as tape:
        logits = model(X, training=True)
        loss = loss_fn(Y, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    {step}
    {after}
"""
SEQUENTIAL = 'model = tf.keras.Sequential([tf.keras.layers.LayerNormalization(), tf.keras.layers.Dense(3)])'


@pytest.mark.parametrize("model, replayed", [
    (SEQUENTIAL, 6),
    ("inputs = tf.keras.Input(shape=(4,))\n"
     "model = tf.keras.Model(inputs, tf.keras.layers.Dense(3)(tf.keras.layers.Concatenate()([inputs, inputs])))", 6),
    ("model = tf.keras.Sequential([tf.keras.layers.Reshape((2, 2)), tf.keras.layers.GRU(3)])", 6),
    ("model = tf.keras.Sequential([tf.keras.layers.Dropout(0.5), tf.keras.layers.Dense(3)])", 6),
    ("model = tf.keras.Sequential([tf.keras.layers.BatchNormalization(), tf.keras.layers.Dense(3)])", 6),
], ids=["layer normalization", "functional", "recurrent", "dropout", "batch normalization"])
def test_a_model_of_layers_that_compute_by_kernels_is_planned(model, replayed, monkeypatch):
    step = "opt.apply_gradients(zip(grads, model.trainable_variables))"
    _compared(STEP.format(model=model, step=step, after="pass"), monkeypatch, replayed)


def test_a_plan_updates_the_metrics_of_the_loop_at_every_iteration(monkeypatch):
    # the custom training loop of TensorFlow's tutorials: the metrics' updates are effects, made again
    after = "train_loss(loss)\n    train_accuracy.update_state(Y, logits)"
    planned, _ = _compared(STEP.format(model=SEQUENTIAL, step="opt.apply_gradients(zip(grads, model.trainable_variables))",
                                       after=after), monkeypatch, 6)
    metrics = {name: planned.scope.vars[name] for name in ("train_loss", "train_accuracy")}
    assert [m.count for m in metrics.values()] == [9, 9 * 6]


@pytest.mark.parametrize("step, after", [
    ("count = opt.apply_gradients(zip(grads, model.trainable_variables))", "pass"),
    ("opt.apply_gradients(zip(grads, model.trainable_variables))", "mean = train_loss(loss)"),
], ids=["an optimizer's step count", "a metric's result"])
def test_a_name_bound_to_what_an_effect_returned_is_the_last_iteration_s(step, after, monkeypatch):
    # the effect is made again at every iteration, its result dropped: the last iteration runs as written, so
    # the name is bound to its result (it had been the traced iteration's)
    planned, written = _compared(STEP.format(model=SEQUENTIAL, step=step, after=after), monkeypatch, 5)
    name = "count" if "count" in step else "mean"
    assert planned.scope.vars[name].value == written.scope.vars[name].value
    if name == "count":
        assert planned.scope.vars[name].value == 9


@pytest.mark.parametrize("term", ["tf.reduce_sum(logits, axis=-1)", "tf.clip_by_value(logits, -1.0, 1.0)",
                                  "tf.random.uniform((6, 3), minval=-0.1, maxval=0.1)"])
def test_a_negative_literal_is_a_constant_to_a_plan(term, monkeypatch):
    # made by a kernel while a loop traces (-1 is neg(1)), it is made of constants alone: the same at every
    # iteration, so a call may read it into Python (an axis, a bound)
    program = STEP.format(model=SEQUENTIAL, step="opt.apply_gradients(zip(grads, model.trainable_variables))",
                          after="pass").replace("loss = loss_fn(Y, logits)",
                                                f"loss = loss_fn(Y, logits) + 0.01 * tf.reduce_mean({term})")
    _compared(program, monkeypatch, 6)


def test_a_value_an_effect_returned_that_a_kernel_reads_leaves_the_loop_as_written(monkeypatch):
    _compared(STEP.format(model=SEQUENTIAL, step="opt.apply_gradients(zip(grads, model.trainable_variables))",
                          after="total = train_loss(loss) * 2.0"), monkeypatch, 0)


@pytest.mark.parametrize("layers", [
    "tf.keras.layers.BatchNormalization(), tf.keras.layers.Dense(3)",
    "tf.keras.layers.Dense(5), tf.keras.layers.BatchNormalization(momentum=0.9, center=False), "
    "tf.keras.layers.Activation('relu'), tf.keras.layers.Dense(3)",
])
def test_batch_normalization_s_moving_statistics_are_updated_by_the_plan(layers, monkeypatch):
    # kernels.updated: the moving statistics' updates are steps of the plan, from each iteration's batch
    # statistics; an evaluation of the model (training=False) after the step reads the new ones
    after = "evaluated = model(X, training=False)"
    planned, written = _compared(STEP.format(model=f"model = tf.keras.Sequential([{layers}])",
                                             step="opt.apply_gradients(zip(grads, model.trainable_variables))",
                                             after=after), monkeypatch, 6)
    moving = [v for v in planned.context.variables if v.name.endswith("moving_mean")]
    assert moving and all(v.version == 9 for v in moving)


SUBCLASSED = '''
class Net(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(5, activation="relu")
        self.out = tf.keras.layers.Dense(3)

    def call(self, x, training=False):
{body}

model = Net()'''
MODULE = '''
class Net(tf.Module):
    def __init__(self):
        self.w = tf.Variable(tf.random.normal((4, 3), seed=3))
        self.b = tf.Variable(tf.zeros((3,)))

    def __call__(self, x):
        return tf.matmul(x, self.w) + self.b

model = Net()'''


@pytest.mark.parametrize("model, replayed", [
    (SUBCLASSED.format(body="        return self.out(self.hidden(x))"), 6),
    (SUBCLASSED.format(body="        h = self.hidden(x)\n        return self.out(h * 0.5)"), 6),
    (MODULE, 6),
    (SUBCLASSED.format(body="        if training:\n            x = x * 0.5\n        return self.out(self.hidden(x))"), 0),
], ids=["keras call", "keras call of two statements", "tf.Module __call__", "a call that branches"])
def test_a_subclassed_model_s_call_is_taken_into_the_plan(model, replayed, monkeypatch):
    step = "opt.apply_gradients(zip(grads, model.trainable_variables))"
    program = STEP.format(model=textwrap.dedent(model), step=step, after="pass")
    if model is MODULE:         # (a tf.Module's __call__ takes no training flag)
        program = program.replace("model(X, training=True)", "model(X)")
    _compared(program, monkeypatch, replayed)
