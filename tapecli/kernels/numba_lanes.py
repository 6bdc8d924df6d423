"""A row's lanes as one value in compiled kernels (Numba): LLVM's vector of 64 bytes (16 float32 or 8 float64 lanes,
one AVX-512 register; two or four AVX ones elsewhere), loaded from and stored to up to that many consecutive
elements of a 1-D array, the lanes past them masked off. Each operation is the elementwise one, correctly
rounded lane by lane (a fused multiply-add rounded once), so a kernel that keeps each output's operations in
order keeps its bits. Written by hand because LLVM's vectorizer does not take the loops they replace: a loop over
16 channels is shorter than its vector loop of four registers, and one of a constant 16 is unrolled first, its
stores then kept in order because an array may alias another. A vector held in a local variable stays in a
register, where an output's running sum in an array is stored and loaded again at every step."""
from __future__ import annotations

from . import numba_support  # noqa: F401  (numba's settings, made before numba is imported)
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, models, register_model

_BYTES = 64             # one vector: an AVX-512 register


class Lanes(types.Type):
    """A vector of ``count`` lanes of ``dtype`` (a Numba float type)."""

    def __init__(self, dtype):
        self.dtype, self.count = dtype, _BYTES // (dtype.bitwidth // 8)
        super().__init__(name=f"Lanes({dtype}, {self.count})")


@register_model(Lanes)
class _LanesModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, ir.VectorType(dmm.lookup(fe_type.dtype).get_value_type(), fe_type.count))


def _floats(*args) -> bool:
    return all(isinstance(a, types.Float) for a in args)


def _mask(builder, count, n):
    """The vector's first ``n`` lanes on (n an intp)."""
    width = n.type
    lanes = ir.Constant(ir.VectorType(width, count), [ir.Constant(width, i) for i in range(count)])
    bound = builder.insert_element(ir.Constant(ir.VectorType(width, count), ir.Undefined), n,
                                   ir.Constant(ir.IntType(32), 0))
    bound = builder.shuffle_vector(bound, bound, ir.Constant(ir.VectorType(ir.IntType(32), count), [0] * count))
    return builder.icmp_unsigned("<", lanes, bound)


def _address(context, builder, array_type, array, i):
    """The address of element ``i`` of a 1-D array."""
    data = context.make_array(array_type)(context, builder, array).data
    return builder.gep(data, [i])


@intrinsic
def width(typingctx, a):
    """How many lanes a vector of the array ``a``'s elements has (a constant)."""
    if not isinstance(a, types.Array) or not _floats(a.dtype):
        return None
    count = Lanes(a.dtype).count
    return types.intp(a), lambda context, builder, signature, args: context.get_constant(types.intp, count)


@intrinsic
def load(typingctx, a, i, n):
    """The vector of a[i:i + n] (n up to its width; the lanes past them zero), of a C-contiguous 1-D array."""
    if not isinstance(a, types.Array) or a.ndim != 1 or a.layout != "C" or not _floats(a.dtype):
        return None
    vector = Lanes(a.dtype)

    def codegen(context, builder, signature, args):
        array, at, count = args
        value = context.get_value_type(vector)
        at, count = (context.cast(builder, v, t, types.intp) for v, t in zip((at, count), signature.args[1:]))
        masked = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(value, [ir.PointerType(), ir.IntType(32), ir.VectorType(ir.IntType(1),
                                            vector.count), value]), f"llvm.masked.load.{_suffix(vector)}.p0")
        return builder.call(masked, [_address(context, builder, signature.args[0], array, at),
                                     ir.Constant(ir.IntType(32), vector.dtype.bitwidth // 8),
                                     _mask(builder, vector.count, count), ir.Constant(value, None)])
    return vector(a, i, n), codegen


@intrinsic
def store(typingctx, a, i, n, v):
    """a[i:i + n] = the vector's first n lanes, of a C-contiguous 1-D array."""
    if not isinstance(a, types.Array) or a.ndim != 1 or a.layout != "C" or not isinstance(v, Lanes) \
            or v.dtype != a.dtype:
        return None

    def codegen(context, builder, signature, args):
        array, at, count, value = args
        at, count = (context.cast(builder, x, t, types.intp) for x, t in zip((at, count), signature.args[1:3]))
        masked = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [value.type, ir.PointerType(), ir.IntType(32),
                                            ir.VectorType(ir.IntType(1), v.count)]),
            f"llvm.masked.store.{_suffix(v)}.p0")
        builder.call(masked, [value, _address(context, builder, signature.args[0], array, at),
                              ir.Constant(ir.IntType(32), v.dtype.bitwidth // 8), _mask(builder, v.count, count)])
        return context.get_dummy_value()
    return types.none(a, i, n, v), codegen


def _suffix(vector) -> str:
    return f"v{vector.count}f{vector.dtype.bitwidth}"


def _splat(builder, vector_type, x):
    """A vector of ``x`` in every lane, or ``x`` where it is a vector already."""
    if isinstance(x.type, ir.VectorType):
        return x
    one = builder.insert_element(ir.Constant(vector_type, ir.Undefined), x, ir.Constant(ir.IntType(32), 0))
    return builder.shuffle_vector(one, one, ir.Constant(ir.VectorType(ir.IntType(32), vector_type.count),
                                                        [0] * vector_type.count))


def _vector_of(*args):
    """The vector type of operands that are vectors or scalars of one float type (at least one a vector)."""
    vectors = [a for a in args if isinstance(a, Lanes)]
    dtypes = {a.dtype if isinstance(a, Lanes) else a for a in args}
    if not vectors or len(dtypes) != 1 or not _floats(*dtypes):
        return None
    return vectors[0]


@intrinsic
def fused_multiply_add(typingctx, x, y, c):
    """x * y + c lane by lane, rounded once (LLVM's fma); a scalar operand counts in every lane."""
    vector = _vector_of(x, y, c)
    if vector is None:
        return None

    def codegen(context, builder, signature, args):
        value = context.get_value_type(vector)
        fma = cgutils.get_or_insert_function(builder.module, ir.FunctionType(value, [value] * 3),
                                             f"llvm.fma.{_suffix(vector)}")
        return builder.call(fma, [_splat(builder, value, a) for a in args])
    return vector(x, y, c), codegen


@intrinsic
def add(typingctx, x, y):
    """x + y lane by lane; a scalar operand counts in every lane."""
    vector = _vector_of(x, y)
    if vector is None:
        return None

    def codegen(context, builder, signature, args):
        value = context.get_value_type(vector)
        return builder.fadd(*(_splat(builder, value, a) for a in args))
    return vector(x, y), codegen


@intrinsic
def fill(typingctx, x):
    """A vector of the float ``x`` in every lane."""
    if not _floats(x):
        return None
    vector = Lanes(x)

    def codegen(context, builder, signature, args):
        return _splat(builder, context.get_value_type(vector), args[0])
    return vector(x), codegen
