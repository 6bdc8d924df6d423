# After keras-io guides/functional_api.py ("The Functional API", by fchollet), Copyright the Keras authors,
# Apache License 2.0. The guide's code with its prose left out; changes, each marked "tapecli:": MNIST and
# CIFAR10 replaced by seeded random data of their shapes (a few hundred samples), the weights of the models
# whose training is compared set from NumPy's generator (tapecli's initializers draw other numbers than
# Keras's), shuffle=False in fit, the outputs collected in `results`. Left out: plot_model and
# model.save/load_model (files), the autoencoders (Conv2DTranspose, which Keras-lite lacks), VGG19 (a
# download), and serializing a functional model with get_config/from_config.
import numpy as np
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import layers

np.random.seed(1337)  # tapecli
results = {}  # tapecli


def deterministic_weights(model):  # tapecli: weights from NumPy's generator, not the initializers'
    return [np.random.uniform(-0.1, 0.1, w.shape).astype("float32") for w in model.get_weights()]


def params(model):  # tapecli: what summary() counts, as a number
    return sum(int(tf.size(w)) for w in model.weights)


inputs = keras.Input(shape=(784,))

# Just for demonstration purposes.
img_inputs = keras.Input(shape=(32, 32, 3))

inputs.shape

inputs.dtype
results["input"] = [list(inputs.shape), list(img_inputs.shape), str(inputs.dtype)]  # tapecli

dense = layers.Dense(64, activation="relu")
x = dense(inputs)

x = layers.Dense(64, activation="relu")(x)
outputs = layers.Dense(10)(x)

model = keras.Model(inputs=inputs, outputs=outputs, name="mnist_model")

model.summary()
results["mnist_model"] = [model.name, len(model.layers), params(model)]  # tapecli

# tapecli: (x_train, y_train), (x_test, y_test) = keras.datasets.mnist.load_data(), small and random:
x_train = np.random.randint(0, 256, size=(320, 28, 28)).astype("uint8")
y_train = np.random.randint(0, 10, size=(320,)).astype("uint8")
x_test = np.random.randint(0, 256, size=(64, 28, 28)).astype("uint8")
y_test = np.random.randint(0, 10, size=(64,)).astype("uint8")

x_train = x_train.reshape(320, 784).astype("float32") / 255  # tapecli: 320 rather than 60000
x_test = x_test.reshape(64, 784).astype("float32") / 255  # tapecli: 64 rather than 10000

model.set_weights(deterministic_weights(model))  # tapecli
model.compile(
    loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    optimizer=keras.optimizers.RMSprop(),
    metrics=["accuracy"],
)

history = model.fit(x_train, y_train, batch_size=64, epochs=2, validation_split=0.2,
                    shuffle=False)  # tapecli: shuffle=False

test_scores = model.evaluate(x_test, y_test, verbose=2)
print("Test loss:", test_scores[0])
print("Test accuracy:", test_scores[1])
results["mnist_history"] = history.history  # tapecli
results["mnist_test"] = test_scores  # tapecli


def get_model():
    inputs = keras.Input(shape=(128,))
    outputs = layers.Dense(1)(inputs)
    return keras.Model(inputs, outputs)


model1 = get_model()
model2 = get_model()
model3 = get_model()

inputs = keras.Input(shape=(128,))
y1 = model1(inputs)
y2 = model2(inputs)
y3 = model3(inputs)
outputs = layers.average([y1, y2, y3])
ensemble_model = keras.Model(inputs=inputs, outputs=outputs)
results["ensemble"] = [len(ensemble_model.layers), params(ensemble_model),
                       list(ensemble_model(np.ones((2, 128), "float32")).shape)]  # tapecli

num_tags = 12  # Number of unique issue tags
num_words = 10000  # Size of vocabulary obtained when preprocessing text data
num_departments = 4  # Number of departments for predictions

title_input = keras.Input(
    shape=(None,), name="title"
)  # Variable-length sequence of ints
body_input = keras.Input(shape=(None,), name="body")  # Variable-length sequence of ints
tags_input = keras.Input(
    shape=(num_tags,), name="tags"
)  # Binary vectors of size `num_tags`

# Embed each word in the title into a 64-dimensional vector
title_features = layers.Embedding(num_words, 64)(title_input)
# Embed each word in the text into a 64-dimensional vector
body_features = layers.Embedding(num_words, 64)(body_input)

# Reduce sequence of embedded words in the title into a single 128-dimensional vector
title_features = layers.LSTM(128)(title_features)
# Reduce sequence of embedded words in the body into a single 32-dimensional vector
body_features = layers.LSTM(32)(body_features)

# Merge all available features into a single large vector via concatenation
x = layers.concatenate([title_features, body_features, tags_input])

# Stick a logistic regression for priority prediction on top of the features
priority_pred = layers.Dense(1, name="priority")(x)
# Stick a department classifier on top of the features
department_pred = layers.Dense(num_departments, name="department")(x)

# Instantiate an end-to-end model predicting both priority and department
model = keras.Model(
    inputs=[title_input, body_input, tags_input],
    outputs=[priority_pred, department_pred],
)
model.set_weights(deterministic_weights(model))  # tapecli
results["ticket_model"] = [len(model.layers), params(model)]  # tapecli

model.compile(
    optimizer=keras.optimizers.RMSprop(1e-3),
    loss=[
        keras.losses.BinaryCrossentropy(from_logits=True),
        keras.losses.CategoricalCrossentropy(from_logits=True),
    ],
    loss_weights=[1.0, 0.2],
)

model.compile(
    optimizer=keras.optimizers.RMSprop(1e-3),
    loss={
        "priority": keras.losses.BinaryCrossentropy(from_logits=True),
        "department": keras.losses.CategoricalCrossentropy(from_logits=True),
    },
    loss_weights={"priority": 1.0, "department": 0.2},
)

# Dummy input data
title_data = np.random.randint(num_words, size=(64, 10))  # tapecli: 64 rather than 1280 samples
body_data = np.random.randint(num_words, size=(64, 20))  # tapecli: and bodies of 20 words, not 100
tags_data = np.random.randint(2, size=(64, num_tags)).astype("float32")

# Dummy target data
priority_targets = np.random.random(size=(64, 1))
dept_targets = np.random.randint(2, size=(64, num_departments))

history = model.fit(  # tapecli: history =
    {"title": title_data, "body": body_data, "tags": tags_data},
    {"priority": priority_targets, "department": dept_targets},
    epochs=2,
    batch_size=32,
    shuffle=False,  # tapecli
)
results["ticket_history"] = history.history  # tapecli

inputs = keras.Input(shape=(32, 32, 3), name="img")
x = layers.Conv2D(32, 3, activation="relu")(inputs)
x = layers.Conv2D(64, 3, activation="relu")(x)
block_1_output = layers.MaxPooling2D(3)(x)

x = layers.Conv2D(64, 3, activation="relu", padding="same")(block_1_output)
x = layers.Conv2D(64, 3, activation="relu", padding="same")(x)
block_2_output = layers.add([x, block_1_output])

x = layers.Conv2D(64, 3, activation="relu", padding="same")(block_2_output)
x = layers.Conv2D(64, 3, activation="relu", padding="same")(x)
block_3_output = layers.add([x, block_2_output])

x = layers.Conv2D(64, 3, activation="relu")(block_3_output)
x = layers.GlobalAveragePooling2D()(x)
x = layers.Dense(256, activation="relu")(x)
x = layers.Dropout(0.5)(x)
outputs = layers.Dense(10)(x)

model = keras.Model(inputs, outputs, name="toy_resnet")
model.summary()
results["toy_resnet"] = [len(model.layers), params(model)]  # tapecli

# tapecli: (x_train, y_train), (x_test, y_test) = keras.datasets.cifar10.load_data(), small and random:
x_train = np.random.randint(0, 256, size=(40, 32, 32, 3)).astype("uint8")
y_train = np.random.randint(0, 10, size=(40, 1)).astype("uint8")

x_train = x_train.astype("float32") / 255.0
y_train = keras.utils.to_categorical(y_train, 10)

model.compile(
    optimizer=keras.optimizers.RMSprop(1e-3),
    loss=keras.losses.CategoricalCrossentropy(from_logits=True),
    metrics=["acc"],
)
# We restrict the data to the first 1000 samples so as to limit execution time
# on Colab. Try to train on the entire dataset until convergence!
history = model.fit(x_train[:1000], y_train[:1000], batch_size=64, epochs=1, validation_split=0.2)
results["toy_resnet_fit"] = sorted(history.history)  # tapecli: Dropout draws, so names only

# Embedding for 1000 unique words mapped to 128-dimensional vectors
shared_embedding = layers.Embedding(1000, 128)

# Variable-length sequence of integers
text_input_a = keras.Input(shape=(None,), dtype="int32")

# Variable-length sequence of integers
text_input_b = keras.Input(shape=(None,), dtype="int32")

# Reuse the same layer to encode both inputs
encoded_input_a = shared_embedding(text_input_a)
encoded_input_b = shared_embedding(text_input_b)
results["shared"] = [list(encoded_input_a.shape), list(encoded_input_b.shape)]  # tapecli


class CustomDense(layers.Layer):
    def __init__(self, units=32):
        super(CustomDense, self).__init__()
        self.units = units

    def build(self, input_shape):
        self.w = self.add_weight(
            shape=(input_shape[-1], self.units),
            initializer="random_normal",
            trainable=True,
        )
        self.b = self.add_weight(
            shape=(self.units,), initializer="random_normal", trainable=True
        )

    def call(self, inputs):
        return tf.matmul(inputs, self.w) + self.b


inputs = keras.Input((4,))
outputs = CustomDense(10)(inputs)

model = keras.Model(inputs, outputs)
results["custom_dense"] = [list(outputs.shape), params(model)]  # tapecli

units = 32
timesteps = 10
input_dim = 5

# Define a Functional model
inputs = keras.Input((None, units))
x = layers.GlobalAveragePooling1D()(inputs)
outputs = layers.Dense(1)(x)
model = keras.Model(inputs, outputs)


class CustomRNN(layers.Layer):
    def __init__(self):
        super(CustomRNN, self).__init__()
        self.units = units
        self.projection_1 = layers.Dense(units=units, activation="tanh")
        self.projection_2 = layers.Dense(units=units, activation="tanh")
        # Our previously-defined Functional model
        self.classifier = model

    def call(self, inputs):
        outputs = []
        state = tf.zeros(shape=(inputs.shape[0], self.units))
        for t in range(inputs.shape[1]):
            x = inputs[:, t, :]
            h = self.projection_1(x)
            y = h + self.projection_2(state)
            state = y
            outputs.append(y)
        features = tf.stack(outputs, axis=1)
        print(features.shape)
        return self.classifier(features)


rnn_model = CustomRNN()
_ = rnn_model(tf.zeros((1, timesteps, input_dim)))
results["custom_rnn"] = [list(_.shape), len(rnn_model.weights)]  # tapecli

units = 32
timesteps = 10
input_dim = 5
batch_size = 16


class CustomRNN(layers.Layer):
    def __init__(self):
        super(CustomRNN, self).__init__()
        self.units = units
        self.projection_1 = layers.Dense(units=units, activation="tanh")
        self.projection_2 = layers.Dense(units=units, activation="tanh")
        self.classifier = layers.Dense(1)

    def call(self, inputs):
        outputs = []
        state = tf.zeros(shape=(inputs.shape[0], self.units))
        for t in range(inputs.shape[1]):
            x = inputs[:, t, :]
            h = self.projection_1(x)
            y = h + self.projection_2(state)
            state = y
            outputs.append(y)
        features = tf.stack(outputs, axis=1)
        return self.classifier(features)


# Note that you specify a static batch size for the inputs with the `batch_shape`
# arg, because the inner computation of `CustomRNN` requires a static batch size
# (when you create the `state` zeros tensor).
inputs = keras.Input(batch_shape=(batch_size, timesteps, input_dim))
x = layers.Conv1D(32, 3)(inputs)
outputs = CustomRNN()(x)

model = keras.Model(inputs, outputs)

rnn_model = CustomRNN()
_ = rnn_model(tf.zeros((1, 10, 5)))
results["functional_rnn"] = [list(outputs.shape), params(model), list(_.shape)]  # tapecli
