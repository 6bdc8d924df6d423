"""`tapecli check`: run the expectations of many files, and finite-difference checks (--fd).

Everything a worker returns is plain data (dicts and strings), so files can be checked
in a process pool.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tapecli.api import Options, read_source, run_program, run_source
from tapecli.frontend.ast import ConstDecl, VarDecl
from tapecli.errors import TdfError, UsageError, plural
from tapecli.autodiff.gradcheck import DEFAULTS
from tapecli.runtime.values import dtype_name
from tapecli.interpreter.jsonvalue import tensor_json

FD_FULL_LIMIT = 16          # sources up to this many elements are perturbed one element at a time
FD_DIRECTIONS = 3


@dataclass
class FileReport:
    file: str
    results: list[dict] = field(default_factory=list)
    error: dict | None = None           # {"kind", "message", "line", "column", "text"} for a program error
    lint: list[dict] = field(default_factory=list)   # {"file", "line", "code", "message"}: warnings
    # The file's expectations that did not run: {"file", "line", "expr", "reason"} (after a program error,
    # or in a branch or function the run never reached)
    skipped: list[dict] = field(default_factory=list)
    seconds: float = 0.0                # how long the file took to check (parse, lint, run)

    @property
    def failed(self) -> int:
        return sum(not r["ok"] for r in self.results)

    def outcome(self, line: int, expectations: list[tuple[int, str]]) -> tuple[str, str]:
        """What became of the expectation at ``line``: ("passed" | "failed" | "skipped" | "error", text).

        ``expectations`` are the file's (line, expression) in source order (:func:`expectation_lines`). The
        program's error, if any, is the outcome of the first expectation that did not run (of the last one
        when every one ran), so that it is reported once."""
        results = [r for r in self.results if r["line"] == line]
        failures = [r for r in results if not r["ok"]]
        if failures:
            return "failed", "\n".join(f"{self.file}:{r['line']}: {describe(r)}" for r in failures)
        if self.error is not None and line == self.error_line(expectations):
            return "error", self.error["text"]
        if results:
            return "passed", f"{len(results)} passed"
        reason = next((s["reason"] for s in self.skipped if s["line"] == line), "not reached")
        return "skipped", reason

    def error_line(self, expectations: list[tuple[int, str]]) -> int | None:
        """The expectation that reports the program's error (see :meth:`outcome`)."""
        ran = {r["line"] for r in self.results}
        lines = [line for line, _ in expectations]
        return next((line for line in lines if line not in ran), lines[-1] if lines else None)


def collect(paths: list[str], python: bool = False) -> list[str]:
    """The files named, and the .tdf files under the folders named (recursively), in order; with ``python``,
    also the TensorFlow programs among the .py files under them (those that import TensorFlow or use a
    GradientTape), outside hidden folders and ``__pycache__``."""
    files = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            found = sorted(path.rglob("*.tdf"))
            if python:
                found = sorted(found + [f for f in path.rglob("*.py") if _tensorflow_program(f, path)])
            files += [str(f) for f in found]
        elif path.is_file() or p == "-":
            files.append(p)
        else:
            raise UsageError(f"no such file or folder: {p}")
    return files


_TENSORFLOW_PROGRAM = re.compile(r"^\s*(?:import\s+tensorflow\b|from\s+tensorflow\b)|GradientTape", re.MULTILINE)


def _tensorflow_program(path: Path, top: Path) -> bool:
    """A .py file found under a folder that is a TensorFlow program: not under a hidden folder (``.venv``,
    ``.git``) or ``__pycache__`` below ``top``, and importing TensorFlow or using a GradientTape."""
    parts = path.relative_to(top).parts[:-1]
    if any(part.startswith(".") or part in ("__pycache__", "site-packages", "node_modules") for part in parts):
        return False
    try:
        with path.open(encoding="utf-8", errors="replace") as f:
            return bool(_TENSORFLOW_PROGRAM.search(f.read(1 << 20)))
    except OSError:
        return False


def check_file(path: str, options: Options, fd: bool = False, source: str | None = None) -> FileReport:
    """The report of one file; ``source``, when given, is its text (read here otherwise)."""
    from tapecli.documents import format_error
    from tapecli.frontend.parser import parse
    report = FileReport(path)
    start = time.perf_counter()
    program = None
    try:
        if source is None:
            source, _ = read_source(path)
        program = parse(source, path)          # for lint and the list of expectations (run_source parses anew)
        report.lint = lint_findings(source, path, program)
        result = run_source(source, path, options)
        report.results += [{"file": path, **r} for r in result.expectations]
        if fd:
            report.results += fd_check(source, path, options)
    except TdfError as e:
        # The expectations that ran before the error count (api.run_program keeps them on the error).
        if not report.results:
            report.results += [{"file": path, **r} for r in getattr(e, "expectations", ())]
        report.error = {"kind": e.kind, "message": e.message, "line": e.line, "column": e.column,
                        "text": format_error(e, path, source, terminal=False), "warnings": list(getattr(e, "warnings", ()))}
    except UsageError as e:
        report.error = {"kind": "UsageError", "message": str(e), "line": None, "column": None,
                        "text": f"{path}: {e}"}
    except Exception as e:      # a bug in tapecli: this file's error; the other files are still checked
        return internal_error_report(path, e)
    if source is not None:
        ran = {r["line"] for r in report.results}
        if report.error is None:
            reason = "not reached: the run never came to this line"
        else:
            at = f" at line {report.error['line']}" if report.error["line"] else ""
            reason = f"not run: the program stopped{at} with {report.error['kind']}"
        report.skipped = [{"file": path, "line": line, "expr": expr, "reason": reason}
                          for line, expr in expectation_lines(source, path, program) if line not in ran]
    report.seconds = time.perf_counter() - start
    return report


_EXPECT_LINE = re.compile(r"^[ \t]*(expect_error[ \t]+(\w+)|(?:expect|assert)[ \t]+(.*?))[ \t]*:?[ \t]*(#.*)?$")


def expectation_lines(source: str, path: str = "<input>", program=None) -> list[tuple[int, str]]:
    """(line, expression) of every ``expect``, ``expect_error`` and ``assert`` statement of a program, in source order,
    without running it; the expression is spelled as a result's ``expr`` (``expect_error TapeError`` for a
    block). ``program`` is the parsed program when there is one; a source that does not parse is read
    line by line."""
    from tapecli.frontend import ast
    if program is None:
        from tapecli.frontend.parser import parse
        try:
            program = parse(source, path)
        except TdfError:
            program = None
    if program is None:
        found = []
        for number, text in enumerate(source.splitlines(), 1):
            m = _EXPECT_LINE.match(text)
            if m:
                found.append((number, f"expect_error {m.group(2)}" if m.group(2) else
                              _without_message(m.group(3))))
        return found
    found = []
    stack = [program.body]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(reversed(item))
            continue
        if isinstance(item, (ast.Expect, ast.Assert)):
            found.append((item.line, source[item.test.start:item.test.end]))
        elif isinstance(item, ast.ExpectError):
            found.append((item.line, f"expect_error {item.kind}"))
        if isinstance(item, ast.Node):
            stack.extend(getattr(item, f, None) for f in reversed(item._fields)
                         if isinstance(getattr(item, f, None), (list, tuple, ast.Node)))
    return sorted(set(found))


def _without_message(text: str) -> str:
    """``test, "message"`` -> ``test`` (for a line that did not parse: a guess at the top-level comma)."""
    depth = 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            return text[:i].strip()
    return text.strip()


def internal_error_report(path: str, error: BaseException) -> FileReport:
    """The report of a file whose check met a bug in tapecli (exit 4 once every file is reported)."""
    message = (f"internal error: {type(error).__name__}: {error}. This is a bug in tapecli; please report it "
               f"with the program (set TAPECLI_DEBUG=1 for the traceback).")
    return FileReport(path, error={"kind": INTERNAL_ERROR, "message": message, "line": None, "column": None,
                                   "text": f"{path}: {message}"})


INTERNAL_ERROR = "InternalError"


def worker_count(requested: int, files: int) -> int:
    """Processes for `check --workers N`: never more than the files, nor than the CPUs (cluster.worker_count)."""
    from tapecli.tools.cluster import worker_count as count
    return count(requested, files)


def lint_findings(source: str, path: str, program=None) -> list[dict]:
    """`tapecli lint`'s findings, as warnings (of ``program``, the source parsed, when given); none for a
    file that does not parse (run reports that)."""
    from tapecli.tools.lint import lint_checked
    try:
        found = lint_checked(source, path, program=program)     # noqa comments are honoured here too
    except TdfError:
        return []
    return [{"file": path, "line": f.line, "code": f.code, "message": f.message} for f in found]


# ------------------------------------------------------------ finite differences

def _declared(program_body) -> set[str]:
    return {s.name for s in program_body if isinstance(s, (VarDecl, ConstDecl))}


def fd_check(source: str, path: str, options: Options) -> list[dict]:
    """Each gradient request w.r.t. declarations, against central differences of the program
    re-run with perturbed declarations (as --set would), in float64. One result per request."""
    options = options.replace(dtype="float64")
    base = run_source(source, path, options)
    requests = [(index, req) for index, req in enumerate(base.requests)
                if req.kind == "gradient" and req.objective is not None]
    program = getattr(base.interpreter, "program", None)     # parsed once: each perturbed run runs it again
    if not requests or program is None:    # (a program CPython ran declares nothing a perturbed run could set)
        return []
    declared = _declared(program.body)
    scope = base.scope.vars
    results = []
    for index, req in requests:
        checks = []
        for label, leaf, version, snapshot, value in zip(req.labels, req.leaves, req.versions, req.snapshots,
                                                         req.values):
            name = _declaration_of(leaf, scope, declared)
            if name is None:
                continue
            if version:
                checks.append({"source": label, "skipped": f"{name} was assigned before the request"})
                continue
            checks.append(_fd_source(program, path, options, index, name, snapshot, value))
        if not checks:
            continue
        results.append(_fd_result(path, req, index, checks))
    return results


def _declaration_of(leaf, scope, declared) -> str | None:
    for name in declared:
        if scope.get(name) is leaf:
            return name
    return None


def _objective_with(program, path, options, index, name, value: np.ndarray) -> float:
    run = run_program(program, path, options.replace(overrides={**options.overrides, name: value}))
    if len(run.requests) <= index or run.requests[index].objective is None:
        raise _ControlFlowChanged()
    return run.requests[index].objective


class _ControlFlowChanged(Exception):
    pass


def _fd_source(program, path, options, index, name, base: np.ndarray, analytic) -> dict:
    eps, rtol, atol = DEFAULTS["float64" if base.dtype == np.float64 else "float32"]
    grad = np.zeros(base.shape) if analytic is None else analytic.value.astype(np.float64)
    rng = np.random.default_rng(0)
    if base.size <= FD_FULL_LIMIT:
        directions = [np.eye(base.size)[i].reshape(base.shape) for i in range(base.size)]
        method = "every element"
    else:
        directions = [rng.standard_normal(base.shape) for _ in range(FD_DIRECTIONS)]
        method = f"{FD_DIRECTIONS} random directions, seed 0"
    worst = {"source": name, "max_abs_error": 0.0, "max_rel_error": 0.0, "ok": True, "method": method,
             "rtol": rtol, "atol": atol, "dtype": dtype_name(base.dtype)}
    try:
        for u in directions:
            plus = _objective_with(program, path, options, index, name, base + eps * u)
            minus = _objective_with(program, path, options, index, name, base - eps * u)
            moved = u != 0      # an inf gradient element off the direction must not make its product NaN
            with np.errstate(all="ignore"):     # inf and NaN are compared below
                numeric = (plus - minus) / (2 * eps)
                tape_value = float(np.sum(grad[moved] * u[moved]))
            err = 0.0 if tape_value == numeric else abs(tape_value - numeric)
            with np.errstate(all="ignore"):     # np.maximum keeps a NaN error: max() would drop it
                worst["max_abs_error"] = float(np.maximum(worst["max_abs_error"], err))
                worst["max_rel_error"] = float(np.maximum(worst["max_rel_error"], err / max(abs(numeric), 1e-300)))
            if not err <= atol + rtol * abs(numeric):     # NaN on either side is a mismatch
                worst["ok"] = False
                worst.setdefault("first_mismatch", {"tape": tape_value, "finite_differences": numeric})
    except _ControlFlowChanged:
        return {"source": name, "ok": False, "error": "the perturbed program made different gradient requests",
                "rtol": rtol, "atol": atol}
    return worst


def _json_numbers(value):
    """``value`` with its floats as the JSON documents write them: inf and NaN as "Infinity", "NaN"."""
    if isinstance(value, dict):
        return {key: _json_numbers(item) for key, item in value.items()}
    return tensor_json(np.asarray(value, np.float64)) if isinstance(value, float) else value


def _fd_result(path, req, index, checks) -> dict:
    done = [c for c in checks if "skipped" not in c]
    skipped = [c for c in checks if "skipped" in c]
    ok = all(c.get("ok", True) for c in done)
    worst = max(done, key=lambda c: c.get("max_rel_error", float("inf")), default=None)
    parts = []
    if worst is not None:
        parts.append(f"{len(done)} source(s) by {done[0].get('method', 'finite differences')}: "
                     f"max abs error {max(c.get('max_abs_error', 0) for c in done):.3g}, "
                     f"max rel error {worst.get('max_rel_error', float('nan')):.3g} at {worst['source']}")
        for c in done:
            if "error" in c:
                parts.append(f"{c['source']}: {c['error']}")
            elif not c["ok"]:
                m = c["first_mismatch"]
                parts.append(f"{c['source']}: tape {m['tape']:.6g}, finite differences {m['finite_differences']:.6g}")
    parts += [s["skipped"] for s in skipped]
    sources = ", ".join(c["source"] for c in checks)
    return {"file": path, "line": req.line, "expr": f"--fd gradient of {req.target_text} w.r.t. {sources}",
            "ok": ok, "actual": {"worst": _json_numbers(worst), "skipped": [s["source"] for s in skipped]},
            "expected": "finite differences",
            "rtol": worst["rtol"] if worst else 0.0, "atol": worst["atol"] if worst else 0.0,
            "message": "; ".join(parts)}


# ------------------------------------------------------------------ outputs

# Characters XML 1.0 cannot hold, even escaped (control characters, surrogates, U+FFFE/U+FFFF).
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml_safe(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                        else f"\\u{ord(m.group()):04x}", text)


def _element(parent, tag: str, text: str | None = None, **attributes: str):
    """A child element whose text and attributes are XML-safe (ElementTree escapes <, & and quotes only)."""
    import xml.etree.ElementTree as ET
    element = ET.SubElement(parent, tag, {k: _xml_safe(v) for k, v in attributes.items()})
    if text is not None:
        element.text = _xml_safe(text)
    return element


def junit_xml(reports: list[FileReport]) -> str:
    """A testsuite per file, a testcase per expectation (a program error is one errored testcase, the
    expectations it kept from running are skipped testcases), with totals on <testsuites>.

    A file's expectations are checked in one run of the program, so a testcase's ``time`` is that run's
    time shared evenly among the testcases that ran (0 for a skipped one); the suite's is the whole run's."""
    import xml.etree.ElementTree as ET
    root = ET.Element("testsuites", name="tapecli check")
    totals_ = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0, "time": 0.0}
    for rep in reports:
        ran = len(rep.results) + bool(rep.error)
        cases = ran + len(rep.skipped)
        share = f"{rep.seconds / ran:.6f}" if ran else "0.000000"
        counts = {"tests": cases, "failures": rep.failed, "errors": int(rep.error is not None),
                  "skipped": len(rep.skipped), "time": rep.seconds}
        suite = _element(root, "testsuite", name=rep.file, **{k: _number(v) for k, v in counts.items()})
        for k, v in counts.items():
            totals_[k] += v
        for r in rep.results:
            case = _element(suite, "testcase", name=f"line {r['line']}: {r['expr']}", classname=rep.file,
                            file=rep.file, line=str(r["line"]), time=share)
            if not r["ok"]:
                _element(case, "failure", describe(r), message=describe(r))
        for s in rep.skipped:
            case = _element(suite, "testcase", name=f"line {s['line']}: {s['expr']}", classname=rep.file,
                            file=rep.file, line=str(s["line"]), time="0.000000")
            _element(case, "skipped", message=s["reason"])
        if rep.error:
            case = _element(suite, "testcase", name="program", classname=rep.file, file=rep.file,
                            line=str(rep.error["line"] or 0), time=share)
            _element(case, "error", rep.error["text"], message=f"{rep.error['kind']}: {rep.error['message']}",
                     type=rep.error["kind"])
    for k, v in totals_.items():
        root.set(k, _number(v))
    return ET.tostring(root, encoding="unicode", xml_declaration=True)


def _number(value) -> str:
    return f"{value:.6f}" if isinstance(value, float) else str(value)


def write_atomically(path: str, text: str, option: str = "--junit", reads=()) -> None:
    """Write ``path`` whole or not at all: a check that fails midway never leaves a stale or half file; only a
    regular file or a new path that is none of the files checked (``reads``; tools/outfile.py), an
    OutputFileError (exit 2) otherwise."""
    from tapecli.tools import outfile
    outfile.write(path, text, option, reads)


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_escape(text: str, property: bool = False) -> str:
    """Text for a GitHub workflow command: its message (data) or one of its ``key=value`` properties."""
    return _escape_property(text) if property else _escape_data(text)


def github_annotations(reports: list[FileReport]) -> list[str]:
    """GitHub workflow commands (`::error file=...,line=...::message`), escaped as GitHub documents."""
    lines = []
    for rep in reports:
        for r in rep.results:
            if not r["ok"]:
                lines.append(f"::error file={_escape_property(rep.file)},line={r['line']},"
                             f"title={_escape_property('expect failed')}::{_escape_data(describe(r))}")
        if rep.error:
            lines.append(f"::error file={_escape_property(rep.file)},line={rep.error['line'] or 1},"
                         f"title={_escape_property(rep.error['kind'])}::{_escape_data(rep.error['message'])}")
    return lines


def markdown_summary(reports: list[FileReport]) -> str:
    """A GitHub job summary (Markdown, for $GITHUB_STEP_SUMMARY): the totals, a row per file, and each
    failure, error and skipped expectation with its file and line."""
    passed, failed, errors = totals(reports)
    skipped = sum(len(rep.skipped) for rep in reports)
    mark = "✅" if not (failed or errors) else "❌"
    out = [f"### {mark} tapecli check: {passed} passed, {failed} failed, {skipped} skipped, {plural(errors, 'error')}", "",
           "| file | passed | failed | skipped | error |", "|---|---:|---:|---:|---|"]
    for rep in reports:
        error = f"{rep.error['kind']} at line {rep.error['line']}" if rep.error and rep.error["line"] else \
            rep.error["kind"] if rep.error else ""
        out.append(f"| `{rep.file}` | {len(rep.results) - rep.failed} | {rep.failed} | {len(rep.skipped)} | {error} |")
    problems = [(rep.file, r["line"], "failed", describe(r)) for rep in reports for r in rep.results if not r["ok"]]
    problems += [(rep.file, rep.error["line"], "error", f"{rep.error['kind']}: {rep.error['message']}")
                 for rep in reports if rep.error]
    problems += [(rep.file, s["line"], "skipped", f"{s['expr']}: {s['reason']}") for rep in reports for s in rep.skipped]
    if problems:
        out += ["", "| where | what | |", "|---|---|---|"]
        out += [f"| `{file}:{line or ''}` | {what} | {_cell(text)} |" for file, line, what, text in problems]
    return "\n".join(out) + "\n"


def _cell(text: str) -> str:
    """Text for one cell of a Markdown table."""
    return text.replace("|", "\\|").replace("\n", " ")


def _short(value) -> str:
    import json
    text = json.dumps(value)
    return text if len(text) <= 120 else text[:117] + "..."


def describe(r: dict) -> str:
    """One result in words: the expression (and the sweep point), the values compared and the tolerance."""
    text = f"{r['expr']}" + (f" at sweep point {r['point']}: " if "point" in r else ": ")
    if r["expected"] == "finite differences":     # gradcheck and --fd: the message has the figures
        return text + (r.get("message") or _short(r["actual"]))
    if r.get("message"):
        text += f"{r['message']}; "
    text += f"actual {_short(r['actual'])}, expected {_short(r['expected'])}"
    if r.get("rtol") or r.get("atol"):
        text += f" (rtol {r['rtol']:g}, atol {r['atol']:g})"
    return text


def totals(reports: list[FileReport]) -> tuple[int, int, int]:
    passed = sum(len(r.results) - r.failed for r in reports)
    failed = sum(r.failed for r in reports)
    errors = sum(r.error is not None for r in reports)
    return passed, failed, errors


def check_files(files, options, fd, workers, fail_fast, progress) -> list[FileReport]:
    """Check each file, here or in ``workers`` processes, in order; ``progress(1)`` after each; with
    ``fail_fast``, stop after the first file that fails."""
    reports = []
    workers = worker_count(workers, len(files))
    if workers == 1:
        for f in files:
            reports.append(check_file(f, options, fd))
            if progress:
                progress(1)
            if fail_fast and (reports[-1].failed or reports[-1].error):
                break
    else:
        from tapecli.tools.cluster import process_pool
        with process_pool(workers) as pool:     # (Ctrl-C, SIGTERM, SIGHUP: the workers are stopped)
            futures = [pool.submit(check_file, f, options, fd) for f in files]
            for f, fut in zip(files, futures):
                try:
                    reports.append(fut.result())
                except Exception as e:      # the worker died (out of memory, a crash in compiled code)
                    reports.append(internal_error_report(f, e))
                if progress:
                    progress(1)
                if fail_fast and (reports[-1].failed or reports[-1].error):
                    for rest in futures:
                        rest.cancel()
                    break
    return reports
