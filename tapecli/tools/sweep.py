"""`--sweep NAME=@points.npy`: one program run at many input points, results stacked on a leading axis.

A sweep binds each declaration it names (as ``--set`` would) to one slice of its file along the first
axis, point after point. Points go in batches: a batch is one call of :func:`run_batch`, which parses
the program once and returns plain data (one JSON-ready document per point), so batches can run in this
process, in a process pool or on a Dask cluster (tools/cluster.py) with the same result.

A batch runs vectorised -- one run with each swept declaration bound to the whole batch -- only when
:func:`vectorisable` proves that gives every point's answer: see its docstring (and docs/spec/CLI.md).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from tapecli.api import Options, read_array_file, run_program
from tapecli.errors import TdfError, UsageError
from tapecli.frontend import ast
from tapecli.runtime.limits import Limits

COMMANDS = ("run", "grad", "jacobian", "hessian", "check")
KINDS = {"grad": ("gradient",), "jacobian": ("jacobian", "batch_jacobian"), "hessian": ("hessian",)}
KEYS = {"grad": "gradients", "jacobian": "jacobians", "hessian": "hessians"}
VECTOR_BATCH = 10_000       # points per vectorised run: far below the size where kernels switch to numba
LOOP_BATCH = 250            # points per batch otherwise

# Builtins that act on each element alone, so a batch of points through them is each point through them.
ELEMENTWISE = frozenset(("exp", "log", "sigmoid", "tanh", "sin", "cos", "sqrt", "square", "softplus",
                         "log1p", "expm1", "negative"))
ELEMENTWISE_OPS = frozenset(("+", "-", "*", "/", "**"))


# ------------------------------------------------------------------ reading the points

def load_sweeps(items: list[str], limits: Limits | None = None) -> dict[str, np.ndarray]:
    """``NAME=@file.npy`` / ``NAME=@file.json`` for each --sweep: the arrays, checked to be zipped. Each file
    is weighed against ``limits`` (elements, memory) before it is read, as a --set file is."""
    limits = limits or Limits()
    sweeps: dict[str, np.ndarray] = {}
    for item in items:
        name, sep, text = item.partition("=")
        name, text = name.strip(), text.strip()
        if not sep or not name.isidentifier() or not text.startswith("@"):
            raise UsageError(f"--sweep {item!r}: expected NAME=@points.npy or NAME=@points.json")
        if name in sweeps:
            raise UsageError(f"--sweep {name}: given twice")
        path = Path(text[1:])
        arr = read_array_file(path, f"--sweep {name}", limits)
        if arr.ndim == 0:
            raise UsageError(f"--sweep {name}: {path} holds one number; a sweep takes its points along the "
                             f"first axis (an array of shape [points, ...])")
        if len(arr) == 0:
            raise UsageError(f"--sweep {name}: {path} holds no points (its shape is {list(arr.shape)})")
        sweeps[name] = arr.astype(np.float64) if arr.dtype.kind == "f" and path.suffix != ".npy" else arr
    counts = {n: len(a) for n, a in sweeps.items()}
    if len(set(counts.values())) > 1:
        raise UsageError("--sweep files are zipped point by point and must have as many points each: "
                         + ", ".join(f"{n} has {c}" for n, c in counts.items()))
    return sweeps


def points(sweeps: dict[str, np.ndarray]) -> int:
    return len(next(iter(sweeps.values())))


def check_declarations(program: ast.Program, filename: str, options: Options, sweeps: dict[str, np.ndarray],
                       command: str | None = None) -> dict:
    """Run the program once as written to learn each swept declaration's shape and dtype, and refuse a
    sweep whose slices do not fit them, or whose results (``command``'s, as large at each point as in that
    run) the memory cap cannot hold. Returns {name: (shape, dtype kind)}."""
    declared = {n.name for n in ast.walk(program) if isinstance(n, (ast.VarDecl, ast.ConstDecl))}
    for name in sweeps:
        if name not in declared:
            raise UsageError(f"--sweep {name}: the program declares no var or const of that name"
                             + (f" (it declares {', '.join(sorted(declared))})" if declared else ""))
    base = run_program(program, filename, options.replace(of=None, wrt=[]))
    found = {}
    for name, arr in sweeps.items():
        value = base.scope.vars.get(name)
        value = value.read() if hasattr(value, "read") else value
        shape, kind = tuple(value.shape), value.dtype.kind
        if tuple(arr.shape[1:]) != shape:
            raise UsageError(f"--sweep {name}: each point has shape {list(arr.shape[1:])} (the file's shape is "
                             f"{list(arr.shape)}), but {name} is declared with shape {list(shape)}; the file "
                             f"needs shape {[len(arr)] + list(shape)}")
        if (kind in "iu" and arr.dtype.kind == "f") or (kind == "b") != (arr.dtype.kind == "b"):
            raise UsageError(f"--sweep {name}: the points are {arr.dtype.name}, but {name} is declared "
                             f"{value.dtype.name}")
        found[name] = (shape, kind)
    if command is not None:
        weigh_results(base, command, points(sweeps), options)
    return found


# What one number of a point's results costs at the sweep's peak: a Python float in a list of a batch's
# document, its slot in the stacked list, its text in the JSON or the table (2e7 points of one gradient
# each peaked at 1.7 GB).
RESULT_BYTES_PER_NUMBER = 80
RESULT_BYTES_PER_EXPECTATION = 800      # a check result's dict, with its texts


def weigh_results(base, command: str, n: int, options: Options) -> None:
    """The stacked results of ``n`` points, each as large as ``base``'s (the run as written), weighed against
    the memory cap before any point runs: a LimitError over it."""
    from tapecli.errors import LimitError
    from tapecli.runtime.limits import resident_within
    if command == "check":
        each = max(1, len(base.expectations)) * RESULT_BYTES_PER_EXPECTATION
    elif command == "run":
        each = sum(int(np.prod(getattr(v, "shape", ()))) for v in base.scope.vars.values()
                   if hasattr(v, "shape") and hasattr(v, "dtype")) * RESULT_BYTES_PER_NUMBER
    else:
        each = sum(int(np.prod(v.shape)) for req in base.requests for v in req.values if v is not None) \
            * RESULT_BYTES_PER_NUMBER
    nbytes = n * max(each, RESULT_BYTES_PER_NUMBER)
    limit = options.limits.max_memory
    if nbytes > limit - resident_within(max(0, limit - nbytes)):
        raise LimitError(f"the results of {n:,} sweep points would need about {nbytes / 2**30:.2f} GiB, more than "
                         f"the memory limit of {limit / 2**30:.2f} GiB leaves",
                         hint="sweep fewer points at a time, or raise the limit with TAPECLI_MAX_MEMORY=BYTES")


# ------------------------------------------------------------------ vectorising

def vectorisable(program: ast.Program, command: str, options: Options, declared: dict) -> bool:
    """Whether one run with the swept declarations bound to a whole batch gives each point's answer.

    True only for ``grad`` without --of, when every swept declaration is a float scalar and the program
    is straight-line: declarations whose value is a number, assignments to one name and tape blocks of
    them, whose expressions are numbers, names, ``+ - * / **``, unary minus and the elementwise builtins
    in ``ELEMENTWISE``, and gradient requests ``t.gradient(y, x)`` (or ``[x1, x2]``) whose sources are
    swept declarations. Then every value is a scalar or has the batch's shape, each element depends on
    its own point only, and the gradient of the (implicitly summed) target w.r.t. the batch is each
    point's derivative. No print, expect, loop, branch, function or reduction."""
    if command != "grad" or options.of or options.check_numerics:
        return False
    if any(shape != () or kind != "f" for shape, kind in declared.values()):
        return False
    swept = set(declared)
    names = set(swept)
    tapes: set[str] = set()

    def expression(node) -> bool:
        if isinstance(node, ast.Number):
            return True
        if isinstance(node, ast.Name):
            return node.id in names
        if isinstance(node, ast.BinOp):
            return node.op in ELEMENTWISE_OPS and expression(node.left) and expression(node.right)
        if isinstance(node, ast.UnaryOp):
            return node.op == "-" and expression(node.operand)
        if isinstance(node, ast.Call):
            return (isinstance(node.func, ast.Name) and node.func.id in ELEMENTWISE and node.func.id not in names
                    and len(node.args) == 1 and not node.keywords and expression(node.args[0]))
        return False

    def assign(stmt) -> bool:
        target = ast.single_name(stmt) if isinstance(stmt, ast.Assign) else None
        if target is None:
            return False
        if target in swept or target in tapes or target in ELEMENTWISE:
            return False
        if expression(stmt.value):
            names.add(target)
            return True
        return False

    def request(stmt) -> bool:
        target = ast.single_name(stmt) if isinstance(stmt, ast.Assign) else None
        if target is None:
            return False
        call = stmt.value
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "gradient"
                and isinstance(call.func.value, ast.Name) and call.func.value.id in tapes
                and len(call.args) == 2 and not call.keywords and isinstance(call.args[0], ast.Name)
                and call.args[0].id in names and target not in names | tapes | swept):
            return False
        sources = call.args[1].items if isinstance(call.args[1], ast.ListDisplay) else [call.args[1]]
        return all(isinstance(s, ast.Name) and s.id in swept for s in sources)

    for stmt in program.body:
        if isinstance(stmt, (ast.VarDecl, ast.ConstDecl)):
            value = stmt.value.operand if isinstance(stmt.value, ast.UnaryOp) and stmt.value.op == "-" else stmt.value
            if not isinstance(value, ast.Number) or stmt.name in names - swept or getattr(stmt, "options", []):
                return False
            names.add(stmt.name)
        elif isinstance(stmt, ast.TapeBlock):
            if stmt.options or stmt.name in names or not all(assign(s) for s in stmt.body):
                return False
            tapes.add(stmt.name)
        elif not (assign(stmt) or request(stmt)):
            return False
    return bool(tapes)


# ------------------------------------------------------------------ running a batch

def run_batch(command: str, source: str, filename: str, options: Options, sweeps: dict[str, np.ndarray],
              vectorise: bool = False, fd: bool = False) -> list[dict] | dict:
    """One JSON-ready outcome per point of the batch ``sweeps`` (each array a slice of the points):
    ``{"doc": ...}`` (what the command's --json prints for that point, ``check``: ``{"results": [...]}``)
    or ``{"error": {...}}`` for a program error at that point. The program is parsed once.
    A batch that ran vectorised is one ``{"stacked": doc, "points": n}`` instead (see expand)."""
    from tapecli.frontend.parser import parse
    try:
        program = parse(source, filename)
    except TdfError as e:
        return [{"error": _error(e, filename, source)}] * points(sweeps)
    if vectorise:
        docs = _vectorised(program, filename, options, sweeps)
        if docs is not None:
            return docs
    out = []
    for i in range(points(sweeps)):
        point = {name: arr[i] for name, arr in sweeps.items()}
        out.append(_one_point(command, program, source, filename,
                              options.replace(overrides={**options.overrides, **point}), fd))
    return out


def _one_point(command, program, source, filename, options, fd) -> dict:
    from tapecli import documents
    try:
        if command == "check":
            result = run_program(program, filename, options)
            results = [{"file": filename, **x} for x in result.expectations]
            if fd:
                from tapecli.tools.check import fd_check
                results += fd_check(source, filename, options)
            return {"results": results}
        result = run_program(program, filename, options)
        if command == "hessian":
            result.implicit = hessians(result, options)
        doc = documents.run_doc(result) if command == "run" else documents.requests_doc(command, result, KINDS[command])
        return {"doc": doc}
    except TdfError as e:
        return {"error": _error(e, filename, source)}
    except UsageError as e:
        return {"error": {"kind": "UsageError", "message": str(e), "line": None, "column": None}}


def _error(e: TdfError, filename, source) -> dict:
    return {"kind": e.kind, "message": e.message, "line": e.line, "column": e.column}


def hessians(result, options):
    """The implicit --of/--wrt gradients of a run, differentiated once more on their tape: the whole block
    of second derivatives, one entry per ordered pair of sources (S1, S2) in row-major order, as
    ``jax.hessian(f, argnums)`` gives it. A pair of one source is named ``d2(T)/d(S)2``; a pair of two,
    ``d2(T)/d(S1)d(S2)``: the derivative w.r.t. S2 of the gradient w.r.t. S1, shaped S1.shape + S2.shape,
    its entry carrying ``source2``."""
    from tapecli.autodiff import jacobians
    from tapecli.interpreter.objects import Request
    if not result.implicit:
        return []
    first = result.implicit[0]
    sources = [req.leaves[0] for req in result.implicit]
    labels = [req.labels[0] for req in result.implicit]
    values, whys = jacobians.hessian_block(first.tape_obj, first.targets, sources, options.unconnected,
                                           mode=options.jacobian_mode)
    found = []
    for i, (source, label) in enumerate(zip(sources, labels)):
        for j, label2 in enumerate(labels):
            value = values[i][j]
            h = Request("hessian", None, first.tape, options.of, [label], [value], [value], [whys[i][j]],
                        [source], targets=first.targets, tape_obj=first.tape_obj)
            if i == j:
                h.names = [f"d2({options.of})/d({label})2"]
            else:
                h.names = [f"d2({options.of})/d({label})d({label2})"]
                h.second = [label2]
            found.append(h)
    return found


def _vectorised(program, filename, options, sweeps) -> list[dict] | None:
    """The batch in one run (see vectorisable); None to fall back to a loop (a warning, an error)."""
    from tapecli import documents
    n = points(sweeps)
    from tapecli.kernels.tf_float32 import pointwise
    try:
        with pointwise():           # (the points' values whatever the batches: the same on a cluster's workers)
            result = run_program(program, filename, options.replace(overrides={**options.overrides, **sweeps}))
    except (TdfError, UsageError):
        return None
    if result.warnings:
        return None
    doc = documents.requests_doc("grad", result, KINDS["grad"])
    for e in doc["gradients"]:
        if e["value"] is None or e["shape"] != [n]:
            return None
        e["shape"] = []
    return {"stacked": doc, "points": n}


def expand(result) -> list[dict]:
    """A batch's per-point outcomes, from either form run_batch returns."""
    if isinstance(result, list):
        return result
    doc = result["stacked"]
    return [{"doc": {**doc, "gradients": [{**e, "value": e["value"][i]} for e in doc["gradients"]]}}
            for i in range(result["points"])]


def batches(n: int, size: int) -> list[tuple[int, int]]:
    return [(start, min(start + size, n)) for start in range(0, n, size)]


def slice_sweeps(sweeps: dict, start: int, stop: int) -> dict:
    return {name: arr[start:stop] for name, arr in sweeps.items()}


# ------------------------------------------------------------------ the whole sweep

def run_parts(command: str, source: str, filename: str, options: Options, sweeps: dict[str, np.ndarray],
              workers: int = 1, cluster=None, fd: bool = False, progress=None) -> tuple[list, bool]:
    """Each batch's result (see run_batch; a lost batch as an error at each of its points), in order."""
    from tapecli.frontend.parser import parse
    from tapecli.tools.cluster import Lost, chunk_size, run_chunks, worker_count
    program = parse(source, filename)
    declared = check_declarations(program, filename, options, sweeps, command)
    vectorise = vectorisable(program, command, options, declared)
    n = points(sweeps)
    size = chunk_size(n, cluster.workers if cluster is not None else workers,
                      VECTOR_BATCH if vectorise else LOOP_BATCH)
    spans = batches(n, size)
    chunks = [(command, source, filename, options, slice_sweeps(sweeps, a, b), vectorise, fd) for a, b in spans]
    workers = worker_count(workers, len(chunks))      # (as check's: no more processes than batches or CPUs)

    def done(index, result):
        if progress is not None:
            progress(spans[index][1] - spans[index][0])
    results = run_chunks(run_batch, chunks, workers, cluster, done)
    for index, ((a, b), result) in enumerate(zip(spans, results)):
        if isinstance(result, Lost):
            kind = "WorkerLost" if result.lost else "InternalError"
            results[index] = [{"error": {"kind": kind, "message": result.message, "line": None,
                                         "column": None}} for _ in range(a, b)]
    return results, vectorise


def run_sweep(command: str, source: str, filename: str, options: Options, sweeps: dict[str, np.ndarray],
              workers: int = 1, cluster=None, fd: bool = False, progress=None) -> tuple[list[dict], bool]:
    """Every point's outcome (see run_batch), in order, and whether batches ran vectorised. Batches run
    here, in a pool of ``workers`` processes, or on ``cluster`` (tools/cluster.py); ``progress(k)`` is
    called as each batch's k points come back."""
    results, vectorise = run_parts(command, source, filename, options, sweeps, workers, cluster, fd, progress)
    return [o for result in results for o in expand(result)], vectorise


def sweep_doc(command: str, source: str, filename: str, options: Options, sweeps: dict[str, np.ndarray],
              workers: int = 1, cluster=None, progress=None) -> dict:
    """The command's stacked --json document (see stacked_doc); vectorised batches are joined as they
    came, without a document per point."""
    results, vectorise = run_parts(command, source, filename, options, sweeps, workers, cluster, False, progress)
    if not all(isinstance(result, dict) for result in results):
        outcomes = [o for result in results for o in expand(result)]
        return stacked_doc(command, filename, outcomes, list(sweeps), vectorise)
    from tapecli.documents import SCHEMA
    entries = [{**e, "value": [v for result in results for v in result["stacked"]["gradients"][j]["value"]]}
               for j, e in enumerate(results[0]["stacked"]["gradients"])]
    return {"schema": SCHEMA, "command": command, "file": filename, "ok": True, KEYS[command]: entries,
            "warnings": [],
            "sweep": {"names": list(sweeps), "points": points(sweeps), "vectorised": True}}


def point_errors(outcomes: list[dict]) -> list[dict]:
    return [{"point": k, **o["error"]} for k, o in enumerate(outcomes) if "error" in o]


def _why_failed(error: dict) -> str:
    where = f" (line {error['line']})" if error.get("line") else ""
    return f"the program failed at this point: {error['kind']}: {error['message']}{where}"


def _warnings(outcomes: list[dict]) -> list[dict]:
    """Each distinct warning once, with the points it was given at."""
    seen: dict[tuple, dict] = {}
    for k, o in enumerate(outcomes):
        for w in o.get("doc", {}).get("warnings", []):
            key = (w.get("line"), w.get("message"))
            seen.setdefault(key, {**w, "points": []})["points"].append(k)
    return list(seen.values())


def stacked_doc(command: str, filename: str, outcomes: list[dict], names: list[str], vectorised: bool) -> dict:
    """The command's --json document with each value stacked along a new leading axis of points."""
    from tapecli.documents import SCHEMA
    errors = point_errors(outcomes)
    good = [o["doc"] for o in outcomes if "doc" in o]
    doc = {"schema": SCHEMA, "command": command, "file": filename, "ok": not errors}
    if command == "run":
        base = good[0] if good else {"values": {}, "types": {}}
        doc["values"] = {name: [o["doc"]["values"].get(name) if "doc" in o else None for o in outcomes]
                         for name in base["values"]}
        doc["types"] = base["types"]
        doc["output"] = [line for o in outcomes for line in o.get("doc", {}).get("output", [])]
    else:
        key = KEYS[command]
        base = good[0][key] if good else []
        ident = [(e["name"], e["line"], e["tape"], e["target"], e["source"]) for e in base]
        for k, o in enumerate(outcomes):
            if "doc" in o and [(e["name"], e["line"], e["tape"], e["target"], e["source"])
                               for e in o["doc"][key]] != ident:
                error = {"kind": "SweepError", "line": None, "column": None,
                         "message": "this point made other requests than the first point that ran"}
                outcomes[k] = {"error": error}
                errors.append({"point": k, **error})
        errors.sort(key=lambda e: e["point"])
        entries = []
        for j, e in enumerate(base):
            values, whys, first = [], [], None
            for o in outcomes:
                if "error" in o:
                    values.append(None)
                    whys.append(_why_failed(o["error"]))
                    continue
                point = o["doc"][key][j]
                values.append(point["value"])
                whys.append(point.get("why"))
                if point["value"] is not None and first is None:
                    first = point
            entry = {k: v for k, v in e.items() if k != "why"}      # the keys in the per-point order
            entry.update(value=values, dtype=first["dtype"] if first else None,
                         shape=first["shape"] if first else None)
            if any(v is None for v in values):
                entry["why"] = whys
            entries.append(entry)
        doc[key] = entries
    doc["warnings"] = _warnings(outcomes)
    doc["sweep"] = {"names": list(names), "points": len(outcomes), "vectorised": vectorised}
    if errors:
        doc["errors"] = errors
        doc["ok"] = False
    return doc


def check_report(path: str, outcomes: list[dict], report):
    """A check FileReport from a sweep's outcomes: the points where an expectation holds are one passing
    result (with ``"points"``, how many); each point where it fails is a result of its own (``"point"``)."""
    by_expect: dict[tuple, list] = {}
    for k, o in enumerate(outcomes):
        for res in o.get("results", []):
            by_expect.setdefault((res["line"], res["expr"]), []).append((k, res))
    for found in by_expect.values():
        passed = [(k, res) for k, res in found if res["ok"]]
        if passed:
            report.results.append({**passed[0][1], "points": len(passed)})
        report.results += [{**res, "point": k} for k, res in found if not res["ok"]]
    errors = point_errors(outcomes)
    if errors:
        first = errors[0]
        where = f"{path}:{first['line']}: " if first["line"] else f"{path}: "
        report.error = {"kind": first["kind"], "message": f"at sweep point {first['point']}: {first['message']}",
                        "line": first["line"], "column": first["column"],
                        "points": [e["point"] for e in errors],
                        "text": f"{where}{first['kind']}: {first['message']} (at sweep point {first['point']}"
                                + (f" and {len(errors) - 1} more" if len(errors) > 1 else "") + ")"}
    return report
