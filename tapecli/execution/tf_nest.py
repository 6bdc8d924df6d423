"""``tf.nest`` on a program's own Python structures, as TensorFlow's nest_util walks them: lists, tuples and
named tuples in order, dicts by their sorted keys; anything else (None, a string, a tensor, an array) a leaf."""
from __future__ import annotations

import types
from collections.abc import Mapping


def is_nested(structure) -> bool:
    return isinstance(structure, (list, tuple, Mapping))


def _children(structure) -> list:
    if isinstance(structure, Mapping):
        return [structure[k] for k in _sorted_keys(structure)]
    return list(structure)


def _sorted_keys(mapping) -> list:
    try:
        return sorted(mapping)
    except TypeError:
        raise TypeError("nest only supports dicts with sortable keys.") from None


def flatten(structure, expand_composites=False) -> list:
    if not is_nested(structure):
        return [structure]
    return [leaf for child in _children(structure) for leaf in flatten(child)]


def _rebuilt(structure, children: list):
    if isinstance(structure, Mapping):
        by_key = dict(zip(_sorted_keys(structure), children))
        return type(structure)((k, by_key[k]) for k in structure)
    if isinstance(structure, tuple) and hasattr(structure, "_fields"):       # a named tuple
        return type(structure)(*children)
    return type(structure)(children)


def pack_sequence_as(structure, flat_sequence, expand_composites=False):
    flat = list(flat_sequence)
    count = len(flatten(structure))
    if count != len(flat):
        raise ValueError(f"Could not pack sequence. Structure had {count} atoms, but flat_sequence had "
                         f"{len(flat)} items. Structure: {structure!r}, flat_sequence: {flat!r}.")
    leaves = iter(flat)

    def build(s):
        if not is_nested(s):
            return next(leaves)
        return _rebuilt(s, [build(child) for child in _children(s)])
    return build(structure)


def assert_same_structure(nest1, nest2, check_types=True, expand_composites=False):
    if is_nested(nest1) != is_nested(nest2) or len(flatten(nest1)) != len(flatten(nest2)):
        raise ValueError(f"The two structures don't have the same nested structure.\n\nFirst structure: "
                         f"{nest1!r}\n\nSecond structure: {nest2!r}")
    if not is_nested(nest1):
        return
    if check_types and type(nest1) is not type(nest2):
        raise TypeError(f"The two structures don't have the same sequence type. Input structure has type "
                        f"{type(nest1)}, while shallow structure has type {type(nest2)}.")
    first, second = _children(nest1), _children(nest2)
    if len(first) != len(second) or isinstance(nest1, Mapping) and _sorted_keys(nest1) != _sorted_keys(nest2):
        raise ValueError(f"The two structures don't have the same nested structure.\n\nFirst structure: "
                         f"{nest1!r}\n\nSecond structure: {nest2!r}")
    for a, b in zip(first, second):
        assert_same_structure(a, b, check_types)


def map_structure(func, *structure, **kwargs):
    if not structure:
        raise ValueError("Must provide at least one structure")
    check_types = kwargs.pop("check_types", True)
    kwargs.pop("expand_composites", None)
    if kwargs:
        raise ValueError(f"Only valid keyword arguments are `check_types` and `expand_composites`, not: "
                         f"`{', '.join(kwargs)}`")
    for other in structure[1:]:
        assert_same_structure(structure[0], other, check_types)
    results = [func(*leaves) for leaves in zip(*(flatten(s) for s in structure))]
    return pack_sequence_as(structure[0], results)


NAMES = ("flatten", "pack_sequence_as", "map_structure", "is_nested", "assert_same_structure")


def nest_module() -> types.ModuleType:
    """A run's ``tf.nest``."""
    module = types.ModuleType("tensorflow.nest")
    module.__dict__.update({name: globals()[name] for name in NAMES})
    return module
