"""TensorFlow's and Keras's random numbers as a TensorFlow program prints them: tf.random.set_seed and op seeds
(stateful ops, their kernels' states), Keras's initializers, Dropout and recurrent cells seeded by
keras.utils.set_random_seed, fit's shuffle and tf.data's shuffle; each program on both runners, its expected
output what TensorFlow 2.21 + Keras 3.15 printed (kernels/tf_random.py: tests/test_tf_random_bits.py)."""
# ruff: noqa: E501  (the programs and the lines TensorFlow printed, kept whole)
from __future__ import annotations

import pytest

import tapecli

PROGRAMS = {}

PROGRAMS['stateful_ops'] = ('import tensorflow as tf\ntf.random.set_seed(42)\nprint(tf.random.normal([3]))\nprint(tf.random.normal([3]))\nprint(tf.random.uniform([2, 2], seed=1))\nprint(tf.random.uniform([2], seed=1))\nprint(tf.random.uniform([3], minval=-1.0, maxval=1.0))\nprint(tf.random.uniform([3], 0, 10, dtype=tf.int32))\nprint(tf.random.truncated_normal([4], stddev=0.5))\nprint(tf.random.shuffle(tf.range(8)))\ntf.random.set_seed(0)\nprint(tf.random.normal([2], dtype=tf.float64))\n',
    'tf.Tensor([ 0.3274685 -0.8426258  0.3194337], shape=(3,), dtype=float32)\ntf.Tensor([ 0.08422458 -0.86090374  0.37812304], shape=(3,), dtype=float32)\ntf.Tensor(\n[[0.15012848 0.63992536]\n [0.81787777 0.34572172]], shape=(2, 2), dtype=float32)\ntf.Tensor([0.8578867 0.3187294], shape=(2,), dtype=float32)\ntf.Tensor([ 0.48273563  0.25709248 -0.9652307 ], shape=(3,), dtype=float32)\ntf.Tensor([4 0 4], shape=(3,), dtype=int32)\ntf.Tensor([ 0.00462325 -0.33103138 -0.37051344  0.5992631 ], shape=(4,), dtype=float32)\ntf.Tensor([5 1 6 7 2 3 4 0], shape=(8,), dtype=int32)\ntf.Tensor([ 1.44543381 -0.3052692 ], shape=(2,), dtype=float64)\n')

PROGRAMS['keras_layers_seeds'] = ('import numpy as np\nimport tensorflow as tf\nimport keras\nkeras.utils.set_random_seed(3)\nemb = keras.layers.Embedding(10, 4)\nconv = keras.layers.Conv2D(2, 3, kernel_initializer="he_normal")\nlstm = keras.layers.LSTM(8)\ndrop = keras.layers.Dropout(0.3)\nbn = keras.layers.BatchNormalization()\ngru = keras.layers.GRU(3)\nrnn = keras.layers.SimpleRNN(2)\ndense = keras.layers.Dense(5, kernel_initializer="glorot_normal")\nemb.build((None, 3)); conv.build((None, 6, 6, 3)); dense.build((None, 7))\nlstm.build((None, 2, 3)); rnn.build((None, 2, 3))\nprint(np.round(emb.embeddings.numpy()[:2], 6))\nprint(np.round(conv.kernel.numpy()[0, 0], 6))\nprint(np.round(dense.kernel.numpy()[:2], 6))\nprint(np.round(lstm.weights[0].numpy()[:1, :4], 6))\nprint(np.round(rnn.weights[0].numpy(), 6))\nprint(drop(tf.ones([2, 6]), training=True).numpy())\nprint(keras.initializers.GlorotUniform(seed=5)((2, 3)).numpy())\nprint(keras.initializers.RandomNormal(stddev=0.1, seed=2)((3,)).numpy(), keras.initializers.TruncatedNormal(seed=2)((3,)).numpy())\nprint(keras.initializers.RandomUniform(-1, 1, seed=4)((3,), dtype="float64").numpy())\n',
    '[[-0.000207 -0.048407  0.03193  -0.040918]\n [ 0.04021  -0.014766  0.024065  0.036363]]\n[[ 0.274612 -0.016361]\n [-0.416987  0.004079]\n [ 0.085181  0.100424]]\n[[ 0.054509  0.181338  0.154146 -0.064988 -0.824143]\n [-0.642394 -0.494071  0.08438   0.481571 -0.153824]]\n[[ 0.240216  0.226097 -0.332635  0.0466  ]]\n[[ 0.385481 -0.94582 ]\n [ 0.752258 -0.860742]\n [ 0.79299   0.334575]]\n[[0.        1.4285715 1.4285715 1.4285715 0.        0.       ]\n [1.4285715 1.4285715 1.4285715 0.        1.4285715 1.4285715]]\n[[-0.9599314   0.7266506   1.0375555 ]\n [-0.34013402  0.02279973 -0.3130291 ]]\n[-0.06394294 -0.01870057 -0.08284553] [-0.03197147 -0.00935029 -0.04142277]\n[ 0.28956546 -0.39774195 -0.22549412]\n')

PROGRAMS['dataset_shuffle'] = ('import tensorflow as tf\ntf.random.set_seed(7)\nds = tf.data.Dataset.range(10).shuffle(4)\nprint(list(ds.as_numpy_iterator()))\nprint(list(ds.as_numpy_iterator()))\nd2 = tf.data.Dataset.range(6).shuffle(6, seed=3, reshuffle_each_iteration=False).batch(2)\nprint([b.numpy().tolist() for b in d2], [b.numpy().tolist() for b in d2])\nprint(tf.random.uniform([2]))\nprint(list(tf.data.Dataset.range(5).shuffle(100, seed=1).as_numpy_iterator()))\n',
    '[np.int64(0), np.int64(2), np.int64(1), np.int64(6), np.int64(7), np.int64(8), np.int64(9), np.int64(3), np.int64(4), np.int64(5)]\n[np.int64(2), np.int64(0), np.int64(3), np.int64(4), np.int64(7), np.int64(8), np.int64(9), np.int64(6), np.int64(1), np.int64(5)]\n[[3, 4], [2, 0], [1, 5]] [[3, 4], [2, 0], [1, 5]]\ntf.Tensor([0.01905346 0.6496551 ], shape=(2,), dtype=float32)\n[np.int64(0), np.int64(4), np.int64(1), np.int64(3), np.int64(2)]\n')

PROGRAMS['fit_shuffle'] = ('import numpy as np\nimport keras\nkeras.utils.set_random_seed(0)\nmodel = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1, kernel_initializer="ones")])\nmodel.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")\nX = np.arange(6, dtype="float32").reshape(6, 1) / 6\nmodel.fit(X, X * 2, epochs=1, batch_size=1, verbose=0)\nprint(np.round(model.get_weights()[0], 5))\n',
    '[[1.20291]]\n')

PROGRAMS['dropout'] = ('import tensorflow as tf\nimport keras\nkeras.utils.set_random_seed(0)\nprint(keras.layers.Dropout(0.5)(tf.ones([8]), training=True).numpy())\n',
    '[2. 0. 2. 0. 0. 0. 0. 2.]\n')

PROGRAMS['layer_config_dtype'] = ('import keras\nclass Linear(keras.layers.Layer):\n    def get_config(self):\n        return super().get_config()\nprint(Linear().get_config())\nd = keras.layers.Dense(2)\nprint(Linear().get_config())\nm = keras.metrics.Mean()\nprint(Linear().get_config())\nprint(keras.layers.Dense(2).get_config()["dtype"])\n',
    "{'name': 'linear', 'trainable': True, 'dtype': {'module': 'keras', 'class_name': 'DTypePolicy', 'config': {'name': 'float32'}, 'registered_name': None}}\n{'name': 'linear_1', 'trainable': True, 'dtype': {'module': 'keras', 'class_name': 'DTypePolicy', 'config': {'name': 'float32'}, 'registered_name': None}}\n{'name': 'linear_2', 'trainable': True, 'dtype': {'module': 'keras', 'class_name': 'DTypePolicy', 'config': {'name': 'float32'}, 'registered_name': None}}\n{'module': 'keras', 'class_name': 'DTypePolicy', 'config': {'name': 'float32'}, 'registered_name': None}\n")

PROGRAMS["stateless_ops"] = ('import tensorflow as tf\nprint(tf.random.stateless_normal([3], seed=[1, 2]))\nprint(tf.random.stateless_uniform([2, 2], seed=[5, 7], minval=-1.0, maxval=1.0, dtype=tf.float64))\nprint(tf.random.stateless_uniform([4], seed=[3, 4], minval=0, maxval=10, dtype=tf.int32))\nprint(tf.random.stateless_truncated_normal([3], seed=[9, 1], stddev=0.5))\n',
    'tf.Tensor([0.5441101  0.20738031 0.07356432], shape=(3,), dtype=float32)\ntf.Tensor(\n[[ 0.9263207  -0.51279759]\n [-0.71052142 -0.80802351]], shape=(2, 2), dtype=float64)\ntf.Tensor([3 7 2 9], shape=(4,), dtype=int32)\ntf.Tensor([0.13203986 0.15103474 0.04800246], shape=(3,), dtype=float32)\n')

PROGRAMS["keras_random"] = ('import keras\nprint(keras.random.normal((3,), seed=1))\nimport tensorflow as tf\nprint(tf.keras.random.uniform((2,), seed=7), tf.random.normal((2,), seed=1).shape)\nprint(keras.random.uniform((2,), minval=-1, maxval=1, seed=7))\nprint(keras.random.truncated_normal((3,), seed=2))\ng = keras.random.SeedGenerator(1337)\nprint(keras.random.normal((2,), seed=g), keras.random.normal((2,), seed=g))\nprint(keras.random.dropout(keras.ops.ones((6,)), rate=0.5, seed=3))\nkeras.utils.set_random_seed(4)\nprint(keras.random.normal((2,)), keras.random.normal((2,)))\nprint(keras.random.shuffle(keras.ops.arange(6), seed=5))\nprint(keras.random.randint((4,), 0, 10, seed=6))\n',
    'tf.Tensor([ 0.1266503  -0.49301657  0.6311907 ], shape=(3,), dtype=float32)\ntf.Tensor([0.7470788 0.6721802], shape=(2,), dtype=float32) (2,)\ntf.Tensor([0.49415755 0.34436035], shape=(2,), dtype=float32)\ntf.Tensor([-0.6394294  -0.18700573 -0.82845527], shape=(3,), dtype=float32)\ntf.Tensor([ 0.6077996 -0.8891753], shape=(2,), dtype=float32) tf.Tensor([0.8211102  0.09179038], shape=(2,), dtype=float32)\ntf.Tensor([0. 2. 2. 2. 0. 0.], shape=(6,), dtype=float32)\ntf.Tensor([-0.53896874 -0.74764484], shape=(2,), dtype=float32) tf.Tensor([-0.8096061  -0.10768199], shape=(2,), dtype=float32)\ntf.Tensor([0 3 5 4 1 2], shape=(6,), dtype=int32)\ntf.Tensor([5 3 0 3], shape=(4,), dtype=int32)\n')
PROGRAMS["positional_dtype_and_keyword_seed"] = ('import tensorflow as tf\ntf.random.set_seed(5)\nprint(tf.random.normal([2,2], 0, 1, tf.float32, seed=1))\nprint(tf.random.uniform([2], 0, 1, tf.float64))\nprint(tf.random.uniform(shape=[], maxval=3, dtype=tf.int32, seed=1))\n',
    'tf.Tensor(\n[[-1.3768897  -0.01258316]\n [-0.169515    1.0824056 ]], shape=(2, 2), dtype=float32)\ntf.Tensor([0.01114544 0.06765832], shape=(2,), dtype=float64)\ntf.Tensor(0, shape=(), dtype=int32)\n')


@pytest.mark.parametrize("on_cpython", ["0", "1"], ids=["interpreter", "cpython"])
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_prints_what_tensorflow_printed(name, on_cpython, monkeypatch):
    monkeypatch.setenv("TAPECLI_TF_ON_CPYTHON", on_cpython)
    source, printed = PROGRAMS[name]
    assert "\n".join(tapecli.run(source).output) == printed.rstrip("\n")
