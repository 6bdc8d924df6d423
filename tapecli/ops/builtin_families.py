"""The builtins of the op families imported on first use (``ops.DEFERRED``): each family that has ops a
program calls by name, and for each such name its op, the op's public function in ``tapecli.ops`` and
the number of inputs of the op's fusion formula (0: it has none). The library imports such a family for a
program that names one of them (library/core.py); fusion plans them before it loads (fusion/plan.py).
Generated from the op table by ``python tests/ops/test_builtin_families.py``, which checks it."""

BUILTINS = {
    'elementwise_math': {
        'acos': ('acos', 'acos', 1),
        'acosh': ('acosh', 'acosh', 1),
        'asin': ('asin', 'asin', 1),
        'asinh': ('asinh', 'asinh', 1),
        'atan': ('atan', 'atan', 1),
        'atan2': ('atan2', 'atan2', 2),
        'atanh': ('atanh', 'atanh', 1),
        'cosh': ('cosh', 'cosh', 1),
        'digamma': ('digamma', 'digamma', 0),
        'erfc': ('erfc', 'erfc', 1),
        'lgamma': ('lgamma', 'lgamma', 0),
        'relu6': ('relu6', 'relu6', 0),
        'selu': ('selu', 'selu', 0),
        'sinh': ('sinh', 'sinh', 1),
        'softsign': ('softsign', 'softsign', 1),
        'squared_difference': ('squared_difference', 'squared_difference', 2),
    },
    'special': {
        'bessel_i0': ('bessel_i0', 'bessel_i0', 0),
        'bessel_i0e': ('bessel_i0e', 'bessel_i0e', 0),
        'bessel_i1': ('bessel_i1', 'bessel_i1', 0),
        'bessel_i1e': ('bessel_i1e', 'bessel_i1e', 0),
        'erfcinv': ('erfcinv', 'erfcinv', 0),
        'erfinv': ('erfinv', 'erfinv', 0),
        'ndtri': ('ndtri', 'ndtri', 0),
    },
}
