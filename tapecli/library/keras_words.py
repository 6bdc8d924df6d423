"""The first word of every name Keras-lite registers (``keras_names``: its layers, models, losses, optimizers,
metrics, initializers, schedules and base classes; ``layers.add`` gives ``layers``), known without importing it.
Importing Keras-lite costs a run's start-up about 20 ms, as much as the whole interpreter: a program whose text
has none of these words runs without it (``interpreter/registry.py``, ``defer``). tests/test_startup.py checks
this list against what ``keras_names`` registers."""

WORDS = frozenset((
    'AUC', 'Accuracy', 'Activation', 'Adadelta', 'Adagrad', 'Adam', 'AdamW', 'Adamax', 'Add', 'Average',
    'AveragePooling1D', 'AveragePooling2D', 'AveragePooling3D', 'AvgPool1D', 'AvgPool2D', 'AvgPool3D',
    'BatchNormalization', 'BinaryAccuracy', 'BinaryCrossentropy', 'BinaryFocalCrossentropy', 'BinaryIoU',
    'CategoricalAccuracy', 'CategoricalCrossentropy', 'CategoricalFocalCrossentropy',
    'CategoricalGeneralizedCrossEntropy', 'Concatenate', 'ConcordanceCorrelation', 'Constant', 'Conv1D',
    'Conv1DTranspose', 'Conv2D', 'Conv2DTranspose', 'Conv3D', 'Conv3DTranspose', 'Convolution1D',
    'Convolution1DTranspose', 'Convolution2D', 'Convolution2DTranspose', 'Convolution3D', 'Convolution3DTranspose',
    'CosineDecay', 'Cropping1D', 'Cropping2D', 'Cropping3D', 'Dense', 'DepthwiseConv1D', 'DepthwiseConv2D', 'Dice',
    'Dot', 'Dropout', 'ELU', 'Embedding', 'ExponentialDecay', 'F1Score', 'FBetaScore', 'FalseNegatives',
    'FalsePositives', 'Flatten', 'Ftrl', 'GRU', 'GaussianDropout', 'GaussianNoise', 'GlobalAveragePooling1D',
    'GlobalAveragePooling2D', 'GlobalAveragePooling3D', 'GlobalAvgPool1D', 'GlobalAvgPool2D', 'GlobalAvgPool3D',
    'GlobalMaxPool1D', 'GlobalMaxPool2D', 'GlobalMaxPool3D', 'GlobalMaxPooling1D', 'GlobalMaxPooling2D',
    'GlobalMaxPooling3D', 'GlorotNormal', 'GlorotUniform', 'HeNormal', 'HeUniform', 'Huber', 'Identity', 'Input',
    'InverseTimeDecay', 'IoU', 'LSTM', 'Lamb', 'Lambda', 'LayerNormalization', 'LeakyReLU', 'LecunNormal',
    'LecunUniform', 'Lion', 'MAE', 'MSE', 'MaxPool1D', 'MaxPool2D', 'MaxPool3D', 'MaxPooling1D', 'MaxPooling2D',
    'MaxPooling3D', 'Maximum', 'Mean', 'MeanAbsoluteError', 'MeanIoU', 'MeanMetricWrapper', 'MeanSquaredError',
    'Minimum', 'Model', 'Multiply', 'Nadam', 'Normalization', 'OneHotIoU', 'OneHotMeanIoU', 'Ones', 'Orthogonal',
    'PReLU', 'PearsonCorrelation', 'Permute', 'PiecewiseConstantDecay', 'PolynomialDecay', 'Precision',
    'PrecisionAtRecall', 'R2Score', 'RMSprop', 'RandomNormal', 'RandomUniform', 'ReLU', 'Recall', 'RecallAtPrecision',
    'RepeatVector', 'Rescaling', 'Reshape', 'RootMeanSquaredError', 'SGD', 'SensitivityAtSpecificity',
    'SeparableConv1D', 'SeparableConv2D', 'SeparableConvolution1D', 'SeparableConvolution2D', 'Sequential', 'SimpleRNN',
    'Softmax', 'SparseCategoricalAccuracy', 'SparseCategoricalCrossentropy', 'SparseTopKCategoricalAccuracy',
    'SpatialDropout1D', 'SpatialDropout2D', 'SpatialDropout3D', 'SpecificityAtSensitivity', 'Subtract', 'Sum',
    'TopKCategoricalAccuracy', 'TrueNegatives', 'TruePositives', 'TruncatedNormal', 'Tversky', 'UnitNormalization',
    'UpSampling1D', 'UpSampling2D', 'UpSampling3D', 'VarianceScaling', 'ZeroPadding1D', 'ZeroPadding2D',
    'ZeroPadding3D', 'Zeros', 'activations', 'backend', 'binary_crossentropy', 'callbacks', 'categorical_crossentropy',
    'config', 'constant_initializer', 'constraints', 'huber', 'initializers', 'keras', 'layers', 'losses', 'mae',
    'mean_absolute_error', 'mean_squared_error', 'metrics', 'models', 'mse', 'ones_initializer', 'ops', 'optimizers',
    'random_normal_initializer', 'random_uniform_initializer', 'regularizers', 'schedules',
    'sparse_categorical_crossentropy', 'utils', 'zeros_initializer',
))
