"""Fusion: an assignment whose value is an expression of elementwise ops over large float tensors
(optionally inside a full ``sum`` or ``mean``) runs as one Numba kernel, and is recorded on the
tapes as ONE op, ``fused``.

    loss = sum(sigmoid(x) * tanh(x * 1.5 + 0.5))

Unfused, that is six ops, five intermediate tensors of x's size, each written and read back,
and as many again in the backward pass. Fused, one loop reads x once; every intermediate stays in
a register.

How:

* **Plan** (once per AST node): the expression must be names, number literals, ``+ - * / **``,
  unary minus and calls of the elementwise builtins in ``CALLS``, at least two ops in all. Names
  become the kernel's leaves (one per distinct name), literals its constants.
* **Run-time check** (every execution): the leaves are float tensors or variables of one dtype,
  at least one with ``THRESHOLD`` elements or more (below it the unfused ops win: the kernel is
  a compile away), each either of the full (broadcast) shape or of one element; the call names
  still mean the builtins; the NumPy backend is not forced; ``--check-numerics`` is off. Anything
  else, and the interpreter evaluates the expression as usual, so errors and edge cases are the
  unfused path's.
* **Kernels** are generated as Python source (``codegen``), written as a real module in the cache
  folder (``tapecli.cache``) and imported (registered in ``sys.modules`` first), so that
  numba's ``cache=True`` serves a later process from disk. Their names hash the expression's
  structure, the dtype, the leaf kinds (array or scalar), the kernel variant, and the sources of
  this module and of ``kernels/fusion_math.py`` and numba's thread count (the cache folder is per
  tapecli and numba version). A run compiles at most ``MAX_COMPILES`` new kernels; beyond that, the
  unfused path. A kernel splits its blocks into one run per thread (``prange``); a sum adds its blocks'
  totals in block order, so its bits do not depend on the thread count.
* **Derivatives**: the backward pass of an elementwise expression is diagonal, so when a tape
  records the expression the forward kernel also writes, for each leaf a tape watches, the
  derivative of the expression's value with respect to that leaf (``D``), differentiated
  symbolically from the ``grads`` formulas of the op table (the same formulas the unfused
  gradient rules run: ``ops._ew_vjp``), evaluated in registers. The fused op's gradient rule is
  then ``g * D`` (just ``D`` for the seed of a sum).
* **Higher order**: when a recording tape watches a leaf or the upstream gradient (a gradient
  taken inside another tape, for second derivatives), when the upstream gradient carries a batch
  (a vectorised jacobian), or for a leaf that was not watched when the expression ran, the rule
  replays the unfused ops instead (recorded wherever they would have been) and applies their
  rules one by one. The forward-mode rule replays the same way.

Semantically invisible: the same values within float32 rounding (the float32 kernels use the
vectorisable ``expf``/``logf``/``tanhf`` of ``kernels/fusion_math.py``, NumPy's results bit for bit for
``exp`` and ``log``, within 2 ulp of them for ``tanh``), the same tapes record the result, the same
``None``s. What differs: a tape holds one record ``fused`` (explain's chains name it) instead of one per op.
"""
