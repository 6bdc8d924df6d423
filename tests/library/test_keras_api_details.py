"""Details of Keras 3's API that programs print: get_config, a variable's path and dtype, History.params and the
order of its keys, LambdaCallback, clone_model, an optimizer's variables, get_weights's NumPy arrays, a subclassed
model's weights. Each program runs on the interpreter and on CPython (TAPECLI_TF_ON_CPYTHON=0 and 1); its expected
output is what Keras 3.15 under TensorFlow 2.21 printed for it."""
# ruff: noqa: E501  (the lines Keras printed, kept whole)
from __future__ import annotations

import pytest

import tapecli
from tapecli.errors import TdfError

PROGRAMS = {}
KERAS = {}     # what Keras 3.15 under TensorFlow 2.21 printed

PROGRAMS["history_order"] = """\
import numpy as np
import keras
x = np.linspace(-1, 1, 8, dtype="float32").reshape(8, 1)
y = 2 * x + 1
m = keras.Sequential([keras.Input(shape=(1,)), keras.layers.Dense(1, kernel_initializer="zeros")])
m.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse", metrics=[keras.metrics.MeanAbsoluteError(name="abs")])
h = m.fit(x, y, epochs=1, batch_size=4, shuffle=False, verbose=0)
print(list(h.history.keys()), h.params)
m.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse", metrics=["mse", keras.metrics.MeanAbsoluteError(name="zz"), "mae"])
h = m.fit(x, y, epochs=2, batch_size=4, shuffle=False, verbose=0, validation_data=(x[:4], y[:4]))
print(list(h.history.keys()), h.params)
print(list(m.evaluate(x, y, verbose=0, return_dict=True).keys()))
seen = []
cb = keras.callbacks.LambdaCallback(on_train_begin=lambda logs: seen.append("begin"),
                                    on_epoch_begin=lambda epoch, logs: seen.append(("epoch", epoch)),
                                    on_train_batch_end=lambda batch, logs: seen.append((batch, list(logs))),
                                    on_epoch_end=lambda epoch, logs: seen.append((epoch, list(logs))),
                                    on_train_end=lambda logs: seen.append(("end", list(logs))))
h = m.fit(x, y, epochs=1, batch_size=4, shuffle=False, verbose=0, callbacks=[cb], validation_split=0.5)
print(seen)
print(h.params)
"""

KERAS["history_order"] = """\
['abs', 'loss'] {'verbose': 0, 'epochs': 1, 'steps': 2}
['loss', 'mae', 'mse', 'val_loss', 'val_mae', 'val_mse', 'val_zz', 'zz'] {'verbose': 0, 'epochs': 2, 'steps': 2}
['loss', 'mae', 'mse', 'zz']
['begin', ('epoch', 0), (0, ['loss', 'mae', 'mse', 'zz']), (0, ['loss', 'mae', 'mse', 'val_loss', 'val_mae', 'val_mse', 'val_zz', 'zz']), ('end', ['loss', 'mae', 'mse', 'val_loss', 'val_mae', 'val_mse', 'val_zz', 'zz'])]
{'verbose': 0, 'epochs': 1, 'steps': 1}
"""

PROGRAMS["weights_order"] = """\
import numpy as np
import keras

class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.a = keras.layers.Dense(2)
        self.b = keras.layers.BatchNormalization()
        self.c = keras.layers.Dense(1)

    def call(self, x):
        return self.c(self.b(self.a(x)))

m = Net()
m(np.ones((2, 3), "float32"))
print([w.name for w in m.weights])
print([w.name for w in m.trainable_weights])
print([w.name for w in m.non_trainable_weights])
print([w.path for w in m.weights])
w = m.get_weights()
print(len(w), type(w[0]), w[0].shape, w[4])
s = keras.Sequential([keras.Input(shape=(3,)), keras.layers.Dense(2, name="d"), keras.layers.BatchNormalization()])
print([w.path for w in s.weights])
print(type(s.get_weights()[0]), s.layers[0].kernel.dtype, s.layers[0].kernel.name)
l = keras.layers.Dense(2, name="d")
l.build((None, 3))
print(l.kernel.path, l.bias.path, type(l.get_weights()[1]), l.kernel.dtype)
"""

KERAS["weights_order"] = """\
['kernel', 'bias', 'gamma', 'beta', 'moving_mean', 'moving_variance', 'kernel', 'bias']
['kernel', 'bias', 'gamma', 'beta', 'kernel', 'bias']
['moving_mean', 'moving_variance']
['net/dense/kernel', 'net/dense/bias', 'net/batch_normalization/gamma', 'net/batch_normalization/beta', 'net/batch_normalization/moving_mean', 'net/batch_normalization/moving_variance', 'net/dense_1/kernel', 'net/dense_1/bias']
8 <class 'numpy.ndarray'> (3, 2) [0. 0.]
['sequential/d/kernel', 'sequential/d/bias', 'sequential/batch_normalization_1/gamma', 'sequential/batch_normalization_1/beta', 'sequential/batch_normalization_1/moving_mean', 'sequential/batch_normalization_1/moving_variance']
<class 'numpy.ndarray'> float32 kernel
d/kernel d/bias <class 'numpy.ndarray'> float32
"""

PROGRAMS["optimizer_details"] = """\
import tensorflow as tf
import keras
v = tf.Variable([1.0, 2.0])
opt = keras.optimizers.Adam(0.1)
opt.apply_gradients([(tf.constant([0.1, 0.2]), v)])
print(len(opt.variables), [x.name for x in opt.variables])
print(int(opt.variables[0].numpy()), opt.variables[1].numpy())
d = keras.layers.Dense(1, name="out")
d.build((None, 2))
for opt in [keras.optimizers.SGD(0.1), keras.optimizers.SGD(0.1, momentum=0.9), keras.optimizers.RMSprop(centered=True),
            keras.optimizers.Adagrad()]:
    opt.apply_gradients([(tf.ones((2, 1)), d.kernel), (tf.ones((1,)), d.bias)])
    print([x.name for x in opt.variables])
    print(opt.get_config())
print(keras.optimizers.SGD(0.1).get_config()["learning_rate"])
s = keras.optimizers.schedules
print(s.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5).get_config()["decay_rate"])
for sch in [s.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5, staircase=True), s.PiecewiseConstantDecay([10, 20], [0.1, 0.01, 0.001]),
            s.PolynomialDecay(0.1, 100, power=2.0), s.InverseTimeDecay(0.1, 10, 0.5), s.CosineDecay(0.1, 100, warmup_target=0.2, warmup_steps=5)]:
    print(sch.get_config())
print(keras.optimizers.Adam(s.InverseTimeDecay(0.1, 10, 0.5)).get_config()["learning_rate"])
"""

KERAS["optimizer_details"] = """\
4 ['iteration', 'learning_rate', 'Variable_0_momentum', 'Variable_0_velocity']
1 0.1
['iteration', 'learning_rate']
{'name': 'sgd', 'learning_rate': 0.10000000149011612, 'weight_decay': None, 'clipnorm': None, 'global_clipnorm': None, 'clipvalue': None, 'use_ema': False, 'ema_momentum': 0.99, 'ema_overwrite_frequency': None, 'loss_scale_factor': None, 'gradient_accumulation_steps': None, 'momentum': 0.0, 'nesterov': False}
['iteration', 'learning_rate', 'out_kernel_momentum', 'out_bias_momentum']
{'name': 'sgd_1', 'learning_rate': 0.10000000149011612, 'weight_decay': None, 'clipnorm': None, 'global_clipnorm': None, 'clipvalue': None, 'use_ema': False, 'ema_momentum': 0.99, 'ema_overwrite_frequency': None, 'loss_scale_factor': None, 'gradient_accumulation_steps': None, 'momentum': 0.9, 'nesterov': False}
['iteration', 'learning_rate', 'out_kernel_velocity', 'out_bias_velocity', 'out_kernel_average_gradient', 'out_bias_average_gradient']
{'name': 'rm_sprop', 'learning_rate': 0.0010000000474974513, 'weight_decay': None, 'clipnorm': None, 'global_clipnorm': None, 'clipvalue': None, 'use_ema': False, 'ema_momentum': 0.99, 'ema_overwrite_frequency': None, 'loss_scale_factor': None, 'gradient_accumulation_steps': None, 'rho': 0.9, 'momentum': 0.0, 'epsilon': 1e-07, 'centered': True}
['iteration', 'learning_rate', 'out_kernel_accumulator', 'out_bias_accumulator']
{'name': 'adagrad', 'learning_rate': 0.0010000000474974513, 'weight_decay': None, 'clipnorm': None, 'global_clipnorm': None, 'clipvalue': None, 'use_ema': False, 'ema_momentum': 0.99, 'ema_overwrite_frequency': None, 'loss_scale_factor': None, 'gradient_accumulation_steps': None, 'initial_accumulator_value': 0.1, 'epsilon': 1e-07}
0.10000000149011612
0.5
{'initial_learning_rate': 0.1, 'decay_steps': 10, 'decay_rate': 0.5, 'staircase': True, 'name': 'ExponentialDecay'}
{'boundaries': [10, 20], 'values': [0.1, 0.01, 0.001], 'name': 'PiecewiseConstant'}
{'initial_learning_rate': 0.1, 'decay_steps': 100, 'end_learning_rate': 0.0001, 'power': 2.0, 'cycle': False, 'name': 'PolynomialDecay'}
{'initial_learning_rate': 0.1, 'decay_steps': 10, 'decay_rate': 0.5, 'staircase': False, 'name': 'InverseTimeDecay'}
{'initial_learning_rate': 0.1, 'decay_steps': 100, 'alpha': 0.0, 'name': 'CosineDecay', 'warmup_target': 0.2, 'warmup_steps': 5}
{'module': 'keras.optimizers.schedules', 'class_name': 'InverseTimeDecay', 'config': {'initial_learning_rate': 0.1, 'decay_steps': 10, 'decay_rate': 0.5, 'staircase': False, 'name': 'InverseTimeDecay'}, 'registered_name': None}
"""

PROGRAMS["variable_repr"] = """\
import keras
d = keras.layers.Dense(2, bias_initializer="ones", kernel_initializer="ones")
d.build((None, 2))
print(d.bias)
print(d.kernel)
print(repr(d.bias), str(d.kernel))
s = keras.Variable(3.0)
print(s)
"""
KERAS["variable_repr"] = """\
<Variable path=dense/bias, shape=(2,), dtype=float32, value=[1. 1.]>
<Variable path=dense/kernel, shape=(2, 2), dtype=float32, value=[[1. 1.]
 [1. 1.]]>
<Variable path=dense/bias, shape=(2,), dtype=float32, value=[1. 1.]> <Variable path=dense/kernel, shape=(2, 2), dtype=float32, value=[[1. 1.]
 [1. 1.]]>
<Variable path=variable, shape=(), dtype=float32, value=3.0>
"""

PROGRAMS["losses_order"] = """\
import tensorflow as tf
import keras
from keras import regularizers
layer = keras.layers.Dense(1, kernel_initializer="ones", kernel_regularizer=regularizers.l2(0.01),
                           activity_regularizer=regularizers.l1(0.1))
layer(tf.constant([[1.0, 2.0]]))
print([round(float(l), 4) for l in layer.losses])
m = keras.Sequential([keras.Input((2,)), keras.layers.Dense(2, kernel_initializer="ones", kernel_regularizer=regularizers.l2(0.01), activity_regularizer=regularizers.l1(0.1)),
    keras.layers.Dense(1, kernel_initializer="ones", bias_regularizer=regularizers.l1(0.5), bias_initializer="ones", activity_regularizer=regularizers.l2(0.2))])
m(tf.constant([[1.0, 2.0]]))
print([round(float(l), 4) for l in m.losses])
"""
KERAS["losses_order"] = """\
[0.3, 0.02]
[0.6, 9.8, 0.04, 0.5]
"""

PROGRAMS["activations"] = """\
import tensorflow as tf
import keras
print(keras.activations.tanh.__name__, keras.activations.relu.__name__, keras.activations.get("sigmoid").__name__)
print(keras.activations.serialize(keras.activations.relu), keras.activations.serialize(keras.activations.swish))
d = keras.layers.Dense(5, activation="tanh")
print(d.activation.__name__, keras.layers.Dense(2).activation.__name__, keras.layers.LSTM(2).recurrent_activation.__name__)
print(d.activation is keras.activations.tanh, keras.layers.LSTM(2).activation.__name__)
d2 = keras.layers.Dense.from_config(d.get_config())
print(d2.activation.__name__, keras.activations.deserialize("relu").__name__)
print(tf.keras.activations.relu is keras.activations.relu)
m = keras.Sequential([keras.Input((2,)), keras.layers.Dense(2, activation=keras.activations.relu, kernel_initializer="ones")])
print(m(tf.constant([[1.0, -3.0]])), m.layers[0].activation.__name__)
"""
KERAS["activations"] = """\
tanh relu sigmoid
relu silu
tanh linear sigmoid
True tanh
tanh relu
True
tf.Tensor([[0. 0.]], shape=(1, 2), dtype=float32) relu
"""

PROGRAMS["loss_subclass"] = """\
import numpy as np
import keras
class MyHuber(keras.losses.Loss):
    def __init__(self, delta=1.0, **kwargs):
        super().__init__(**kwargs)
        self.delta = delta
    def call(self, y_true, y_pred):
        return (y_true - y_pred) ** 2 * self.delta
    def get_config(self):
        return {**super().get_config(), "delta": self.delta}
class Plain(keras.losses.Loss):
    def call(self, y_true, y_pred):
        return (y_true - y_pred) ** 2
a = MyHuber(0.5)
b = MyHuber(0.5, name="huber_loss", reduction="sum")
c = MyHuber()
print(a.name, b.name, c.name, Plain().name, b.get_config())
print(float(b(np.array([[1.0], [2.0]]), np.array([[0.0], [0.0]]))), float(Plain()(np.array([1.0]), np.array([3.0]))))
"""
KERAS["loss_subclass"] = """\
my_huber huber_loss my_huber_1 plain {'name': 'huber_loss', 'reduction': 'sum', 'delta': 0.5}
2.5 4.0
"""

PROGRAMS["model_from_config"] = """\
import keras
from keras import layers
d2 = layers.Dense.from_config(layers.Dense(5, activation="tanh").get_config())
print(d2.activation.__name__)
inp = keras.Input((3,), name="x")
fm = keras.Model(inp, layers.Dense(1, name="o")(inp), name="fm")
fm2 = keras.Model.from_config(fm.get_config())
print([l.name for l in fm2.layers])
"""
KERAS["model_from_config"] = """\
tanh
['x', 'o']
"""

PROGRAMS["regularizer_configs"] = """\
import keras
from keras import layers, regularizers
layer = layers.Dense(3, kernel_regularizer=regularizers.l2(0.01), bias_regularizer=regularizers.L1L2(l1=0.001, l2=0.3))
print(layer.get_config()["kernel_regularizer"])
print(layer.get_config()["bias_regularizer"]["config"], regularizers.l1_l2(l1=0.1, l2=0.2).get_config())
"""
KERAS["regularizer_configs"] = """\
{'module': 'keras.regularizers', 'class_name': 'L2', 'config': {'l2': 0.01}, 'registered_name': None}
{'l1': 0.001, 'l2': 0.3} {'l1': 0.1, 'l2': 0.2}
"""


@pytest.mark.parametrize("on_cpython", ["0", "1"], ids=["interpreter", "cpython"])
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_prints_what_keras_prints(name, on_cpython, monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on_cpython)
    assert "\n".join(tapecli.run(PROGRAMS[name]).output).splitlines() == KERAS[name].splitlines()


# type() of an initializer: Keras 3's class and module (printed by Keras 3.15); `__class__` runs on CPython's run.
INITIALIZER_CLASSES = """\
import tensorflow as tf
import keras
for n in ["glorot_uniform", "zeros", "he_normal", "orthogonal", "truncated_normal", "ones"]:
    print(keras.initializers.get(n).__class__.__name__, type(keras.initializers.get(n)).__module__)
print(type(keras.initializers.Constant(2.0)).__name__, type(keras.initializers.Identity()).__module__)
"""
INITIALIZER_CLASSES_PRINTED = """\
GlorotUniform keras.src.initializers.random_initializers
Zeros keras.src.initializers.constant_initializers
HeNormal keras.src.initializers.random_initializers
Orthogonal keras.src.initializers.random_initializers
TruncatedNormal keras.src.initializers.random_initializers
Ones keras.src.initializers.constant_initializers
Constant keras.src.initializers.constant_initializers
"""


def test_an_initializers_class_is_keras_s():
    assert tapecli.run(INITIALIZER_CLASSES).output == INITIALIZER_CLASSES_PRINTED.splitlines()


# A program's Regularizer subclass that writes no get_config: Keras's Regularizer raises NotImplementedError (an
# Initializer's or Constraint's base config is {}), on both runners.
BARE_REGULARIZER = """\
import keras
import tensorflow as tf
class Bare(keras.regularizers.Regularizer):
    def __call__(self, w):
        return tf.reduce_sum(w)
print(keras.layers.Dense(2, kernel_regularizer=Bare()).get_config())
"""


@pytest.mark.parametrize("on_cpython", ["0", "1"], ids=["interpreter", "cpython"])
def test_a_program_regularizer_without_get_config_is_refused(on_cpython, monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on_cpython)
    with pytest.raises(TdfError, match="does not implement get_config"):
        tapecli.run(BARE_REGULARIZER)


# TextVectorization(ragged=True) gives the int mode's rows only (Keras's ValueError otherwise); tapecli gives the rows
# of its own splits, and refuses a program's split function clearly.
@pytest.mark.parametrize("arguments, message", [
    ('output_mode="count", ragged=True', "`ragged` must not be true"),
    ("split=lambda s: tf.strings.split(s), ragged=True", "not a program's split"),
])
def test_ragged_text_vectorization_is_refused_where_keras_gives_no_rows(arguments, message, monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", "0")
    with pytest.raises(TdfError, match=message):
        tapecli.run(f"import tensorflow as tf\nimport keras\nkeras.layers.TextVectorization({arguments})\n")


# model.to_json() writes the compile config of losses and metrics given by name; model_from_json takes a JSON text.
@pytest.mark.parametrize("on_cpython", ["0", "1"], ids=["interpreter", "cpython"])
@pytest.mark.parametrize("lines, message", [
    ('m.compile(optimizer="sgd", loss=keras.losses.MeanSquaredError())\nm.to_json()', "loss is given by name"),
    ('keras.models.model_from_json("{not json")', "takes a model's JSON text"),
    ('keras.models.model_from_json(\'{"class_name": "Dense", "config": {}}\')', "Could not locate class 'Dense'"),
])
def test_model_json_refuses_what_it_cannot_write_or_read(lines, message, on_cpython, monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on_cpython)
    program = f"import keras\nm = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])\n{lines}\n"
    with pytest.raises(TdfError, match=message):
        tapecli.run(program)
