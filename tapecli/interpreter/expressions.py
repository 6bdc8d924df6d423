"""Expressions: names, literals, operators, calls, indexing, attributes; calling functions."""
from __future__ import annotations

import contextlib
import functools
import operator

import numpy as np

from tapecli.frontend import ast
from tapecli import ops
from tapecli.interpreter.conversions import truth
from tapecli.interpreter.registry import BUILTINS, HOOKS, call_builtin, load_deferred
from tapecli.errors import DtypeMismatch, LimitError, TdfError, TdfNameError, TdfTypeError, TdfValueError, UndefinedNameError
from tapecli.ops.core import _tensor as new_tensor
from tapecli.ops.promotion import numpy_operands
from tapecli.runtime import spelling
from tapecli.runtime.context import current
from tapecli.runtime.limits import LIST_SLOT, admit, admit_text
from tapecli.runtime.numpy_gate import ARRAY_METHODS
from tapecli.runtime.tape import type_word
from tapecli.runtime.values import (RAGGED, DType, NumpyArray, PythonBool, PythonTuple, python_int, Tensor, TensorShape, Variable,
                                    literal_array, not_an_index, numpy_binary, numpy_operand, numpy_result, numpy_text)
from tapecli.frontend.ast import Starred
from tapecli.interpreter.objects import (_MISSING, _PYFUNCTION, BoundMethod, Function, ProgramObject, Scope, _Return,
                                         Traces, _list_as_tensor, function_outputs, object_operator, trace_key)
from tapecli.lazymodule import LazyModule

# Read in isinstance checks alone, on paths a straight-line program does not take: imported there
classes = LazyModule("tapecli.interpreter.classes", globals())     # a program's classes' instances
specs = LazyModule("tapecli.runtime.specs", globals())             # tf.TensorSpec and the other type specs



def _dims(value) -> list | None:
    """A shape's dimensions (a TensorShape, or a tuple or list of integers), None for anything else."""
    if isinstance(value, Tensor) and value.ndim <= 1 and (value.dtype.kind in "iu" or value.size == 0):
        return [int(d) for d in np.atleast_1d(value.value)]
    return None


def _shape_sum(left, right) -> TensorShape:
    """``TensorShape + TensorShape`` or ``+`` a list of dimensions or one dimension (either side): the dimensions
    of both one after the other, as TensorFlow's ``TensorShape.concatenate`` (``x.shape[:-1] + [k]``)."""
    sides = [_list_as_tensor(v) if isinstance(v, (list, tuple)) else v for v in (left, right)]
    dims = [_dims(v) for v in sides]
    if None in dims:
        raise TdfTypeError(f"'+' concatenates a TensorShape with a TensorShape or a list of dimensions, got "
                           f"{type_word(right if dims[0] is not None else left)}")
    return TensorShape(np.array(dims[0] + dims[1], dtype=np.int64), weak=True)


class _Operators(dict):
    """The binary operators' ops: ``@``'s, ops.matmul, is read on its first use (its family is imported then: a
    small program never loads it)."""

    def __missing__(self, symbol):
        if symbol != "@":
            raise KeyError(symbol)
        self[symbol] = ops.matmul
        return ops.matmul


class Expressions:
    """The interpreter's ``eval_<node>`` methods and calls (mixed into :class:`Interpreter`)."""

    def call_function(self, fn: Function, args, kwargs, node):
        ctx = current()
        observer = ctx.mode.observer
        if observer is not None:        # a program's own code: a loop plan takes in only what it let in
            observer.enter(fn, fn.name)
        local = Scope(fn.closure)
        fn.bind(local.vars, args, kwargs, self.eval)
        self.depth += 1
        if self.depth > self.limits.max_depth:
            self.depth -= 1
            raise LimitError(f"calls nest deeper than {self.limits.max_depth}",
                             hint="is the recursion endless? raise the limit with --max-depth N")
        self._step()           # a call is a step: wide recursion meets the step, time and memory limits too
        saved_line = ctx.settings.line
        traced = fn.traced and not ctx.functions_eagerly      # (tf.config.run_functions_eagerly: plain Python)
        muted = False
        if traced:
            ctx.functions += 1
            if fn.traces is None:
                fn.traces = Traces(relax=fn.relaxed)
            key = trace_key([list(args), kwargs])
            muted = fn.traces.seen(key)     # (the traced graph: no Python print)
            self.muted_prints += muted
        try:
            with fn.traces.tracing({p.name: local.vars.get(p.name) for p in fn.node.params}, muted, key=key) \
                    if traced else contextlib.nullcontext():
                self.exec_block(fn.graph_body(not traced) if muted or self.muted_prints else fn.node.body, local)
        except _Return as r:
            return function_outputs(r.value) if traced else r.value
        finally:
            self.depth -= 1
            ctx.settings.line = saved_line
            if traced:
                ctx.functions -= 1
                self.muted_prints -= muted
        return None

    def call_value(self, fn, args, kwargs=None, node=None):
        """Call any program callable: used by layers and the backward of custom gradients."""
        if isinstance(fn, Function):
            return fn(args, kwargs or {}, node)
        if isinstance(fn, ProgramObject):
            return fn.call(self, args, kwargs or {}, node)
        if isinstance(fn, BoundMethod):
            return fn.fn(node, *args, **(kwargs or {}))
        if fn.__class__ is _PYFUNCTION and getattr(fn, "is_builtin", False):
            return call_builtin(fn, self, node, args, kwargs or {})
        raise TdfTypeError(f"{type_word(fn)} is not callable here: pass a function defined with def")

    # -------------------------------------------------------------- expressions
    def eval(self, node, scope):
        return self.compiled.expression(node)(scope)

    def _method(self, prefix, node):
        """The class's eval_/exec_ method for a node type (found once per node: see compiled.py)."""
        return getattr(type(self), prefix + type(node).__name__)

    def lookup(self, name, scope, node):
        value = scope.get(name, _MISSING)
        if value is not _MISSING:
            return value
        if name in BUILTINS or load_deferred() and name in BUILTINS:
            return BUILTINS[name]
        if name in PYTHON_ONLY:
            raise TdfNameError(f"{name}() is not supported in tapecli programs",
                               hint="programs cannot reach files, the environment or Python objects",
                               line=node.line, column=node.column, end_column=node.end_column)
        raise UndefinedNameError(f"name {name} is not defined", name=name, candidates=scope.names() | set(BUILTINS),
                                 python=spelling.is_python(), line=node.line, column=node.column,
                                 end_column=node.end_column)

    def eval_Name(self, node, scope):
        return self.lookup(node.id, scope, node)

    def eval_Number(self, node, scope):
        # One weak tensor per literal in the program: a literal is never recorded or watched itself
        # (ops and watch turn it into a tensor of their dtype first).
        t = self.literal_cache.get(id(node))
        if t is None:      # a NumPy scalar: arithmetic on scalars is several times faster than on 0-d arrays
            t = self.literal_cache[id(node)] = new_tensor(literal_array(node.value)[()], True)
        return t

    def eval_String(self, node, scope):
        return node.value

    def eval_Constant(self, node, scope):
        if node.value is None or node.value is Ellipsis:
            return node.value
        t = self.literal_cache.get(id(node))      # one bool tensor per literal, as for numbers
        if t is None:
            arr = np.array(node.value)
            arr.flags.writeable = False
            t = self.literal_cache[id(node)] = PythonBool(arr)
        return t

    def _static_literal(self, node):
        """The exact array of a bracket literal of numbers, or None if it holds other expressions."""
        key = id(node)
        if key not in self.literal_cache:
            self.literal_cache[key] = self._literal_of(node)
        return self.literal_cache[key]

    def _literal_of(self, node):
        def value(n):
            if isinstance(n, ast.Number):
                return n.value
            if isinstance(n, ast.Constant) and isinstance(n.value, bool):
                return n.value
            if isinstance(n, ast.UnaryOp) and isinstance(n.operand, ast.Number):
                return -n.operand.value if n.op == "-" else n.operand.value
            if isinstance(n, ast.ListDisplay):
                return [value(i) for i in n.items]
            raise ValueError
        try:
            raw = value(node)
        except ValueError:
            return None
        try:
            return literal_array(raw)
        except TdfTypeError as e:
            if e.message == RAGGED and self.ctx.settings.python_spelling:
                return None         # Python's list of rows of different lengths: a list of literals
            raise e.locate(node)

    def eval_ListDisplay(self, node, scope):
        if not node.items:
            return []           # an empty list, which compares equal to an empty tensor (shape(s) == [])
        if self.ctx.settings.python_spelling:
            return [self.eval(item, scope) for item in node.items]
        arr = self._static_literal(node)
        if arr is not None:
            return Tensor(arr, weak=arr.dtype != np.bool_)
        return [self.eval(item, scope) for item in node.items]

    def eval_TupleDisplay(self, node, scope):
        return PythonTuple(self.eval(item, scope) for item in node.items)

    def eval_DictDisplay(self, node, scope):
        out = {}
        for k, v in node.pairs:
            if k is None:               # **mapping
                mapping = self.eval(v, scope)
                if not isinstance(mapping, dict):
                    raise TdfTypeError(f"'{type_word(mapping)}' object is not a mapping", line=v.line, column=v.column)
                out.update(mapping)
                continue
            key = self.eval(k, scope)
            if isinstance(key, Tensor) and key.ndim == 0 and key.dtype.kind in "iuf":
                key = key.value.item()          # a number key, as a Python number (Keras's class_weight={0: 1.0})
            elif not isinstance(key, (str, int, float)) or isinstance(key, bool):
                raise TdfTypeError("dict keys must be strings or numbers", line=k.line, column=k.column)
            out[key] = self.eval(v, scope)
        return out

    def eval_BinOp(self, node, scope):
        left = self.eval(node.left, scope)
        right = self.eval(node.right, scope)
        try:
            return self.binary(node.op, left, right, node)
        except TdfError as e:
            raise e.locate(node)

    _BINARY = _Operators({"+": ops.add, "-": ops.sub, "*": ops.mul, "/": ops.div, "//": ops.floordiv, "%": ops.mod,
                          "**": ops.pow_, **{symbol: functools.partial(ops.bitwise_operator, symbol) for symbol in "&|^"}})

    def binary(self, op, left, right, node):
        if left.__class__ is Tensor and right.__class__ is Tensor:
            try:
                if self.ctx.numpy_behavior is not None:     # (NumPy's promotion of mixed dtypes, switched on)
                    return self._BINARY[op](*numpy_operands(left, right))
                return self._BINARY[op](left, right)
            except DtypeMismatch as e:
                raise self.name_operands(e, node) from None
        if op in _ARITHMETIC and PythonBool in (left.__class__, right.__class__) and _python_values(left, right):
            return self.binary(op, python_int(left), python_int(right), node)      # (Python's bool is an int)
        if op in "&|^" and left.__class__ is PythonBool and right.__class__ is PythonBool:      # (a bool, in Python)
            return PythonBool(self._BINARY[op](left, right).value)
        if op == "+" and isinstance(left, list) and isinstance(right, list):
            if (left.__class__ is PythonTuple) != (right.__class__ is PythonTuple):
                raise TdfTypeError(f'can only concatenate {_sequence_name(left)} (not "{_sequence_name(right)}") '
                                   f'to {_sequence_name(left)}')
            admit(len(left) + len(right), LIST_SLOT, "a list")
            return left.__class__(left + right)
        if op == "+" and TensorShape in (left.__class__, right.__class__):
            return _shape_sum(left, right)
        observer = self.ctx.mode.observer
        if observer is not None and (left.__class__ in _SEQUENCES or right.__class__ in _SEQUENCES):
            observer.refuse("an operation on a list or string")     # (packed or repeated in Python)
        if (numpy_text(left) or numpy_text(right)) and not (_tensorflow_value(left) or _tensorflow_value(right)):
            return numpy_binary(op, left, right)        # (beside a tensor, TensorFlow's op converts NumPy's strings)
        if NumpyArray in (left.__class__, right.__class__) and (isinstance(left, list) or isinstance(right, list)):
            return numpy_binary(op, left, right)        # (NumPy converts the list: arr + [1.0, 2.0] broadcasts)
        if isinstance(left, list) and _tensorflow_value(right) or isinstance(right, list) and _tensorflow_value(left):
            left, right = (ops.to_tensor(side) if isinstance(side, list) else side for side in (left, right))
            return self.binary(op, left, right, node)       # (a list beside a tensor: TensorFlow converts it)
        if left.__class__ is str or right.__class__ is str or left.__class__ in (list, PythonTuple):
            if _text_tensor(left) or _text_tensor(right):       # a string tensor + "suffix": TensorFlow's op
                return self._BINARY[op](left, right)
            return _sequence_binary(op, left, right)
        if NumpyArray in (left.__class__, right.__class__) and numpy_operand(left) and numpy_operand(right):
            return numpy_binary(op, left, right)
        found = object_operator(op, left, right)
        if found is not NotImplemented:
            return found
        for side in (left, right):
            if not isinstance(side, (Tensor, Variable)):
                error = TdfTypeError(f"'{op}' needs tensors, got {type_word(side)}")
                if side is None:
                    self.none_gradient_used(error, self._operand_text(node, side is left))
                raise error
        try:
            result = self._BINARY[op](*numpy_operands(left, right))
        except DtypeMismatch as e:
            raise self.name_operands(e, node) from None
        return numpy_result(result, left, right) if NumpyArray in (left.__class__, right.__class__) else result

    def name_operands(self, error, node):
        """``error``, where a dtype mismatch of the binary expression ``node`` names the operand to convert."""
        if isinstance(error, DtypeMismatch):
            error.name_operands([self._operand_text(node, True), self._operand_text(node, False)])
        return error

    def _operand_text(self, node, left: bool) -> str:
        """How the program wrote one operand of ``node``: a binary operation's, or an augmented assignment's
        (``name op= value``, ``target op= value``)."""
        if not left:
            return self.text(getattr(node, "right", None) or node.value)
        if isinstance(node, ast.AugAssign) and ast.simple_names(node):
            return node.target.id
        return self.text(getattr(node, "left", None) or node.target)

    def eval_UnaryOp(self, node, scope):
        value = self.eval(node.operand, scope)
        if node.op == "-" and hasattr(value, "negated"):       # (-slices: a tf.IndexedSlices stays one)
            return value.negated()
        if not isinstance(value, (Tensor, Variable)):
            error = TdfTypeError(f"unary '{node.op}' needs a tensor, got {type_word(value)}")
            if value is None:
                self.none_gradient_used(error, self.text(node.operand))
            raise error.locate(node)
        value = python_int(value)       # (Python's bool is an int: -True is -1)
        try:
            if node.op == "~":
                return ops.bitwise_operator("~", value)
            return numpy_result(ops.neg(value) if node.op == "-" else ops.to_tensor(value), value)
        except TdfError as e:
            raise e.locate(node)

    def eval_Not(self, node, scope):
        return PythonBool(np.array(not truth(self.eval(node.operand, scope))))

    def eval_BoolOp(self, node, scope):
        value = None
        for item in node.values:
            value = self.eval(item, scope)
            t = truth(value)
            if (node.op == "and" and not t) or (node.op == "or" and t):
                return value
        return value

    def eval_Compare(self, node, scope):
        left = self.eval(node.left, scope)
        result = None
        for op, right_node in zip(node.ops, node.comparators):
            right = self.eval(right_node, scope)
            try:
                current = self.compare(op, left, right)
            except TdfError as e:
                raise e.locate(node)
            if result is None:
                result = current
            elif result.__class__ is PythonBool and current.__class__ is PythonBool:     # Python's `and`
                result = PythonBool(np.array(bool(result.value) and bool(current.value)))
            else:
                result = ops.logical_and(result, current)
            left = right
        return result

    _PYTHON_COMPARE = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq,
                       "!=": operator.ne}
    _COMPARE = {"<": ops.less, "<=": ops.less_equal, ">": ops.greater, ">=": ops.greater_equal,
                "==": ops.equal, "!=": ops.not_equal}

    def compare(self, op, left, right):
        if op in ("in", "not in"):
            return PythonBool(np.array(_contains(right, left) == (op == "in")))
        if op in ("is", "is not"):
            same = left is right or (isinstance(left, Tensor) and isinstance(right, Tensor) and left.id == right.id)
            return PythonBool(np.array(same if op == "is" else not same))
        if op == "~=":
            return self.expectations.approx_equal(left, right)[0]
        found = object_operator(op, left, right)       # (a tf.RaggedTensor's: rt == "b" is elementwise too)
        if found is not NotImplemented:
            return found
        if (numpy_text(left) or numpy_text(right)) and not (_tensorflow_value(left) or _tensorflow_value(right)):
            return numpy_binary(op, left, right)            # NumPy's strings == "b": NumPy's elementwise answer
        if isinstance(left, (str, bytes)) and _text_tensor(right) or isinstance(right, (str, bytes)) and _text_tensor(left):
            return self._COMPARE[op](left, right)           # a string tensor == "b": TensorFlow's elementwise op
        if isinstance(left, (str, DType, specs.TypeSpec)) or isinstance(right, (str, DType, specs.TypeSpec)):  # (Python's ==)
            if op in ("==", "!="):
                return PythonBool(np.array((left == right) == (op == "==")))
            raise TdfTypeError(f"cannot compare strings with '{op}'")
        if left is None or right is None:
            if op in ("==", "!="):
                return PythonBool(np.array((left is right) == (op == "==")))
            raise TdfTypeError(f"cannot compare None with '{op}'", hint="use `is None`")
        if isinstance(left, (list, tuple)) and _python_number(right) or isinstance(right, (list, tuple)) and \
                _python_number(left):            # (a Python list beside a Python number: Python's, never elementwise)
            if op in ("==", "!="):
                return PythonBool(np.array(op == "!="))
            kinds = [("tuple" if isinstance(v, tuple) else "list") if isinstance(v, (list, tuple)) else
                     "bool" if v.__class__ is PythonBool else "float" if getattr(v, "dtype", np.dtype(int)).kind == "f"
                     else "int" for v in (left, right)]
            raise TdfTypeError(f"'{op}' not supported between instances of '{kinds[0]}' and '{kinds[1]}'")
        if _python_sequence(left) and _python_sequence(right):
            # two Python lists or tuples of numbers (a bracket literal is a weak tensor here): Python's comparison,
            # element by element to the first that differs ([1] < [2] is True, [] < [] False)
            return PythonBool(np.array(self._PYTHON_COMPARE[op](_python_value(left), _python_value(right))))
        if op in ("==", "!=") and isinstance(left, list) and isinstance(right, list) and \
                any(isinstance(v, (Variable, ProgramObject)) for v in left + right):
            # lists of variables or objects (`layer.weights == [layer.w, layer.b]`): Python's list equality
            same = len(left) == len(right) and all(a is b or truth(self.compare("==", a, b)) for a, b in zip(left, right))
            return PythonBool(np.array(same == (op == "==")))
        # (a Python number a library value holds: a symbolic tensor's dimension, ``h.shape[-1]``)
        left, right = (Tensor(literal_array(v), weak=True) if isinstance(v, (int, float)) else _list_as_tensor(v)
                       for v in (left, right))
        if op in ("==", "!=") and TensorShape in (left.__class__, right.__class__):
            same = _dims(left) == _dims(right)      # TensorShape == (2, 3): a Python bool, as TensorFlow's
            return PythonBool(np.array(same == (op == "==")))
        for side in (left, right):
            if not isinstance(side, (Tensor, Variable)):
                raise TdfTypeError(f"'{op}' compares tensors, got {type_word(side)}")
        result = self._COMPARE[op](*numpy_operands(left, right))
        if _python_values(left, right):
            return PythonBool(result.value)
        # (a NumPy array's comparison is NumPy's: t.numpy() == 3 is a NumPy bool)
        return numpy_result(result, left, right) if NumpyArray in (left.__class__, right.__class__) else result

    def eval_Call(self, node, scope):
        func = self.eval(node.func, scope)
        args = [self.eval(a, scope) if a.__class__ is not Starred else _Spread(self.eval(a.value, scope))
                for a in node.args]
        if _Spread in {a.__class__ for a in args}:
            args = [x for a in args for x in (self.loop_items(a.value, collected=True) if a.__class__ is _Spread else [a])]
        kwargs = {}
        for kw in node.keywords:
            if kw.name is None:                          # **mapping
                for name, value in self._keywords_of(self.eval(kw.value, scope), kw).items():
                    if name in kwargs:
                        raise TdfTypeError(f"the argument {name} is given twice").locate(kw)
                    kwargs[name] = value
                continue
            if kw.name in kwargs:
                raise TdfTypeError(f"the argument {kw.name} is given twice").locate(kw)
            kwargs[kw.name] = self.eval(kw.value, scope)
        return self.call(func, args, kwargs, node)

    @staticmethod
    def _keywords_of(mapping, node) -> dict:
        """The keywords a ``**mapping`` argument gives: a dict whose keys are strings."""
        if not isinstance(mapping, dict):
            raise TdfTypeError(f"argument after ** must be a mapping, not {type_word(mapping)}").locate(node)
        bad = next((k for k in mapping if not isinstance(k, str)), None)
        if bad is not None:
            raise TdfTypeError("keywords must be strings").locate(node)
        return mapping

    def call(self, func, args, kwargs, node):
        """Call a program value with evaluated arguments, at the call ``node`` (through the loop plan's
        recorder while one traces an iteration: ``interpreter/loop_plans.py``)."""
        observer = self.ctx.mode.observer
        if observer is not None:
            return observer.observe(func, args, kwargs, node, self.call_as_written)
        return self.call_as_written(func, args, kwargs, node)

    def call_as_written(self, func, args, kwargs, node):
        try:
            if func.__class__ is _PYFUNCTION and getattr(func, "is_builtin", False):
                return call_builtin(func, self, node, args, kwargs)
            if isinstance(func, Function):
                return func(args, kwargs, node)
            if isinstance(func, BoundMethod):
                return func.fn(node, *args, **kwargs)
            if isinstance(func, ProgramObject):
                return func.call(self, args, kwargs, node)
            if callable(func) and getattr(func, "is_builtin", False):
                return call_builtin(func, self, node, args, kwargs)
        except Exception as e:      # (a builtin's "got None" is about its arguments; a function's may be its own)
            raise self.call_error(e, node, args if getattr(func, "is_builtin", False) else ()) from None
        raise TdfTypeError(f"{self.text(node.func) or 'this'} is {type_word(func)}, not a function").locate(node)

    def call_error(self, error: Exception, node, args=()) -> Exception:
        """What a call raises for an error out of the callee: located, and the Python errors escaping a
        builtin as the program's errors (exit 3); anything else as it is. A builtin's type error about a None,
        where one positional argument (``args``) was None, says where that None came from (none_gradient_used)."""
        if isinstance(error, TdfError):
            written = getattr(node, "args", ())
            nones = [arg for arg, value in zip(written, args) if value is None]
            if isinstance(error, TdfTypeError) and error.message.endswith("got None") and len(nones) == 1 \
                    and sum(value is None for value in args) == 1 and len(written) == len(args) \
                    and not any(a.__class__ is Starred for a in written):
                self.none_gradient_used(error, self.text(nones[0]))
            return error.locate(node)
        if isinstance(error, TypeError):
            return TdfTypeError(str(error)).locate(node)
        if isinstance(error, (ValueError, ArithmeticError, IndexError, KeyError)):
            name = self.text(node.func) or "this call"
            return TdfValueError(f"{name}: {error}").locate(node)
        return error

    def eval_Subscript(self, node, scope):
        value = self.eval(node.value, scope)
        if isinstance(value, ProgramObject):
            if value.indexed_by_values:        # (np.r_[a, b], np.s_[1:])
                try:
                    return value.index(self.index_values(node.items, scope))
                except TdfError as e:
                    raise e.locate(node)
            if isinstance(value, classes.Instance) and value.cls.find("__getitem__")[0] is not None \
                    and not any(isinstance(i, ast.Slice) for i in node.items):      # (its class's own, given the key)
                keys = [self.eval(i, scope) for i in node.items]
                return self.call_value(value.get_attribute(self, "__getitem__", node),
                                       [keys[0] if len(keys) == 1 else PythonTuple(keys)], node=node)
        elif value.__class__ is NumpyArray and value.value.dtype != object:       # NumPy's own indexing
            try:
                return HOOKS["numpy_item"](value, self.index_values(node.items, scope))
            except TdfError as e:
                raise e.locate(node)
        index = [self._index_item(i, scope) for i in node.items]
        try:
            if isinstance(value, dict):
                key = index[0] if len(index) == 1 else None
                if isinstance(key, Tensor) and key.ndim == 0 and key.dtype.kind in "iuf":
                    key = key.value.item()          # a number key (a dict display's {0: ...}, {0.01: ...})
                if not isinstance(key, (str, int, float)) or isinstance(key, bool):
                    raise TdfTypeError("a dict is indexed with one string or number key")
                if key not in value:
                    raise TdfNameError(f'no key {key!r} in this dict'.replace("'", '"'),
                                       hint="keys: " + ", ".join(repr(k).replace("'", '"') for k in value))
                return value[key]
            if isinstance(value, (list, tuple)):
                if len(index) != 1:
                    raise TdfTypeError("a list is indexed with one integer or slice")
                try:
                    found = value[index[0]]
                except IndexError:
                    raise TdfValueError(f"index {index[0]} is out of range for a list of {len(value)}") from None
                except TypeError:
                    raise TdfTypeError("a list index must be an integer or a slice") from None
                return PythonTuple(found) if value.__class__ is PythonTuple and isinstance(index[0], slice) else found
            if isinstance(value, str):          # (Python's string indexing and slicing)
                if len(index) != 1 or not isinstance(index[0], (int, slice)) or isinstance(index[0], bool):
                    raise TdfTypeError("string indices must be integers or slices")
                try:
                    return value[index[0]]
                except IndexError:
                    raise TdfValueError("string index out of range") from None
            if value.__class__ is NumpyArray and value.value.dtype == object and value.value.size \
                    and isinstance(value.value.flat[0], np.ndarray):    # (a ragged tensor's numpy(): NumPy's rows)
                return NumpyArray(np.asarray(value.value[tuple(index)]))
            if isinstance(value, Tensor) and (value.weak and value.ndim == 0 or value.__class__ is PythonBool):
                kind = "bool" if value.__class__ is PythonBool else "float" if value.dtype.kind == "f" else "int"
                raise TdfTypeError(f"'{kind}' object is not subscriptable")        # (a Python number: Python's)
            if isinstance(value, (Tensor, Variable)):
                # (NumPy's strings are indexed as they are, not as the string tensor TensorFlow would make)
                tensor = Tensor(value.value) if numpy_text(value) else ops.to_tensor(value)
                key = tuple(index)
                if any(isinstance(k, float) for k in key):
                    raise TdfTypeError(not_an_index(next(k for k in key if isinstance(k, float))))
                try:
                    tensor.value[key]
                except IndexError as e:
                    from tapecli.errors import ShapeError
                    raise ShapeError(f"index out of range for shape {list(tensor.shape)}: {e}") from None
                result = ops.getitem(tensor, key)
                if value.__class__ is TensorShape and result.ndim == 1:        # a slice of a shape is a shape
                    return TensorShape(result.value, weak=True)
                if isinstance(value, Variable):          # (its assign methods: v[0, 1].assign(5.0))
                    self.ctx.variable_slices.remember(result, value, key)
                if numpy_text(value) and result.ndim == 0:      # (NumPy's str_ scalar: its own width, <U1 of 'a')
                    return NumpyArray(np.asarray(result.value[()]))
                return Tensor(result.value, weak=True) if tensor.weak else numpy_result(result, value)
            if isinstance(value, ProgramObject) and hasattr(value, "getitem"):     # (a tf.RaggedTensor's rows)
                return value.getitem(tuple(index))
            raise TdfTypeError(f"{type_word(value)} cannot be indexed")
        except TdfError as e:
            raise e.locate(node)
        except ValueError as e:          # e.g. a slice step of zero
            raise TdfValueError(str(e)).locate(node) from None

    def index_values(self, items, scope) -> list:
        """An index's items as the program's values (a slice of them for ``a:b:c``), for NumPy to read."""
        return [slice(*(None if p is None else self.eval(p, scope) for p in (i.lower, i.upper, i.step)))
                if isinstance(i, ast.Slice) else self.eval(i, scope) for i in items]

    def _index_item(self, item, scope):
        if isinstance(item, ast.Slice):
            parts = [None if p is None else self._int_index(self.eval(p, scope), p) for p in
                     (item.lower, item.upper, item.step)]
            return slice(*parts)
        value = self.eval(item, scope)
        if isinstance(value, (str, float)) or value is None or value is Ellipsis:
            return value                  # (a float: a dict's key, as the loop over its keys gives it)
        if isinstance(value, list):       # a list of indices (x[[2, 0]]) or of bools (a mask), as NumPy takes one
            if not value:
                return np.zeros(0, np.intp)
            found = ops.to_tensor(value).value
            return found if found.dtype.kind == "b" else found.astype(np.intp)
        if isinstance(value, (Tensor, Variable)):
            t = ops.to_tensor(value)
            if t.ndim == 0 and t.dtype.kind == "f":
                return t.value.item()      # a dict's number key (a list or tensor refuses it in _index)
            if t.ndim == 0:
                return self._int_index(t, item)
            if t.dtype.kind in "iub":
                return t.value
        raise TdfTypeError(f"an index must be an integer, a slice or a string, got {type_word(value)}").locate(item)

    def _int_index(self, value, node):
        if value is None:
            return None
        t = ops.to_tensor(value)
        if t.ndim != 0 or t.dtype.kind not in "iu":
            raise TdfTypeError(f"an index must be an integer, got {type_word(value)}").locate(node)
        return int(t.value)

    def eval_Attribute(self, node, scope):
        value = self.eval(node.value, scope)
        try:
            return self.attribute(value, node.attr, node)
        except TdfError as e:
            raise e.locate(node)

    def attribute(self, value, attr, node):
        if value.__class__ in (list, dict, str) or isinstance(value, list) or attr in _PYTHON_ATTRIBUTES:
            found = HOOKS["python_attribute"](self, value, attr, node)
            if found is not None:
                return found
        found = HOOKS["attribute"](self, value, attr, node)
        observer = self.ctx.mode.observer
        if observer is not None and isinstance(value, ProgramObject) and found.__class__ is Tensor:
            # an object's tensor made from its Python state (an optimizer's learning rate, its count)
            observer.refuse(f"attribute {attr}")
        return found

    def eval_Keyword(self, node, scope):
        raise TdfTypeError("a keyword argument outside a call").locate(node)

    def eval_Slice(self, node, scope):
        raise TdfTypeError("a slice outside an index").locate(node)


_SEQUENCES = (list, tuple, str, PythonTuple)
_ARITHMETIC = frozenset(("+", "-", "*", "/", "//", "%", "**"))


def _python_values(*values) -> bool:
    """Whether each of ``values`` is a Python number or bool (what makes a Python result, not a tensor)."""
    return all(isinstance(v, PythonBool) or (isinstance(v, Tensor) and v.weak and v.ndim == 0) for v in values)

# Attributes the library's python_attribute hook answers for tensors: TensorFlow eager's beside TDF's core ones,
# and the methods of NumPy arrays (library/numpy_forms.py).
_PYTHON_ATTRIBUTES = frozenset(("numpy", "ndim", "read_value", "value", "size")) | ARRAY_METHODS


# Python builtins a program cannot use: they reach files, the environment or Python objects.
PYTHON_ONLY = frozenset(("open", "eval", "exec", "compile", "setattr", "delattr", "globals",
                          "locals", "vars", "dir", "object", "id", "input", "__import__", "breakpoint",
                          "memoryview", "bytearray", "bytes", "exit", "quit", "help", "iter", "next", "callable",
                          "classmethod", "staticmethod", "property", "issubclass", "hash", "chr", "ord"))


class _Spread:
    """``*value`` among a call's arguments, spread once all are evaluated."""
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def _contains(container, item) -> bool:
    """``item in container`` for lists, dicts, strings and tensors (Python's meaning)."""
    if isinstance(container, str):
        if not isinstance(item, str):
            raise TdfTypeError("'in <string>' needs a string on the left")
        return item in container
    if isinstance(container, dict):
        if isinstance(item, Tensor) and item.ndim == 0:
            return item.value.item() in container
        return isinstance(item, str) and item in container
    if isinstance(container, Variable):
        container = container.read()
    if isinstance(container, Tensor):
        if not isinstance(item, (Tensor, Variable)):
            return False
        value = item.read().value if isinstance(item, Variable) else item.value
        if container.ndim == 0:
            raise TdfTypeError("'in' needs a tensor with at least one dimension on the right")
        # Python's meaning: one of the rows (the elements along the first axis) equals the item
        return any(np.array_equal(row, value) for row in container.value)
    if isinstance(container, list):
        for v in container:
            if v is item or (isinstance(v, (str, DType)) and v == item):
                return True
            if isinstance(v, Tensor) and isinstance(item, Tensor) and v.size == 1 and item.size == 1 \
                    and v.value.item() == item.value.item():
                return True
        return False
    raise TdfTypeError(f"'in' needs a list, a dict, a string or a tensor on the right, got {type_word(container)}")


def _python_sequence(value) -> bool:
    """A Python list or tuple whose items are Python numbers, strings, bools or None (nested too)."""
    if value.__class__ is Tensor:
        return value.weak and value.ndim >= 1
    if value.__class__ in (list, PythonTuple):
        return all(_python_leaf(v) for v in value)
    return False


def _python_leaf(value) -> bool:
    if value is None or isinstance(value, (str, bool, int, float)):
        return True
    if value.__class__ in (Tensor, PythonBool):
        return value.weak or value.__class__ is PythonBool
    return _python_sequence(value)


def _python_value(value):
    """The Python value the interpreter's value stands for: a weak tensor its number or list, a tuple a tuple."""
    if isinstance(value, Tensor):
        return value.value.item() if value.ndim == 0 else value.value.tolist()
    if value.__class__ in (list, PythonTuple):
        items = [_python_value(v) for v in value]
        return tuple(items) if value.__class__ is PythonTuple else items
    return value


def _sequence_name(value: list) -> str:
    return "tuple" if value.__class__ is PythonTuple else "list"


def _sequence_binary(op, left, right):
    """Python's operators on strings and lists: concatenation, repetition and ``%`` formatting."""
    from tapecli.interpreter.pyforms import percent_format
    if op == "+" and isinstance(left, str) and isinstance(right, str):
        admit_text(len(left) + len(right), "a string", left, right)
        return left + right
    if op == "*" and isinstance(left, (str, list)) and isinstance(right, Tensor) and right.weak and right.ndim == 0 \
            and right.value.dtype.kind in "iu":
        count = int(right.value.item())
        if isinstance(left, str):
            admit_text(len(left) * max(count, 0), "a repeated string", left)
        else:
            admit(len(left) * max(count, 0), LIST_SLOT, "a repeated list")
        return left * count if left.__class__ is not PythonTuple else PythonTuple(left * count)
    if op == "%" and isinstance(left, str):
        return percent_format(left, right)
    raise TdfTypeError(f"'{op}' does not take {type_word(left)} and {type_word(right)}")


def list_literal_binary(op: str, a, b, displays: tuple[bool, bool]):
    """Python's list repetition and concatenation for a bracket literal (a weak tensor here): ``[0.0] * 3``,
    ``3 * [x]``, ``[1, 2] + [3]``, ``[1.0] + xs``; None where the operation is a tensor's (a literal beside a
    tensor, or times a strong integer tensor, is elementwise, as TensorFlow converts the list)."""
    def literal(value, display):
        return display and value.__class__ is Tensor and value.weak

    if op == "*":
        for seq, count, display in ((a, b, displays[0]), (b, a, displays[1])):
            if literal(seq, display) and count.__class__ is Tensor and count.weak and count.ndim == 0 \
                    and count.value.dtype.kind in "iu":
                n = max(int(count.value), 0)
                admit(seq.shape[0] * n, seq.value.itemsize * max(seq.size // max(seq.shape[0], 1), 1), "a list")
                return Tensor(np.concatenate([seq.value] * n) if n else seq.value[:0], weak=True)
        return None
    if literal(a, displays[0]) and literal(b, displays[1]):
        if a.value.shape[1:] != b.value.shape[1:]:
            return [*ops.rows(a), *ops.rows(b)]
        return Tensor(np.concatenate([a.value, np.asarray(b.value, dtype=np.result_type(a.value, b.value))]), weak=True)
    if literal(a, displays[0]) and isinstance(b, list) or isinstance(a, list) and literal(b, displays[1]):
        if PythonTuple in (a.__class__, b.__class__):
            left, right = ("tuple", "list") if a.__class__ is PythonTuple else ("list", "tuple")
            raise TdfTypeError(f'can only concatenate {left} (not "{right}") to {left}')
        return [*ops.rows(a), *b] if isinstance(b, list) else [*a, *ops.rows(b)]
    return None


def _tensorflow_value(value) -> bool:
    """A TensorFlow tensor or variable (not a Python number, bool or NumPy value)."""
    return isinstance(value, Variable) or value.__class__ is Tensor and not value.weak


def _text_tensor(value) -> bool:
    """Whether ``value`` is a string tensor (or variable), which TensorFlow's ops meet Python strings in."""
    return isinstance(value, (Tensor, Variable)) and value.dtype.hasobject


def _python_number(value) -> bool:
    """A Python number or bool (a literal, a weak 0-d tensor here), not a tensor of TensorFlow's or NumPy's."""
    return isinstance(value, (int, float)) or value.__class__ is PythonBool or \
        value.__class__ is Tensor and value.weak and value.ndim == 0
