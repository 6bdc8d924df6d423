"""The builtin families imported on first use (``library/__init__.py``, ``registry.defer``): each module,
in the order the modules are imported, and the words of a program's text that import it. A family's words
are the last word of each name it registers; a name whose last word is a flat name too gives its module's
(tf.sparse.add is looked up by ``sparse``: a program that adds need not import tf.sparse); a module that
has no flat names (classes.Namespace.CLOSED: tf.experimental.numpy.var, .array, .diff) gives its first
word, which a program reads before them. Keras-lite (``keras_names``: its layers, models, losses, optimizers,
metrics, initializers, schedules and base classes, about 20 ms of imports) has the first word of each of
its names. Each family's words are one string, separated by spaces. Generated from what the modules
register by ``python tests/interpreter/test_deferred_families.py``, which checks it."""

WORDS = {
    'numpy_forms': (
        'beta binomial choice default_rng exponential finfo iinfo laplace logistic lognormal multivariate_normal np '
        'np.random permutation rand randint randn random random_sample standard_normal triangular'
    ),
    'python': (
        'Layer Module Variable _same_function all any bool constant dict enumerate float function getattr hasattr '
        'int isinstance list max min monotonic perf_counter process_time repr reversed round sleep sorted str sum '
        'super time tuple type zip'
    ),
    'tf_math': (
        'accumulate_n add add_n betainc clip_by_global_norm clip_by_value confusion_matrix convert_to_tensor '
        'count_nonzero cumprod cumsum cumulative_logsumexp divide divide_no_nan e equal floordiv floormod '
        'global_norm greater greater_equal hard_sigmoid identity igamma igammac inf is_finite is_inf is_nan '
        'l2_normalize lbeta less less_equal log_sigmoid logical_and logical_not logical_or logical_xor mod moments '
        'multiply nan negative newaxis nextafter not_equal ones_like pi reciprocal reciprocal_no_nan reduce_all '
        'reduce_any reduce_euclidean_norm reduce_logsumexp reduce_max reduce_mean reduce_min reduce_prod reduce_std '
        'reduce_sum reduce_variance silu subtract swish truediv xdivy xlog1py xlogy zero_fraction zeros_like'
    ),
    'tf_nn': (
        'argsort avg_pool avg_pool1d avg_pool2d avg_pool3d band_part batch_norm_with_global_normalization '
        'batch_normalization bias_add boolean_mask conv1d conv2d dropout embedding_lookup gather gather_nd '
        'local_response_normalization lrn matrix_band_part max_pool max_pool1d max_pool2d max_pool3d one_hot pad '
        'reverse roll scatter_nd segment_sum sequence_mask set_seed sigmoid_cross_entropy_with_logits '
        'softmax_cross_entropy_with_logits softmax_cross_entropy_with_logits_v2 sort '
        'sparse_softmax_cross_entropy_with_logits split stateless_dropout tensor_scatter_nd_add tile top_k '
        'truncated_normal unsorted_segment_sum unstack'
    ),
    'tf_linalg': (
        'adjoint cholesky cholesky_solve cross det diag diag_part eigh eigvalsh einsum expm inv logdet lstsq lu '
        'lu_reconstruct matmul matrix_determinant matrix_diag matrix_diag_part matrix_inverse matrix_rank '
        'matrix_solve matrix_transpose matrix_triangular_solve matvec normalize pinv qr set_diag slogdet solve svd '
        'tensor_diag tensor_diag_part tensordot trace triangular_solve tridiagonal_matmul tridiagonal_solve'
    ),
    'tf_array': (
        'DType as_dtype batch_to_space bitcast broadcast_dynamic_shape broadcast_static_shape broadcast_to '
        'dynamic_partition dynamic_stitch ensure_shape get_static_value histogram_fixed_width '
        'histogram_fixed_width_bins identity_n inside_function is_symbolic_tensor is_tensor meshgrid no_op rank '
        'repeat required_space_to_batch_paddings reverse_sequence saturate_cast scalar_mul searchsorted shape_n '
        'slice space_to_batch space_to_batch_nd strided_slice tensor_scatter_nd_max tensor_scatter_nd_min '
        'tensor_scatter_nd_sub tensor_scatter_nd_update timestamp truncatediv truncatemod unique unique_with_counts '
        'unravel_index'
    ),
    'tf_nn_losses': (
        'atrous_conv2d collapse_repeated compute_average_loss conv1d_transpose conv2d_transpose conv3d '
        'conv3d_transpose conv_transpose convolution crelu ctc_greedy_decoder ctc_loss ctc_unique_labels '
        'depth_to_space depthwise_conv2d in_top_k l2_loss log_poisson_loss max_pool_with_argmax normalize_moments '
        'pool scale_regularization_loss separable_conv2d space_to_depth sufficient_statistics '
        'weighted_cross_entropy_with_logits weighted_moments'
    ),
    'tf_random': (
        'categorical fold_in gamma poisson random shuffle stateless_categorical stateless_normal '
        'stateless_truncated_normal stateless_uniform'
    ),
    'tf_random_generator': (
        'Algorithm Generator all_candidate_sampler create_rng_state get_global_generator '
        'log_uniform_candidate_sampler set_global_generator stateless_binomial stateless_gamma '
        'stateless_parameterized_truncated_normal stateless_poisson uniform_candidate_sampler'
    ),
    'tf_segments': (
        'bincount invert_permutation is_non_decreasing is_strictly_increasing polyval segment_max segment_mean '
        'segment_min segment_prod unsorted_segment_max unsorted_segment_mean unsorted_segment_min '
        'unsorted_segment_prod unsorted_segment_sqrt_n'
    ),
    'tf_signal': (
        'fftshift frame hamming_window hann_window ifftshift linear_to_mel_weight_matrix overlap_and_add'
    ),
    'tf_linear_operators': (
        'LinearOperatorAdjoint LinearOperatorBlockDiag LinearOperatorBlockLowerTriangular LinearOperatorComposition '
        'LinearOperatorDiag LinearOperatorFullMatrix LinearOperatorHouseholder LinearOperatorIdentity '
        'LinearOperatorInversion LinearOperatorKronecker LinearOperatorLowRankUpdate LinearOperatorLowerTriangular '
        'LinearOperatorPermutation LinearOperatorScaledIdentity LinearOperatorToeplitz LinearOperatorTridiag '
        'LinearOperatorZeros'
    ),
    'tf_scopes': (
        'Assert assert_all_finite assert_equal assert_greater assert_greater_equal assert_less assert_less_equal '
        'assert_near assert_negative assert_non_negative assert_non_positive assert_none_equal assert_positive '
        'assert_rank assert_shapes assert_type check_numerics control_dependencies device functions_run_eagerly '
        'get_current_name_scope get_logger get_visible_devices gpu_device_name group init_scope is_built_with_cuda '
        'is_built_with_gpu_support is_gpu_available is_numeric_tensor keras list_logical_devices '
        'list_physical_devices name_scope run_functions_eagerly set_memory_growth set_verbosity'
    ),
    'tf_indexed_slices': (
        'IndexedSlices'
    ),
    'tf_image': (
        'ResizeMethod adjust_brightness adjust_contrast adjust_gamma adjust_hue adjust_saturation central_crop '
        'convert_image_dtype crop_to_bounding_box extract_patches flip_left_right flip_up_down grayscale_to_rgb '
        'hsv_to_rgb image image_gradients pad_to_bounding_box per_image_standardization psnr random_hue '
        'random_saturation resize resize_with_crop_or_pad rgb_to_grayscale rgb_to_hsv rot90 ssim total_variation'
    ),
    'tf_bitwise': (
        'bitwise_and bitwise_or bitwise_xor invert left_shift right_shift'
    ),
    'tf_checkpoint': (
        'Checkpoint CheckpointManager latest_checkpoint'
    ),
    'tf_distribute': (
        'InputContext MirroredStrategy OneDeviceStrategy ReduceOp get_replica_context get_strategy has_strategy '
        'in_cross_replica_context'
    ),
    'tf_ragged_ops': (
        'RaggedTensor RaggedTensorSpec map_flat_values ragged row_splits_to_segment_ids segment_ids_to_row_splits'
    ),
    'tf_strings': (
        'as_string bytes_split decode_csv format join length lower ngrams reduce_join regex_full_match regex_replace '
        'strings strip substr to_number unicode_decode unicode_decode_with_offsets unicode_encode unicode_split '
        'unicode_split_with_offsets unicode_transcode unsorted_segment_join upper'
    ),
    'tf_sparse': (
        'SparseTensor fill_empty_rows from_dense reorder reset_shape retain sparse to_dense to_indicator'
    ),
    'tf_sparse_math': (
        'embedding_lookup_sparse map_values mask safe_embedding_lookup_sparse sampled_addmm segment_sqrt_n sparse '
        'sparse_dense_matmul'
    ),
    'tf_lookup': (
        'KeyValueTensorInitializer MutableHashTable StaticHashTable StaticVocabularyTable'
    ),
    'tf_sets': (
        'difference edit_distance intersection sets union'
    ),
    'tf_hashing': (
        'fingerprint to_hash_bucket to_hash_bucket_fast to_hash_bucket_strong'
    ),
    'tf_numpy': (
        'experimental'
    ),
    'tf_numpy_arrays': (
        'experimental'
    ),
    'tf_numpy_indexing': (
        'experimental'
    ),
    'tf_numpy_math': (
        'experimental'
    ),
    'tf_tensor_proto': (
        'make_ndarray make_tensor_proto'
    ),
    'control': (
        'ForwardAccumulator GradientTape TensorArray UnconnectedGradients case cond custom_gradient '
        'executing_eagerly foldl foldr grad_pass_through map_fn numpy_function py_function recompute_grad scan '
        'switch_case vectorized_map while_loop'
    ),
    'data': (
        'AUTOTUNE Dataset INFINITE_CARDINALITY UNKNOWN_CARDINALITY assert_cardinality data.experimental '
        'group_by_window iter next rejection_resample'
    ),
    'tf_test': (
        'compute_gradient'
    ),
    'tf_image_random': (
        'random_brightness random_contrast random_crop random_flip_left_right random_flip_up_down '
        'stateless_random_brightness stateless_random_contrast stateless_random_crop '
        'stateless_random_flip_left_right stateless_random_flip_up_down stateless_random_hue '
        'stateless_random_saturation'
    ),
    'tf_image_boxes': (
        'crop_and_resize draw_bounding_boxes non_max_suppression non_max_suppression_padded '
        'non_max_suppression_with_scores sobel_edges'
    ),
    'tf_png': (
        'decode_png encode_png'
    ),
    'tf_quantization': (
        'fake_quant_with_min_max_args fake_quant_with_min_max_vars fake_quant_with_min_max_vars_per_channel '
        'quantize_and_dequantize quantize_and_dequantize_v2'
    ),
    'tf_raw_ops': (
        'raw_ops'
    ),
}

KERAS = (
    'AUC Accuracy Activation ActivityRegularization Adadelta Adafactor Adagrad Adam AdamW Adamax '
    'AdaptiveAveragePooling1D AdaptiveAveragePooling2D AdaptiveAveragePooling3D AdaptiveMaxPooling1D '
    'AdaptiveMaxPooling2D AdaptiveMaxPooling3D Add AdditiveAttention AlphaDropout Attention Average AveragePooling1D '
    'AveragePooling2D AveragePooling3D AvgPool1D AvgPool2D AvgPool3D BatchNormalization Bidirectional BinaryAccuracy '
    'BinaryCrossentropy BinaryFocalCrossentropy BinaryIoU CTC CategoricalAccuracy CategoricalCrossentropy '
    'CategoricalFocalCrossentropy CategoricalGeneralizedCrossEntropy CategoryEncoding CenterCrop Concatenate '
    'ConcordanceCorrelation Constant Conv1D Conv1DTranspose Conv2D Conv2DTranspose Conv3D Conv3DTranspose ConvLSTM1D '
    'ConvLSTM2D ConvLSTM3D Convolution1D Convolution1DTranspose Convolution2D Convolution2DTranspose Convolution3D '
    'Convolution3DTranspose CosineDecay CosineDecayRestarts Cropping1D Cropping2D Cropping3D Dense DepthwiseConv1D '
    'DepthwiseConv2D Dice Discretization Dot Dropout ELU EinsumDense Embedding ExponentialDecay F1Score FBetaScore '
    'FalseNegatives FalsePositives Flatten Ftrl GRU GRUCell GaussianDropout GaussianNoise GlobalAveragePooling1D '
    'GlobalAveragePooling2D GlobalAveragePooling3D GlobalAvgPool1D GlobalAvgPool2D GlobalAvgPool3D GlobalMaxPool1D '
    'GlobalMaxPool2D GlobalMaxPool3D GlobalMaxPooling1D GlobalMaxPooling2D GlobalMaxPooling3D GlorotNormal '
    'GlorotUniform GroupNormalization GroupQueryAttention HashedCrossing Hashing HeNormal HeUniform Huber Identity '
    'Input InputLayer InputSpec IntegerLookup InverseTimeDecay IoU LSTM LSTMCell Lamb Lambda LayerNormalization '
    'LeakyReLU LecunNormal LecunUniform Lion MAE MSE Masking MaxPool1D MaxPool2D MaxPool3D MaxPooling1D MaxPooling2D '
    'MaxPooling3D Maximum Mean MeanAbsoluteError MeanIoU MeanMetricWrapper MeanSquaredError Minimum Model '
    'MultiHeadAttention Multiply Nadam Normalization OneHotIoU OneHotMeanIoU Ones Orthogonal PReLU '
    'PearsonCorrelation Permute PiecewiseConstantDecay PolynomialDecay Precision PrecisionAtRecall R2Score '
    'RMSNormalization RMSprop RNN RandomBrightness RandomContrast RandomCrop RandomFlip RandomNormal RandomRotation '
    'RandomTranslation RandomUniform RandomZoom ReLU Recall RecallAtPrecision RepeatVector Rescaling Reshape '
    'Resizing RootMeanSquaredError SGD SensitivityAtSpecificity SeparableConv1D SeparableConv2D '
    'SeparableConvolution1D SeparableConvolution2D Sequential SimpleRNN SimpleRNNCell Softmax '
    'SparseCategoricalAccuracy SparseCategoricalCrossentropy SparseTopKCategoricalAccuracy SpatialDropout1D '
    'SpatialDropout2D SpatialDropout3D SpecificityAtSensitivity SpectralNormalization StackedRNNCells StringLookup '
    'Subtract Sum TextVectorization TimeDistributed TopKCategoricalAccuracy TrueNegatives TruePositives '
    'TruncatedNormal Tversky UnitNormalization UpSampling1D UpSampling2D UpSampling3D VarianceScaling ZeroPadding1D '
    'ZeroPadding2D ZeroPadding3D Zeros activations backend binary_crossentropy callbacks categorical_crossentropy '
    'config constant_initializer constraints dtype_policies huber initializers keras layers losses mae '
    'mean_absolute_error mean_squared_error metrics mixed_precision models mse ones_initializer ops optimizers '
    'preprocessing random_normal_initializer random_uniform_initializer regularizers saving schedules sequence '
    'sparse_categorical_crossentropy utils zeros_initializer'
)
