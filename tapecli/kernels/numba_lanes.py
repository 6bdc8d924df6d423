"""A row's lanes as one value in compiled kernels (Numba): LLVM's vector of 64 bytes (16 float32 or 8 float64 lanes,
one AVX-512 register; two or four of another machine's), loaded from and stored to up to that many consecutive
elements of a 1-D array (a whole vector plainly, fewer with the lanes past them masked off). Each operation is
the elementwise one, lane by lane (a fused multiply-add rounded once; no fast-math), so a kernel that keeps each
output's operations in order keeps its bits. Written out because LLVM's vectorizer does not take the loops they
replace: a loop over 16 channels is shorter than its vector loop of four registers, and one of a constant 16 is
unrolled first, its stores then kept in order because an array may alias another. A vector held in a local
variable stays in a register, where an output's running sum in an array is stored and loaded again each step."""
from __future__ import annotations

from . import numba_support  # noqa: F401  (numba's settings, made before numba is imported)
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, models, register_model

_BYTES = 64             # one vector: an AVX-512 register
_I32 = ir.IntType(32)


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


def _row(a) -> bool:
    return isinstance(a, types.Array) and a.ndim == 1 and a.layout == "C" and _floats(a.dtype)


def _splat(builder, vector_type, x):
    """A vector of ``x`` in every lane, or ``x`` where it is a vector already."""
    if isinstance(x.type, ir.VectorType):
        return x
    one = builder.insert_element(ir.Constant(vector_type, ir.Undefined), x, ir.Constant(_I32, 0))
    return builder.shuffle_vector(one, one, ir.Constant(ir.VectorType(_I32, vector_type.count), [0] * vector_type.count))


def _access(context, builder, signature, args, vector, whole, masked):
    """Element ``i`` of the row ``args[0]``'s address, then ``whole(address, align)`` where ``n`` (args[2]) covers
    the vector, else ``masked(address, align, mask)`` (its first n lanes on); their value, if any."""
    array, at, count = args[:3]
    at, count = (context.cast(builder, v, t, types.intp) for v, t in zip((at, count), signature.args[1:3]))
    address = builder.gep(context.make_array(signature.args[0])(context, builder, array).data, [at])
    align = ir.Constant(_I32, vector.dtype.bitwidth // 8)
    width = count.type
    lanes = ir.Constant(ir.VectorType(width, vector.count), [ir.Constant(width, i) for i in range(vector.count)])
    with builder.if_else(builder.icmp_signed(">=", count, ir.Constant(width, vector.count)), likely=True) as (
            full, part):
        with full:
            plain, plain_block = whole(address, align), builder.block
        with part:
            mask = builder.icmp_signed("<", lanes, _splat(builder, lanes.type, count))
            some, some_block = masked(address, align, mask), builder.block
    if plain is None:
        return context.get_dummy_value()
    value = builder.phi(plain.type)
    value.add_incoming(plain, plain_block)
    value.add_incoming(some, some_block)
    return value


def _suffix(value) -> str:
    """An LLVM intrinsic's name for the vector type ``value`` (v16f32, v8f64)."""
    return f"v{value.count}{value.element.intrinsic_name}"


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
    if not _row(a):
        return None
    vector = Lanes(a.dtype)

    def codegen(context, builder, signature, args):
        value = context.get_value_type(vector)
        masked = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(value, [ir.PointerType(), _I32, ir.VectorType(ir.IntType(1), vector.count),
                                                    value]), f"llvm.masked.load.{_suffix(value)}.p0")
        return _access(context, builder, signature, args, vector,
                       lambda address, align: builder.load(builder.bitcast(address, value.as_pointer()), align=align.constant),
                       lambda address, align, mask: builder.call(masked, [address, align, mask,
                                                                          ir.Constant(value, None)]))
    return vector(a, i, n), codegen


@intrinsic
def store(typingctx, a, i, n, v):
    """a[i:i + n] = the vector's first n lanes, of a C-contiguous 1-D array."""
    if not _row(a) or not isinstance(v, Lanes) or v.dtype != a.dtype:
        return None

    def codegen(context, builder, signature, args):
        value = args[3]
        masked = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [value.type, ir.PointerType(), _I32,
                                                            ir.VectorType(ir.IntType(1), v.count)]),
            f"llvm.masked.store.{_suffix(value.type)}.p0")

        def whole(address, align):
            builder.store(value, builder.bitcast(address, value.type.as_pointer()), align=align.constant)

        def part(address, align, mask):
            builder.call(masked, [value, address, align, mask])
        return _access(context, builder, signature, args, v, whole, part)
    return types.none(a, i, n, v), codegen


def _vector_of(*args):
    """The vector type of operands that are vectors, or scalars of their float type or integers (at least one a
    vector)."""
    vectors = [a for a in args if isinstance(a, Lanes)]
    dtypes = {a.dtype if isinstance(a, Lanes) else a for a in args if not isinstance(a, types.Integer)}
    if not vectors or len(dtypes) != 1 or not _floats(*dtypes):
        return None
    return vectors[0]


def _lane_by_lane(operation):
    """An intrinsic of operands that are vectors or scalars (a scalar counts in every lane, an integer as the
    vector's float): ``operation(builder, vector's LLVM type, *operands as vectors)`` gives its vector."""
    def typer(typingctx, *args):
        vector = _vector_of(*args)
        if vector is None:
            return None

        def codegen(context, builder, signature, values):
            value = context.get_value_type(vector)
            values = [context.cast(builder, v, t, vector.dtype) if isinstance(t, types.Integer) else v
                      for v, t in zip(values, signature.args)]
            return operation(builder, value, *(_splat(builder, value, v) for v in values))
        return vector(*args), codegen
    return typer


def _fma(builder, value, x, y, c):
    fma = cgutils.get_or_insert_function(builder.module, ir.FunctionType(value, [value] * 3), f"llvm.fma.{_suffix(value)}")
    return builder.call(fma, [x, y, c])


@intrinsic
def fused_multiply_add(typingctx, x, y, c):
    """x * y + c lane by lane, rounded once (LLVM's fma)."""
    return _lane_by_lane(_fma)(typingctx, x, y, c)


@intrinsic
def add(typingctx, x, y):
    """x + y lane by lane."""
    return _lane_by_lane(lambda builder, value, x, y: builder.fadd(x, y))(typingctx, x, y)


@intrinsic
def where_greater(typingctx, a, b, x, y):
    """x where a > b, else y, lane by lane (false where either is NaN)."""
    return _lane_by_lane(lambda builder, value, a, b, x, y: builder.select(builder.fcmp_ordered(">", a, b), x, y))(
        typingctx, a, b, x, y)


@intrinsic
def where_equal(typingctx, a, b, x, y):
    """x where a == b, else y, lane by lane (false where either is NaN)."""
    return _lane_by_lane(lambda builder, value, a, b, x, y: builder.select(builder.fcmp_ordered("==", a, b), x, y))(
        typingctx, a, b, x, y)


@intrinsic
def fill(typingctx, x):
    """A vector of the float ``x`` in every lane."""
    if not _floats(x):
        return None
    vector = Lanes(x)
    return vector(x), lambda context, builder, signature, args: _splat(builder, context.get_value_type(vector), args[0])
