"""Keras 3's attention layers (keras/src/layers/attention/): Attention (Luong's dot or concat scores),
AdditiveAttention (Bahdanau's) and MultiHeadAttention, in Keras's formulas and masking, computed by ops
(einsum, matmul, softmax, where), so tapes see them. Their calls take several tensors: Layer.run."""
from __future__ import annotations

import math
import string

import numpy as np

from tapecli import ops
from tapecli.errors import TdfValueError
from tapecli.library.keras import initializers
from tapecli.library.keras.common import flag, integer, name_scope, num, scalar, tensor
from tapecli.library.keras.einsum_dense import EinsumDense
from tapecli.library.keras.layers import Layer, dropout_mask, keep_mask
from tapecli.runtime.values import PythonTuple, Tensor

# Keras's masked scores: Attention's scores - 1e9, Softmax's -1e9 (MultiHeadAttention's general path), and
# dot_product_attention's -0.7 * 3.38953e38 (TensorFlow's backend, MultiHeadAttention's 3-D inputs)
_ATTENTION_MASKED, _SOFTMAX_MASKED, _DOT_PRODUCT_MASKED = 1.0e9, -1e9, 3.38953e38 * -0.7


def _float(x, what, dtype):
    """An input in the layer's compute dtype."""
    x = tensor(x, what)
    return ops.cast(x, dtype) if x.dtype != dtype else x


def _bool_mask(mask, what):
    m = tensor(mask, what)
    return m if m.dtype == np.bool_ else ops.cast(m, np.bool_)


def _expand(x, axis):
    """Keras's ops.expand_dims: a new axis of size 1 at ``axis`` (negative counts from the result's end)."""
    axis = axis % (x.ndim + 1)
    return ops.reshape(x, (*x.shape[:axis], 1, *x.shape[axis:]))


def _causal(rows, cols):
    """Keras's causal mask [1, rows, cols]: row index >= column index (cumsums of ones)."""
    return Tensor(np.tril(np.ones((rows, cols), dtype=bool))[None])


def _dropped(layer, weights, training):
    if not training or layer.dropout <= 0:
        return weights
    return dropout_mask(weights, layer.rng, weights.shape, layer.dropout)


class Attention(Layer):
    prefix = "attention"
    supports_masking = True

    def __init__(self, interp, use_scale=False, score_mode="dot", dropout=0.0, seed=None, **kw):
        super().__init__(interp, seed=seed, **kw)
        self.use_scale, self.score_mode, self.dropout = flag(use_scale), score_mode, num(dropout, "dropout")
        if score_mode not in ("dot", "concat"):
            raise TdfValueError("Invalid value for argument score_mode. Expected one of {'dot', 'concat'}. "
                                f"Received: score_mode={score_mode}")

    def weight_names(self):
        return ("scale", "concat_score_weight")

    def build(self, shape, dtype):
        if self.use_scale:
            self.add_weight("scale", (), "ones", dtype)
        if self.score_mode == "concat":
            self.add_weight("concat_score_weight", (), "ones", dtype)

    def scores(self, query, key):
        """[batch, Tq, Tv]: query . key, or concat_score_weight * sum(tanh(scale * (query + key)))."""
        scale = self.weights_.get("scale")
        if self.score_mode == "dot":
            out = ops.matmul(query, ops.transpose(key, (*range(key.ndim - 2), key.ndim - 1, key.ndim - 2)))
            return out if scale is None else ops.mul(out, scale)
        pairs = ops.add(_expand(query, -2), _expand(key, -3))
        if scale is not None:
            pairs = ops.mul(scale, pairs)
        return ops.mul(self.weights_["concat_score_weight"], ops.reduce_sum(ops.tanh(pairs), axis=-1))

    def compute_mask(self, x, mask):
        """Keras's: the query's mask."""
        return None if not isinstance(mask, list) or mask[0] is None else tensor(mask[0])

    def run(self, interp, inputs, mask=None, training=None, return_attention_scores=False, use_causal_mask=False):
        name = type(self).__name__
        if not isinstance(inputs, list):
            raise TdfValueError(f"{name} layer must be called on a list of inputs, namely [query, value] or "
                                "[query, value, key].")
        if not 2 <= len(inputs) <= 3:
            raise TdfValueError(f"{name} layer accepts inputs list of length 2 or 3, namely [query, value] or "
                                f"[query, value, key]. Received length: {len(inputs)}.")
        if mask is not None and (not isinstance(mask, list) or not 2 <= len(mask) <= 3):
            raise TdfValueError(f"{name} layer mask must be a list, namely [query_mask, value_mask].")
        dtype = self.compute_dtype
        query, value = _float(inputs[0], "query", dtype), _float(inputs[1], "value", dtype)
        key = _float(inputs[2], "key", dtype) if len(inputs) > 2 else value
        self.build_for(query.shape, dtype)
        scores = self.scores(query, key)
        query_mask, value_mask = (mask[0], mask[1]) if mask else (None, None)
        keep = None if value_mask is None else _expand(_bool_mask(value_mask, "value_mask"), -2)
        if flag(use_causal_mask):
            causal = _causal(*scores.shape[-2:])
            keep = causal if keep is None else ops.logical_and(keep, causal)
        if keep is not None:
            scores = ops.where(ops.logical_not(keep), ops.sub(scores, scalar(_ATTENTION_MASKED, scores.dtype)),
                               scores)
        weights = _dropped(self, ops.softmax(scores, axis=-1), flag(training))
        out = ops.matmul(weights, value)
        if query_mask is not None:
            out = ops.where(_expand(_bool_mask(query_mask, "query_mask"), -1), out, scalar(0.0, out.dtype))
        return (out, weights) if flag(return_attention_scores) else out


class AdditiveAttention(Attention):
    prefix = "additive_attention"

    def __init__(self, interp, use_scale=True, dropout=0.0, **kw):
        super().__init__(interp, use_scale=use_scale, dropout=dropout, **kw)

    def weight_names(self):
        return ("scale",)

    def build(self, shape, dtype):
        if self.use_scale:
            self.add_weight("scale", (shape[-1],), "glorot_uniform", dtype)

    def scores(self, query, key):
        """sum(scale * tanh(query + key)) over the features."""
        tanh = ops.tanh(ops.add(_expand(query, -2), _expand(key, -3)))
        scale = self.weights_.get("scale")
        return ops.reduce_sum(tanh if scale is None else ops.mul(scale, tanh), axis=-1)


def _projection(free, bound, out):
    """Keras's _build_proj_equation: the einsum of a projection (``free`` axes kept, ``bound`` contracted,
    ``out`` made), its kernel's letters after the input's, and its bias's axes (the made ones)."""
    letters = string.ascii_lowercase
    kept, summed, made = letters[:free], letters[free:free + bound], letters[free + bound:free + bound + out]
    return f"{kept}{summed},{summed}{made}->{kept}{made}", made


def _attention_equations(rank, axes):
    """Keras's _build_attention_equation: the einsums of the scores (key, query -> scores) and of the output
    (scores, value -> output), for projected tensors of ``rank`` attending over ``axes``."""
    target = string.ascii_lowercase[:rank]
    batch = [i for i in range(rank) if i not in axes and i != rank - 1]
    source, offset = "", rank
    for i in range(rank):
        if i in batch or i == rank - 1:
            source += target[i]
        else:
            source += string.ascii_lowercase[offset]
            offset += 1
    product = "".join([target[i] for i in batch] + [target[i] for i in axes] + [source[i] for i in axes])
    return f"{source},{target}->{product}", f"{product},{source}->{target}"


def _positive(value, what, allow_none=False):
    if allow_none and value is None:
        return None
    n = num(value, what) if not isinstance(value, bool) else -1
    if n != int(n) or n <= 0:
        raise TdfValueError(f"Received an invalid value for argument `{what}`, expected a positive integer"
                            f"{' or `None`' if allow_none else ''}. Received: {what}={n:g}")
    return int(n)


class _Heads(Layer):
    """MultiHeadAttention's and GroupedQueryAttention's call: four EinsumDense projections (``build_heads``
    makes them), masks, the attention of the projected heads (``scores``: the query's with the keys'), the
    output's projection."""
    supports_masking = True


    def weight_names(self):
        return tuple(f"{part}/{w}" for part in ("query", "key", "value", "attention_output") for w in ("kernel", "bias"))

    def _dense(self, part, equation, bias_axes, output_shape, input_shape):
        """One of Keras's EinsumDense sublayers (query, key, value, attention_output), built for input_shape, with
        clones of the layer's initializers (Keras's _get_common_kwargs_for_sublayer)."""
        dense = EinsumDense(self.interp, equation, output_shape, bias_axes=bias_axes if self.use_bias else None,
                            kernel_initializer=self.inits[0].clone(), bias_initializer=self.inits[1].clone(), name=part,
                            activity_regularizer=self.projection_regularizer, dtype=self.policy)
        dense.build_for(input_shape, self.compute_dtype)
        self.projections[part] = dense
        return dense

    def build_for_shapes(self, query_shape, value_shape, key_shape):
        """Keras's build: the projections, in the layer's name scope; their weights are the layer's
        (``query/kernel``, ...), in Keras's order."""
        if value_shape[1:-1] != key_shape[1:-1]:
            raise TdfValueError("All dimensions of `value` and `key`, except the last one, must be equal. Received: "
                                f"value_shape={value_shape} and key_shape={key_shape}")
        self.projections = {}
        with name_scope(self.interp, self.given or self.auto):
            self.build_heads(query_shape, value_shape, key_shape)
        self.weights_ = {f"{part}/{short}": v for part, dense in self.projections.items()
                         for short, v in dense.weights_.items()}
        self.rename()
        self.built, self.build_shape = True, tuple(query_shape)

    def project(self, part, x):
        return self.projections[part].apply(self.interp, x)

    def sublayers(self) -> list:
        return list(getattr(self, "projections", {}).values())

    def own_losses(self):
        """The layer's own losses, then its projections' (Keras's _flatten_layers order)."""
        return super().own_losses() + [loss for dense in getattr(self, "projections", {}).values()
                                       for loss in dense.own_losses()]

    def weight_penalties(self):
        return super().weight_penalties() + [loss for dense in getattr(self, "projections", {}).values()
                                             for loss in dense.weight_penalties()]

    def run(self, interp, query, value, key=None, query_mask=None, value_mask=None, key_mask=None,
            attention_mask=None, return_attention_scores=False, training=None, use_causal_mask=False):
        """Keras's call: query_mask masks the queries [batch, Tq, 1], value_mask and key_mask the keys
        [batch, 1, Tv], use_causal_mask the later keys, all of them and attention_mask together."""
        dtype = self.compute_dtype
        query, value = _float(query, "query", dtype), _float(value, "value", dtype)
        key = value if key is None else _float(key, "key", dtype)
        if not self.built:
            self.build_for_shapes(query.shape, value.shape, key.shape)
        keep = None if attention_mask is None else _bool_mask(attention_mask, "attention_mask")
        masks = [_expand(_bool_mask(m, what), axis) for m, what, axis in (
            (query_mask, "query_mask", -1), (value_mask, "value_mask", -2),
            (key_mask, "key_mask", -2)) if m is not None]
        if flag(use_causal_mask):
            masks.append(_causal(query.shape[1], value.shape[1]))
        for mask in masks:
            keep = mask if keep is None else ops.logical_and(keep, mask)
        q, k, v = self.project("query", query), self.project("key", key), self.project("value", value)
        scores_wanted = flag(return_attention_scores)
        if self.dropout > 0 or scores_wanted or q.ndim != 4:
            out, scores = self.attend(q, k, v, keep, flag(training))
        else:
            out, scores = self.dot_product_attention(q, k, v, keep), None
        out = self.project("attention_output", out)
        if scores_wanted and keep is not None:      # (Keras's masked Softmax layer gives them the mask it was given)
            keep_mask(self.interp, scores, self.over_heads(keep, scores.ndim))
        return (out, scores) if scores_wanted else out

    def over_heads(self, keep, rank: int):
        """The attention mask spread to the scores' rank (Keras's _masked_softmax: over the heads' axis)."""
        while keep.ndim < rank:
            keep = _expand(keep, -len(self.axes) * 2 - 1)
        return keep

    def attend(self, q, k, v, keep, training):
        """Keras's _compute_attention: the query scaled, the scores by einsum, a masked Softmax over the
        attention axes (-1e9 where masked, zero after), dropout, then the output by einsum."""
        scores = self.scores(ops.mul(q, scalar(1.0 / math.sqrt(float(self.key_dim)), q.dtype)), k)
        axes = tuple(range(scores.ndim - len(self.axes), scores.ndim))
        if keep is not None:
            keep = self.over_heads(keep, scores.ndim)
            scores = ops.where(keep, scores, scalar(_SOFTMAX_MASKED, scores.dtype))
        if len(axes) == 1:
            scores = ops.softmax(scores, axis=axes[0])
        else:
            scores = ops.exp(ops.sub(scores, ops.reduce_logsumexp(scores, axis=axes, keepdims=True)))
        if keep is not None:
            scores = ops.where(keep, scores, scalar(0.0, scores.dtype))
        return ops.einsum(self.combine, _dropped(self, scores, training), v), scores

    def dot_product_attention(self, q, k, v, keep):
        """TensorFlow's keras.ops.dot_product_attention (Keras's path for 3-D inputs without dropout or scores):
        the logits scaled after the product, masked to -0.7 * float32's max, softmax, product."""
        logits = ops.einsum("BTNH,BSNH->BNTS", q, k)
        logits = ops.mul(logits, scalar(1.0 / math.sqrt(float(self.key_dim)), logits.dtype))
        if keep is not None:
            while keep.ndim < 4:
                keep = _expand(keep, -3)
            logits = ops.where(keep, logits, scalar(_DOT_PRODUCT_MASKED, logits.dtype))
        return ops.einsum("BNTS,BSNH->BTNH", ops.softmax(logits, axis=-1), v)


class MultiHeadAttention(_Heads):
    clears_masks = ("query", "value", "key")
    prefix = "multi_head_attention"

    def with_masks(self, arguments, kind, mask_of):
        """Keras 3.15's call reads the query's own Keras mask as its query mask, whatever query_mask says."""
        return {**super().with_masks(arguments, kind, mask_of), "query_mask": mask_of(arguments["query"])}

    def __init__(self, interp, num_heads, key_dim, value_dim=None, dropout=0.0, use_bias=True, output_shape=None,
                 attention_axes=None, kernel_initializer="glorot_uniform", bias_initializer="zeros", seed=None, **kw):
        self.num_heads = _positive(num_heads, "num_heads")
        self.key_dim = _positive(key_dim, "key_dim")
        self.value_dim = _positive(value_dim, "value_dim", allow_none=True) or self.key_dim
        super().__init__(interp, seed=seed, **kw)
        # Keras gives its activity_regularizer to the four projections only
        self.projection_regularizer, self.activity_regularizer = self.activity_regularizer, None
        self.dropout, self.use_bias = num(dropout, "dropout"), flag(use_bias)
        if isinstance(output_shape, (list, tuple)):
            self.output_dims = tuple(integer(d, "output_shape") for d in output_shape) or None
        else:
            self.output_dims = None if output_shape is None else (integer(output_shape, "output_shape"),)
        if attention_axes is not None and not isinstance(attention_axes, (list, tuple)):
            attention_axes = (attention_axes,)
        self.axes = None if attention_axes is None else tuple(integer(a, "attention_axes") for a in attention_axes)
        self.inits = initializers.get(kernel_initializer), initializers.get(bias_initializer)

    def config_values(self):
        return {"value_dim": self.value_dim, "output_shape": self.output_dims and PythonTuple(self.output_dims),
                "attention_axes": self.axes if self.axes is None else PythonTuple(self.axes)}

    def _projection(self, part, free, bound, output_shape, input_shape):
        """A projection of Keras's _build_proj_equation: ``free`` axes kept, ``bound`` contracted, the output's
        last axes ``output_shape``."""
        return self._dense(part, *_projection(free, bound, len(output_shape)),
                           [None] * (free - 1) + list(output_shape), input_shape)

    def build_heads(self, query_shape, value_shape, key_shape):
        rank = len(query_shape)
        query = self._projection("query", rank - 1, 1, (self.num_heads, self.key_dim), query_shape)
        self._projection("key", len(key_shape) - 1, 1, (self.num_heads, self.key_dim), key_shape)
        self._projection("value", len(value_shape) - 1, 1, (self.num_heads, self.value_dim), value_shape)
        heads = (*query.output_shape(query_shape)[:-1], self.value_dim)
        self._projection("attention_output", rank - 1, 2, self.output_dims or (query_shape[-1],), heads)
        self.axes = tuple(range(1, rank - 1)) if self.axes is None else tuple(a % rank for a in self.axes)
        self.product, self.combine = _attention_equations(rank + 1, self.axes)

    def scores(self, q, k):
        return ops.einsum(self.product, k, q)


class GroupedQueryAttention(_Heads):
    """keras.layers.GroupQueryAttention: num_key_value_heads heads of keys and values, each repeated for
    num_query_heads // num_key_value_heads query heads; inputs [batch, T, features]."""
    prefix = "grouped_query_attention"

    def __init__(self, interp, head_dim, num_query_heads, num_key_value_heads, dropout=0.0, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros", seed=None, **kw):
        super().__init__(interp, seed=seed, **kw)
        self.projection_regularizer = self.activity_regularizer     # (Keras's: the projections' and its own)
        self.key_dim = integer(head_dim, "head_dim")
        self.num_heads = integer(num_query_heads, "num_query_heads")
        self.num_kv_heads = integer(num_key_value_heads, "num_key_value_heads")
        if self.num_kv_heads <= 0 or self.num_heads % self.num_kv_heads:
            raise TdfValueError("`num_query_heads` must be divisible by `num_key_value_heads`.")
        self.dropout, self.use_bias = num(dropout, "dropout"), flag(use_bias)
        self.inits = initializers.get(kernel_initializer), initializers.get(bias_initializer)
        self.axes, self.combine = (1,), "buqk,bkuh->bquh"

    def build_heads(self, query_shape, value_shape, key_shape):
        if len(query_shape) != 3:
            raise TdfValueError(f"GroupQueryAttention takes inputs [batch, length, features], got {query_shape}")
        self._dense("query", "bqm,muh->bquh", "uh", (None, self.num_heads, self.key_dim), query_shape)
        self._dense("key", "bkm,mvh->bkvh", "vh", (None, self.num_kv_heads, self.key_dim), key_shape)
        self._dense("value", "bkm,mvh->bkvh", "vh", (None, self.num_kv_heads, self.key_dim), value_shape)
        self._dense("attention_output", "bquh,uhm->bqm", "m", (None, query_shape[-1]),
                    (None, None, self.num_heads, self.key_dim))

    def project(self, part, x):
        """The keys' and values' heads repeated, each num_query_heads // num_key_value_heads times (ops.repeat)."""
        y = super().project(part, x)
        if part not in ("key", "value"):
            return y
        heads = np.repeat(np.arange(self.num_kv_heads), self.num_heads // self.num_kv_heads)
        return ops.gather(y, Tensor(heads.astype(np.int32)), axis=2)

    def scores(self, q, k):
        return ops.einsum("bquh,bkuh->buqk", q, k)


LAYERS = [Attention, AdditiveAttention, MultiHeadAttention]
ALIASES = {"GroupQueryAttention": GroupedQueryAttention}      # (Keras's public name of the class)
