"""keras.ops checked by machine against Keras 3's own signatures (tests/data/keras_ops_signatures.json, recorded by
benchmarks/record_keras_ops_signatures.py): every name a program may call as ``keras.ops.NAME`` (and
``keras.ops.nn.NAME``, ``.numpy``, ``.linalg``, ``.image``) resolves to a function of Keras's parameters, in Keras's
order, with Keras's defaults, or is refused (``MISSING``, exactly). Where TensorFlow's function of the same name
stood in for Keras's (keras.ops.normalize was tf.linalg.normalize), a call bound other parameters, or meant something
else: the survey names such a gap "names" where only the parameters' names differ, else "semantics"."""
from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest

import tapecli.api  # noqa: F401  (the builtins, as a run has them)
from tapecli.errors import TdfNameError
from tapecli.interpreter.classes import Namespace
from tapecli.interpreter.registry import load_deferred
from tapecli.runtime.context import run_context

RECORDED = json.loads((Path(__file__).parents[1] / "data" / "keras_ops_signatures.json").read_text())
RECORDED.pop("keras")
_ARGS = ("VAR_POSITIONAL", "VAR_KEYWORD")

# keras.ops names tapecli does not give: complex numbers (out of scope), and functions not written yet
MISSING = {
    'eig', 'fold', 'image.affine_transform', 'image.crop_images', 'image.elastic_transform',
    'image.extract_patches_3d', 'image.gaussian_blur', 'image.map_coordinates', 'image.pad_images',
    'image.perspective_transform', 'image.scale_and_translate', 'istft', 'jvp', 'linalg.eig', 'linalg.jvp',
    'nn.fold', 'nn.polar', 'nn.unfold', 'numpy.vectorize', 'polar', 'rearrange',
    'unfold', 'vectorize', 'view_as_complex', 'view_as_real'
}


def _resolved(name: str):
    module, _, attr = name.rpartition(".")
    with run_context():
        try:
            return Namespace(f"keras.ops.{module}" if module else "keras.ops").get_attribute(None, attr, None)
        except TdfNameError:
            return None


def _gap(keras_params: list, found) -> str | None:
    """None where ``found`` takes Keras's parameters (where Keras has a default, the same default; a function that
    takes ``*args`` checks the rest itself); else "names" (only their names differ) or "semantics"."""
    try:
        mine = [p for p in inspect.signature(found).parameters.values() if p.name != "interp"]
    except (TypeError, ValueError):
        return "semantics"
    kinds = {p.kind.name for p in mine}
    rest = "VAR_POSITIONAL" in kinds
    mine = [p for p in mine if p.kind.name not in _ARGS and p.kind.name != "KEYWORD_ONLY"] if rest else \
        [p for p in mine if p.kind.name not in _ARGS]
    theirs = [p for p in keras_params if p[1] not in _ARGS]
    names_only = False
    for i, (name, _, default) in enumerate(theirs):
        if i >= len(mine):
            if rest or "VAR_KEYWORD" in kinds:
                break
            return "semantics"
        own = None if mine[i].default is inspect.Parameter.empty else repr(mine[i].default)
        if default is not None and own != default:
            return "semantics"
        names_only = names_only or mine[i].name != name
    if any(p.default is inspect.Parameter.empty for p in mine[len(theirs):]):
        return "semantics"
    return "names" if names_only else None


def _survey() -> dict[str, str]:
    load_deferred()
    found = {}
    for name, params in RECORDED.items():
        resolved = _resolved(name)
        found[name] = "missing" if resolved is None else _gap(params, getattr(resolved, "__wrapped__", resolved))
    return found


@pytest.fixture(scope="module")
def survey():
    return _survey()


def test_every_keras_op_takes_keras_parameters_or_is_refused(survey):
    assert sorted(name for name, gap in survey.items() if gap == "missing") == sorted(MISSING)
    assert {name: gap for name, gap in survey.items() if gap not in (None, "missing")} == {}


def test_the_recorded_signatures_are_keras_ops_whole():
    assert len(RECORDED) > 600 and {"normalize", "nn.max_pool", "linalg.qr", "numpy.cumsum"} <= RECORDED.keys()
