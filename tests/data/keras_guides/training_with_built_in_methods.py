# After keras-io guides/training_with_built_in_methods.py ("Training & evaluation with the built-in
# methods", by fchollet, the Keras 3 version), Copyright the Keras authors, Apache License 2.0. The guide's
# code with its prose left out, up to and with "Using sample weighting and class weighting"; changes, each
# marked "tapecli:": MNIST replaced by seeded random digits of its shapes (448 training images, 128 of them
# reserved for validation, and 64 test images), the weights of each model set from NumPy's generator
# (tapecli's initializers draw other numbers than Keras's), shuffle=False in fit, the outputs collected in
# `results`. Left out: the torch and os imports (programs import tensorflow, keras, numpy and math only),
# the sections that fit on tf.data Datasets, PyDatasets and torch DataLoaders, and the guide's later
# sections (per-output metrics of a multi-output model, callbacks, checkpoints, schedules, TensorBoard).
import tensorflow as tf

import numpy as np
import keras
from keras import layers
from keras import ops

np.random.seed(1337)  # tapecli
outputs_of = {}  # tapecli: `results` is one of the guide's names here


def deterministic_weights(model):  # tapecli: weights from NumPy's generator, not the initializers'
    return [np.random.uniform(-0.1, 0.1, w.shape).astype("float32") for w in model.get_weights()]


inputs = keras.Input(shape=(784,), name="digits")
x = layers.Dense(64, activation="relu", name="dense_1")(inputs)
x = layers.Dense(64, activation="relu", name="dense_2")(x)
outputs = layers.Dense(10, activation="softmax", name="predictions")(x)

model = keras.Model(inputs=inputs, outputs=outputs)
model.set_weights(deterministic_weights(model))  # tapecli

# tapecli: (x_train, y_train), (x_test, y_test) = keras.datasets.mnist.load_data(), small and random:
x_train = np.random.randint(0, 256, size=(448, 28, 28)).astype("uint8")
y_train = np.random.randint(0, 10, size=(448,)).astype("uint8")
x_test = np.random.randint(0, 256, size=(64, 28, 28)).astype("uint8")
y_test = np.random.randint(0, 10, size=(64,)).astype("uint8")

# Preprocess the data (these are NumPy arrays)
x_train = x_train.reshape(448, 784).astype("float32") / 255  # tapecli: 448 rather than 60000
x_test = x_test.reshape(64, 784).astype("float32") / 255  # tapecli: 64 rather than 10000

y_train = y_train.astype("float32")
y_test = y_test.astype("float32")

# Reserve 10,000 samples for validation
x_val = x_train[-128:]  # tapecli: 128 rather than 10,000
y_val = y_train[-128:]
x_train = x_train[:-128]
y_train = y_train[:-128]

model.compile(
    optimizer=keras.optimizers.RMSprop(),  # Optimizer
    # Loss function to minimize
    loss=keras.losses.SparseCategoricalCrossentropy(),
    # List of metrics to monitor
    metrics=[keras.metrics.SparseCategoricalAccuracy()],
)

print("Fit model on training data")
history = model.fit(
    x_train,
    y_train,
    batch_size=64,
    epochs=2,
    # We pass some validation for
    # monitoring validation loss and metrics
    # at the end of each epoch
    validation_data=(x_val, y_val),
    shuffle=False,  # tapecli
)

history.history
outputs_of["history"] = history.history  # tapecli

# Evaluate the model on the test data using `evaluate`
print("Evaluate on test data")
results = model.evaluate(x_test, y_test, batch_size=128)
print("test loss, test acc:", results)
outputs_of["evaluate"] = results  # tapecli

# Generate predictions (probabilities -- the output of the last layer)
# on new data using `predict`
print("Generate predictions for 3 samples")
predictions = model.predict(x_test[:3])
print("predictions shape:", predictions.shape)
outputs_of["predictions"] = predictions.tolist()  # tapecli

model.compile(
    optimizer=keras.optimizers.RMSprop(learning_rate=1e-3),
    loss=keras.losses.SparseCategoricalCrossentropy(),
    metrics=[keras.metrics.SparseCategoricalAccuracy()],
)

model.compile(
    optimizer="rmsprop",
    loss="sparse_categorical_crossentropy",
    metrics=["sparse_categorical_accuracy"],
)
outputs_of["names"] = model.evaluate(x_test, y_test, return_dict=True)  # tapecli: the compiled names


def get_uncompiled_model():
    inputs = keras.Input(shape=(784,), name="digits")
    x = layers.Dense(64, activation="relu", name="dense_1")(inputs)
    x = layers.Dense(64, activation="relu", name="dense_2")(x)
    outputs = layers.Dense(10, activation="softmax", name="predictions")(x)
    model = keras.Model(inputs=inputs, outputs=outputs)
    model.set_weights(deterministic_weights(model))  # tapecli
    return model


def get_compiled_model():
    model = get_uncompiled_model()
    model.compile(
        optimizer="rmsprop",
        loss="sparse_categorical_crossentropy",
        metrics=["sparse_categorical_accuracy"],
    )
    return model


def custom_mean_squared_error(y_true, y_pred):
    return ops.mean(ops.square(y_true - y_pred), axis=-1)


model = get_uncompiled_model()
model.compile(optimizer=keras.optimizers.Adam(), loss=custom_mean_squared_error)

# We need to one-hot encode the labels to use MSE
y_train_one_hot = ops.one_hot(y_train, num_classes=10)
history = model.fit(x_train, y_train_one_hot, batch_size=64, epochs=1, shuffle=False)  # tapecli: history =
outputs_of["custom_loss_function"] = history.history  # tapecli


class CustomMSE(keras.losses.Loss):
    def __init__(self, regularization_factor=0.1, name="custom_mse"):
        super().__init__(name=name)
        self.regularization_factor = regularization_factor

    def call(self, y_true, y_pred):
        mse = ops.mean(ops.square(y_true - y_pred), axis=-1)
        reg = ops.mean(ops.square(0.5 - y_pred), axis=-1)
        return mse + reg * self.regularization_factor


model = get_uncompiled_model()
model.compile(optimizer=keras.optimizers.Adam(), loss=CustomMSE())

y_train_one_hot = ops.one_hot(y_train, num_classes=10)
history = model.fit(x_train, y_train_one_hot, batch_size=64, epochs=1, shuffle=False)  # tapecli: history =
outputs_of["custom_loss_class"] = history.history  # tapecli


class CategoricalTruePositives(keras.metrics.Metric):
    def __init__(self, name="categorical_true_positives", **kwargs):
        super().__init__(name=name, **kwargs)
        self.true_positives = self.add_variable(
            shape=(), name="ctp", initializer="zeros"
        )

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = ops.reshape(ops.argmax(y_pred, axis=1), (-1, 1))
        values = ops.cast(y_true, "int32") == ops.cast(y_pred, "int32")
        values = ops.cast(values, "float32")
        if sample_weight is not None:
            sample_weight = ops.cast(sample_weight, "float32")
            values = ops.multiply(values, sample_weight)
        self.true_positives.assign_add(ops.sum(values))

    def result(self):
        return self.true_positives

    def reset_state(self):
        # The state of the metric will be reset at the start of each epoch.
        self.true_positives.assign(0.0)


model = get_uncompiled_model()
model.compile(
    optimizer=keras.optimizers.RMSprop(learning_rate=1e-3),
    loss=keras.losses.SparseCategoricalCrossentropy(),
    metrics=[CategoricalTruePositives()],
)
history = model.fit(x_train, y_train, batch_size=64, epochs=3, shuffle=False)  # tapecli: history =
outputs_of["custom_metric"] = history.history  # tapecli


class ActivityRegularizationLayer(layers.Layer):
    def call(self, inputs):
        self.add_loss(ops.sum(inputs) * 0.1)
        return inputs  # Pass-through layer.


inputs = keras.Input(shape=(784,), name="digits")
x = layers.Dense(64, activation="relu", name="dense_1")(inputs)

# Insert activity regularization as a layer
x = ActivityRegularizationLayer()(x)

x = layers.Dense(64, activation="relu", name="dense_2")(x)
outputs = layers.Dense(10, name="predictions")(x)

model = keras.Model(inputs=inputs, outputs=outputs)
model.set_weights(deterministic_weights(model))  # tapecli
model.compile(
    optimizer=keras.optimizers.RMSprop(learning_rate=1e-3),
    loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
)

# The displayed loss will be much higher than before
# due to the regularization component.
history = model.fit(x_train, y_train, batch_size=64, epochs=1, shuffle=False)  # tapecli: history =
outputs_of["add_loss"] = history.history  # tapecli

class LogisticEndpoint(keras.layers.Layer):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)

    def call(self, targets, logits, sample_weights=None):
        # Compute the training-time loss value and add it
        # to the layer using `self.add_loss()`.
        loss = self.loss_fn(targets, logits, sample_weights)
        self.add_loss(loss)

        # Return the inference-time prediction tensor (for `.predict()`).
        return ops.softmax(logits)


inputs = keras.Input(shape=(3,), name="inputs")
targets = keras.Input(shape=(10,), name="targets")
logits = keras.layers.Dense(10)(inputs)
predictions = LogisticEndpoint(name="predictions")(targets, logits)

model = keras.Model(inputs=[inputs, targets], outputs=predictions)
model.set_weights(deterministic_weights(model))  # tapecli
model.compile(optimizer="adam")  # No loss argument!

data = {
    "inputs": np.random.random((3, 3)),
    "targets": np.random.random((3, 10)),
}
history = model.fit(data)  # tapecli: history =
outputs_of["logistic_endpoint"] = history.history  # tapecli

model = get_compiled_model()
history = model.fit(x_train, y_train, batch_size=64, validation_split=0.2, epochs=1,
                    shuffle=False)  # tapecli: history =, shuffle=False
outputs_of["validation_split"] = history.history  # tapecli

# tapecli: the sections that train on tf.data Datasets, PyDatasets and torch DataLoaders are left out (fit
# takes in-memory arrays); the NumPy examples of class and sample weights follow.
class_weight = {
    0: 1.0,
    1: 1.0,
    2: 1.0,
    3: 1.0,
    4: 1.0,
    # Set weight "2" for class "5",
    # making this class 2x more important
    5: 2.0,
    6: 1.0,
    7: 1.0,
    8: 1.0,
    9: 1.0,
}

print("Fit with class weight")
model = get_compiled_model()
history = model.fit(x_train, y_train, class_weight=class_weight, batch_size=64, epochs=1,
                    shuffle=False)  # tapecli: history =, shuffle=False
outputs_of["class_weight"] = history.history  # tapecli

sample_weight = np.ones(shape=(len(y_train),))
# tapecli: the guide writes `sample_weight[y_train == 5] = 2.0`; tapecli's NumPy arrays are not written in
# place, so the same weights are made by np.where
sample_weight = np.where(y_train == 5, 2.0, sample_weight)

print("Fit with sample weight")
model = get_compiled_model()
history = model.fit(x_train, y_train, sample_weight=sample_weight, batch_size=64, epochs=1,
                    shuffle=False)  # tapecli: history =, shuffle=False
outputs_of["sample_weight"] = history.history  # tapecli
results = outputs_of  # tapecli: what the recorder and the test read
