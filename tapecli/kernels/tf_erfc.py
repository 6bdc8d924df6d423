"""TensorFlow's Erfc: Eigen's ``generic_fast_erfc`` (unsupported/Eigen/src/SpecialFunctions/SpecialFunctionsImpl.h)
in NumPy, each step rounded as Eigen's (each pmadd a product and a sum: the wheel is built without FMA), under
TensorFlow's flush-to-zero. tf.nn.gelu's exact form is 0.5 x erfc(-x / sqrt(2)).
"""
from __future__ import annotations

import math

import numpy as np

from tapecli.kernels.tf_float32 import _DOUBLE_PACKET, _exp_packets, _expf, _POINTWISE, PACKET
from tapecli.lazymodule import LazyModule

tf_rcpps = LazyModule("tapecli.kernels.tf_rcpps", globals())     # (large inputs alone: on first use)
tf_pow = LazyModule("tapecli.kernels.tf_pow", globals())         # (float64 packets alone: on first use)

_F32 = np.float32
_F32_DTYPE = np.dtype(np.float32)

# float32: erfc(x) = 1 + x S(x^2) for |x| <= 1, else exp(-x^2) P(1/x^2) / (x Q(1/x^2)) (+ 2 below zero), on x
# clamped to +-11. float64: 1 - x erf(x)/x (a [4/5] rational in x^2) for |x| <= 1, else the same form with a
# [9/9] rational, on x clamped to +-28. The scalar path and the packets differ only in exp (the C library's
# against pexp) and in the float32 packets' reciprocal (below).
_ERFC_CLAMP = {_F32_DTYPE: 11.0, np.dtype(np.float64): 28.0}
_ERFC_ALPHA = (5.61802298761904239654541015625e-04, -4.91381669417023658752441406250e-03,
               2.67075151205062866210937500000e-02, -1.12800106406211853027343750000e-01,
               3.76122951507568359375000000000e-01, -1.12837910652160644531250000000e+00)
_ERFC_GAMMA = (1.0208116471767425537109375e-01, 4.2920666933059692382812500e-01, 3.2379078865051269531250000e-01,
               5.3971976041793823242187500e-02)
_ERFC_DELTA = (1.7251677811145782470703125e-02, 3.9137163758277893066406250e-01, 1.0, 6.2173241376876831054687500e-01,
               9.5662862062454223632812500e-02)
_ERF64_ALPHA = (1.9493725660006057018823477644531294572516344487667083740234375e-04,
                1.8272566210022942682217328425053892715368419885635375976562500e-03,
                4.5303363351690106863856044583371840417385101318359375000000000e-02,
                1.4215015503619179981775744181504705920815467834472656250000000e-01,
                1.1283791670955125585606992899556644260883331298828125000000000e+00)
_ERF64_BETA = (2.0294484101083099089526257108317963684385176748037338256835938e-05,
               6.8117805899186819641732970609382391558028757572174072265625000e-04,
               1.0582026056098614921752165685120417037978768348693847656250000e-02,
               9.3252603143757495374188692949246615171432495117187500000000000e-02,
               4.5931062818368939559832142549566924571990966796875000000000000e-01, 1.0)
_ERFC64_GAMMA = (1.5252844933226974316088642158462107545346952974796295166015625e-04,
                 1.0909912393738931124520519233556115068495273590087890625000000e-02,
                 1.0628604636755033252537572252549580298364162445068359375000000e-01,
                 3.3492472973137982217295416376146022230386734008789062500000000e-01,
                 4.5065776215933289750026347064704168587923049926757812500000000e-01,
                 2.9433039130294824659017649537418037652969360351562500000000000e-01,
                 9.8792676360600226170838311645638896152377128601074218750000000e-02,
                 1.7095935395503719655962981960328761488199234008789062500000000e-02,
                 1.4249109729504577659398023570247460156679153442382812500000000e-03,
                 4.4567378313647954771875570045835956989321857690811157226562500e-05)
_ERFC64_DELTA = (2.041985103115789845773520028160419315099716186523437500000000e-03,
                 5.316030659946043707142493417450168635696172714233398437500000e-02,
                 3.426242193784684864077405563875799998641014099121093750000000e-01,
                 8.565637124308049799026321124983951449394226074218750000000000e-01, 1.0,
                 5.968805280570776972126623149961233139038085937500000000000000e-01,
                 1.890922854723317836356244470152887515723705291748046875000000e-01,
                 3.152505418656005586885981983868987299501895904541015625000000e-02,
                 2.565085751861882583380047861965067568235099315643310546875000e-03,
                 7.899362131678837697403017248376499992446042597293853759765625e-05)


def _polevl(x, coefficients):
    """Eigen's ppolevl: Horner's chain of pmadd, each a product and a sum rounded in x's type."""
    p = np.full_like(x, coefficients[0])
    for c in coefficients[1:]:
        p = p * x + x.dtype.type(c)
    return p


def _flush(v):
    """FTZ: a subnormal result is a zero."""
    return v * (np.abs(v) >= np.finfo(v.dtype).tiny)


def _square_low(x, x2):
    """Eigen's twoprod_low(x, x, x2) without FMA: Veltkamp's split of x, then x^2 - x2 exactly."""
    t = x.dtype.type
    g = t(2.0 ** ((np.finfo(x.dtype).nmant + 2) // 2) + 1) * x
    hi = (x - g) + g
    lo = x - hi
    p = hi * hi - x2
    p = hi * lo + p
    p = lo * hi + p
    return lo * lo + p


def _erfc_steps(x0, exp, reciprocal=None):
    """generic_fast_erfc of a float32 or float64 array, exp(-x^2) by ``exp`` and 1 / x^2 by ``reciprocal`` (None:
    dividing), the differences between Eigen's scalar path and its packets (preciprocal's)."""
    t = x0.dtype.type
    with np.errstate(all="ignore"):
        clamp = t(_ERFC_CLAMP[x0.dtype])
        x = np.minimum(np.maximum(x0, -clamp), clamp)
        x2 = x * x
        single = x0.dtype == _F32_DTYPE
        if single:
            small = x * _polevl(x2, _ERFC_ALPHA) + t(1)
        else:
            small = t(1) - x * (_polevl(x2, _ERF64_ALPHA) / _polevl(x2, _ERF64_BETA))
        outside = t(1) < x2
        if not outside.any():
            return small
        e = exp(-x2)
        z = e - _flush(e * _square_low(x, x2))       # exp(-x^2) = exp(-x2) (1 - the square's low part)
        q2 = t(1) / x2 if reciprocal is None else reciprocal(x2)
        r = _polevl(q2, _ERFC_GAMMA if single else _ERFC64_GAMMA) / (
            x * _polevl(q2, _ERFC_DELTA if single else _ERFC64_DELTA))
        large = _flush(_flush(z * r) + np.where(x < 0, t(2), t(0)))
        return np.where(outside, large, small)


def _expf_each(x):
    return np.array([_expf(v) for v in x.tolist()], _F32)


def _exp_each(x):
    from tapecli.kernels.tf_random import libm_function
    c = libm_function("exp") or math.exp
    return np.array([c(v) for v in x.tolist()], np.float64)


def erfc(x):
    """TensorFlow's Erfc (Eigen's generic_fast_erfc) of a float32 or float64 scalar or tensor: Eigen's packets
    (pexp) on all but the last ``size % PACKET`` (4 for doubles), the scalar path (the C library's exp) on those;
    float16 and bfloat16 round float32's. The float32 packets take preciprocal, the CPU's approximate RCPPS and
    a Newton step (tf_rcpps.py), where tapecli knows the CPU's table; elsewhere this divides (their last bit then
    differs on a few percent of the elements beyond |x| = 1)."""
    if x.__class__ is _F32 or x.__class__ is np.float64:
        return x.__class__(_erfc_steps(np.array([x]), _expf_each if x.__class__ is _F32 else _exp_each)[0])
    if x.dtype.itemsize == 2 and x.dtype.kind in "fV":
        return erfc(x.astype(_F32)).astype(x.dtype)
    reciprocal = None
    if x.dtype == _F32_DTYPE:
        packets, tail, packet = _exp_packets, _expf_each, PACKET
        reciprocal = tf_rcpps.newton_reciprocal if tf_rcpps.known() and not _POINTWISE.get() else None
    else:
        packets, tail, packet = tf_pow.exp_double_packets, _exp_each, _DOUBLE_PACKET
    flat = x.reshape(-1)
    k = flat.size if _POINTWISE.get() else flat.size - flat.size % packet
    head = _erfc_steps(flat[:k], packets, reciprocal)
    if k < flat.size:
        head = np.concatenate((head, _erfc_steps(flat[k:], tail)))
    return head.reshape(x.shape)
