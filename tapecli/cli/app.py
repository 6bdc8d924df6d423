"""The command line: options -> library API -> renderer. Exit codes are docs/spec/CLI.md's."""
# (No `from __future__ import annotations`: the commands' annotations are objects when defined, which the fast
# command line reads without compiling their text, 0.2 ms of a small run.)
import contextlib
import os
import sys
from typing import Callable, Optional

from tapecli.version import __version__
from tapecli.cli import collector
from tapecli.cli import lazytyper as typer  # Typer's API; the real Typer is imported only when needed
from tapecli.cli.lazytyper import Annotated
from tapecli.cli.process import EXIT_INTERNAL, EXIT_PROGRAM, EXIT_USAGE, run_process
from tapecli.errors import plural

app = typer.Typer(no_args_is_help=True, pretty_exceptions_enable=False,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="Gradients of small tensor programs (.tdf files), with tf.GradientTape's semantics.")

FileArg = Annotated[str, typer.Argument(help="The .tdf program; - reads standard input.", show_default=False,
                                        metavar="FILE")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable output on stdout.")]
SetOpt = Annotated[Optional[list[str]], typer.Option(
    "--set", metavar="NAME=VALUE",
    help="Override a var/const: NAME=NUMBER, NAME=[JSON array], NAME=@file.npy or @file.json.")]
DtypeOpt = Annotated[Optional[str], typer.Option("--dtype", help="float64 makes float literals and "
                                                                  "declarations float64.")]
DeviceOpt = Annotated[str, typer.Option("--device", help="Where kernels run: cpu, or cuda (needs a GPU and the cuda extra).")]
OfOpt = Annotated[Optional[str], typer.Option("--of", help="Differentiate this name (implicit persistent tape).")]
WrtOpt = Annotated[Optional[str], typer.Option("--wrt", help="w.r.t. these names, comma-separated.")]
UnconnectedOpt = Annotated[str, typer.Option("--unconnected", help="none or zero, for --of/--wrt.")]
StepsOpt = Annotated[int, typer.Option("--max-steps", help="Most steps (loop iterations and calls).")]
ElementsOpt = Annotated[int, typer.Option("--max-elements", help="Most elements in one tensor.")]
DepthOpt = Annotated[int, typer.Option("--max-depth", help="Deepest function call nesting.")]
QuietOpt = Annotated[bool, typer.Option("-q", "--quiet", help="No warnings on stderr.")]
NoColorOpt = Annotated[bool, typer.Option("--no-color", help="Plain output (also NO_COLOR).")]
ModeOpt = Annotated[str, typer.Option("--mode", help="How jacobians are computed: auto (the cheaper for the "
                                                     "shapes), rev (reverse mode) or fwd (forward mode).")]
NumericsOpt = Annotated[bool, typer.Option("--check-numerics", help="Stop at the first statement whose forward "
                                                                    "or backward result holds NaN or Inf.")]
SweepOpt = Annotated[Optional[list[str]], typer.Option(
    "--sweep", metavar="NAME=@FILE",
    help="Run at each point: NAME=@points.npy or @points.json binds a var/const to each slice along "
         "the first axis; several --sweep are zipped. Results are stacked.")]
SchedulerOpt = Annotated[Optional[str], typer.Option(
    "--scheduler", help="Run the work on this Dask scheduler (host:port), or local:N for a local cluster of N "
                        "processes; also TAPECLI_SCHEDULER. Needs the dask extra.")]
SweepWorkersOpt = Annotated[int, typer.Option("--workers", help="With --sweep: run point batches in N processes.")]
FullOpt = Annotated[bool, typer.Option("--full", help="Tables print every element of a tensor (no ... elisions).")]
OutputOnlyOpt = Annotated[bool, typer.Option("--output-only", help="Print the program's output alone, as Python "
                                             "would: no table of named values after it.")]
KeywordOpt = Annotated[Optional[str], typer.Option("-k", metavar="EXPR", help=(
    "Only the entries whose name, target, source or tape holds these words, as pytest's -k (and, or, not)."))]
LineOpt = Annotated[Optional[str], typer.Option("--line", metavar="N|A-B", help=(
    "Only the requests made at this program line (or lines A to B)."))]
LastOpt = Annotated[bool, typer.Option("--last", help=(
    "Of the requests made at one call site (a loop's), only the last."))]
OutOpt = Annotated[Optional[list[str]], typer.Option("-o", "--out", metavar="FILE.npz|[NAME=]FILE.npy", help=(
    "Also write the results as arrays: every entry to FILE.npz, or one to FILE.npy (repeatable)."))]


def _version(value: bool):
    if value:
        print(f"tapecli {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(version: Annotated[bool, typer.Option("-V", "--version", callback=_version, is_eager=True,
                                                       help="Print the version and exit.")] = False):
    """tapecli: run a .tdf program and report its gradients."""


class Invocation:
    """What every command shares: reading the file, running it, and turning failures into exit codes."""

    def __init__(self, command, file, json_out, sets, dtype, device, of, wrt, unconnected, max_steps,
                 max_elements, max_depth, quiet, no_color, check_numerics=False):
        self.command = command
        self.file = file
        self.json = json_out
        self.quiet = quiet
        self.color = False if no_color or os.environ.get("NO_COLOR") else None
        self.sets = sets or []
        self.dtype = dtype
        self.device = device
        self.of = of
        self.wrt = [w.strip() for w in wrt.split(",") if w.strip()] if wrt else []
        self.wrt_given = wrt is not None
        self.unconnected = unconnected
        self.limits = (max_steps, max_elements, max_depth)
        self.check_numerics = check_numerics
        self.source = None
        self.filename = None if file == "-" else file
        self.sweep, self.scheduler, self.workers = None, None, 1
        self.out: list[str] = []
        self.selection = None               # (-k, --line, --last) as given, or None
        self.output_only = False            # (run --output-only: the program's output alone)
        self.selected_json = None           # explain's "selected" (a run's is the result's)

    def options(self):
        from tapecli.api import Options, parse_set
        from tapecli.errors import UsageError
        from tapecli.kernels import backends
        from tapecli.runtime.limits import Limits
        backends.check(self.device, "--device")
        if self.unconnected not in ("none", "zero"):
            raise UsageError(f"--unconnected must be none or zero, got {self.unconnected}")
        if self.of is not None and not self.of.strip():
            raise UsageError("--of needs a name")
        if self.wrt_given and not self.wrt:
            raise UsageError("--wrt needs a name (or several, comma-separated)")
        if self.wrt and not self.of:
            raise UsageError("--wrt needs --of")
        if any(n <= 0 for n in self.limits):
            raise UsageError("limits must be positive")
        mode = getattr(self, "jacobian_mode", "auto")
        if mode not in ("auto", "rev", "fwd"):
            raise UsageError(f"--mode must be auto, rev or fwd, got {mode}")
        if self.command == "hessian" and not self.of:
            raise UsageError("hessian needs --of NAME (and --wrt NAME)")
        limits = Limits(*self.limits)
        return Options(dtype=self.dtype, overrides=dict(parse_set(s, limits) for s in self.sets), of=self.of,
                       jacobian_mode=mode,
                       wrt=self.wrt, unconnected=self.unconnected, limits=limits,
                       request="jacobian" if self.command == "jacobian" else "gradient",
                       explain=self.command in ("grad", "jacobian", "explain", "watched"),
                       check_numerics=self.check_numerics, device=self.device,
                       keep_requests=self.command not in ("run", "bench"))

    def selected(self):
        """The selection -k, --line and --last ask for (tools/select.py), checked before the run; or None."""
        if self.selection is None:
            return None
        from tapecli.tools.select import Selection
        return Selection.of(*self.selection)

    def reads(self, sweep: list[str] | None = None) -> list[str]:
        """The files this command reads (the program, --set and --sweep files): no output file may be one."""
        from tapecli.tools.outfile import read_paths
        return read_paths([self.file], [*self.sets, *(self.sweep or ()), *(sweep or ())])

    def run(self, render: Callable, compute: Callable | None = None) -> None:
        """Read the file, compute (by default: run it), and render; failures become exit codes."""
        if self.sweep or self.scheduler or self.workers != 1:
            from tapecli.cli.sweepcli import run_sweep_command
            run_sweep_command(self)
        from tapecli.errors import TdfError, UsageError
        try:
            from tapecli.api import read_source, run_source
            collector.for_the_run()
            options = self.options()
            selection = self.selected()
            if self.out:
                from tapecli.tools import arrays
                out = arrays.parse_out(self.out, self.reads())      # (the --out files checked before the run)
            self.source, self.filename = read_source(self.file)
            from tapecli.runtime.limits import data_bounded
            watched = contextlib.nullcontext()      # (a time limit's watchdog, cli/watchdog.py, imported for one)
            if options.limits.max_seconds is not None:
                from tapecli.cli.watchdog import watching
                watched = watching(options.limits.max_seconds, self._write_program_error, self.filename, self.source)
            with watched, data_bounded(options.limits.max_memory):
                result = (compute or run_source)(self.source, self.filename, options)
            if selection is not None:
                result = self._select(result, selection)
            if self.out:
                arrays.write(out, arrays.result_arrays(self.command, result))
        except UsageError as e:
            self._fail(EXIT_USAGE, "UsageError", str(e))
        except TdfError as e:
            self._program_error(e)
        except Exception as e:  # a bug in tapecli: say so, briefly, and ask for a report
            if os.environ.get("TAPECLI_DEBUG"):
                raise
            self._fail(EXIT_INTERNAL, "InternalError",
                       f"internal error: {type(e).__name__}: {e}. This is a bug in tapecli; please report it "
                       f"with the program (set TAPECLI_DEBUG=1 for the traceback).")
        if compute is None:
            self._side_output(result)
        try:
            render(result)
        except TdfError as e:       # a value too large to render within the limits
            self._program_error(e)

    def _select(self, result, selection):
        """Keep the requests (explain: the explanations) the selection chooses: what the table, the JSON
        document and --out report."""
        if self.command == "explain":
            kept = selection.entries(result, "explained")
            self.selected_json = selection.to_json(len(kept), len(result))
            return kept
        from tapecli.api import requests_of
        from tapecli.tools.sweep import KINDS
        everything = requests_of(result, KINDS[self.command])
        result.selected = selection.requests(everything, {"grad": "gradient"}.get(self.command, self.command))
        result.selected_json = selection.to_json(sum(len(r.values) for r in result.selected),
                                                 sum(len(r.values) for r in everything))
        return result

    def _program_error(self, e):
        self._write_program_error(e)
        raise typer.Exit(EXIT_PROGRAM)

    def _write_program_error(self, e):
        """The program's error: its JSON document under --json, else its text on stderr (also the time limit's
        watchdog's, cli/watchdog.py)."""
        from tapecli.cli import render as r
        if self.json:
            print(r.dumps(r.error_doc(self.command, self.filename, e)))
        else:
            from tapecli.cli.colour import error_text
            self._printed(getattr(e, "output", ()))      # what the program printed before its error
            text = r.format_error(e, self.filename, self.source, warnings=not self.quiet)
            sys.stderr.write(error_text(text, e.kind, self.paint(sys.stderr)) + "\n")

    def paint(self, stream):
        """How text for ``stream`` is coloured (cli/colour.py): None for none."""
        from tapecli.cli.colour import painter
        return painter(stream, self.color)

    def _fail(self, code, kind, message):
        from tapecli.cli import render as r
        if self.json:
            print(r.dumps({"schema": r.SCHEMA, "command": self.command, "file": self.filename, "ok": False,
                           "error": {"kind": kind, "message": message, "line": None, "column": None}}))
        else:
            sys.stderr.write(r.terminal_text(f"tapecli {self.command}: {message}") + "\n")
        raise typer.Exit(code)

    def _side_output(self, result) -> None:
        """print() output (stdout only for `run` without --json) and warnings on stderr."""
        if not self.json or self.command != "run":
            self._printed(result.output)
        if not self.quiet:
            self.write_warnings(result.warnings)

    def _printed(self, lines) -> None:
        """The program's output: under `run`, what it printed on stdout and what it wrote to standard error
        (tf.print's lines) on stderr; under the other commands all of it on stderr (JSON stays clean)."""
        from tapecli.cli.render import program_output
        from tapecli.interpreter.core import ErrorLine, Unterminated
        for line in lines:
            stream = sys.stdout if self.command == "run" and type(line) is not ErrorLine else sys.stderr
            # (the program's last text on stdout, not ended: as Python leaves it where nothing of tapecli's follows)
            ended = "" if self.output_only and type(line) is Unterminated and stream is sys.stdout else "\n"
            stream.write(program_output(line, stream) + ended)
        sys.stdout.flush()

    def write_warnings(self, warnings, suffix=lambda warning: "") -> None:
        """The run's warnings on stderr, one a line (``suffix(w)`` after each)."""
        if warnings:
            from tapecli.cli.colour import warning_text
            from tapecli.documents import warning_line
            colour = self.paint(sys.stderr)
            for w in warnings:
                sys.stderr.write(warning_text(warning_line(self.filename, w), colour) + suffix(w) + "\n")


def _invocation(command, kw: dict) -> Invocation:
    inv = Invocation(command, kw["file"], kw["json_out"], kw["sets"], kw["dtype"], kw.get("device", "cpu"), kw.get("of"),
                      kw.get("wrt"), kw.get("unconnected", "none"), kw["max_steps"], kw["max_elements"],
                      kw["max_depth"], kw["quiet"], kw["no_color"], kw.get("check_numerics", False))
    inv.jacobian_mode = kw.get("mode", "auto")
    inv.sweep, inv.scheduler, inv.workers = kw.get("sweep"), kw.get("scheduler"), kw.get("workers", 1)
    inv.full = kw.get("full", False)
    inv.out = kw.get("out") or []
    if kw.get("keyword") is not None or kw.get("line") is not None or kw.get("last"):
        inv.selection = (kw.get("keyword"), kw.get("line"), kw.get("last", False))
    return inv


@app.command()
def run(file: FileArg, json_out: JsonOpt = False, sets: SetOpt = None, dtype: DtypeOpt = None,
        device: DeviceOpt = "cpu", max_steps: StepsOpt = 10_000_000, max_elements: ElementsOpt = 100_000_000,
        max_depth: DepthOpt = 200, quiet: QuietOpt = False, no_color: NoColorOpt = False,
        check_numerics: NumericsOpt = False, sweep: SweepOpt = None, scheduler: SchedulerOpt = None,
        workers: SweepWorkersOpt = 1, full: FullOpt = False, out: OutOpt = None,
        output_only: OutputOnlyOpt = False):
    """Run the program; print its output and named values."""
    from tapecli.cli import render as r
    inv = _invocation("run", locals())
    inv.output_only = output_only

    def show(result):
        if inv.json:
            print(r.dumps(r.run_doc(result)))
            return
        if output_only:
            return
        r.print_table(inv.filename or "<stdin>", *r.value_table(result.scope.vars, inv.full), inv.color,
                      drop=("kind", "shape", "dtype"), wrap=("value",))
    inv.run(show)


def _requests_command(command: str, kinds: tuple[str, ...], title: str):
    def command_fn(file: FileArg, json_out: JsonOpt = False, sets: SetOpt = None, dtype: DtypeOpt = None,
                   device: DeviceOpt = "cpu", of: OfOpt = None, wrt: WrtOpt = None,
                   unconnected: UnconnectedOpt = "none", max_steps: StepsOpt = 10_000_000,
                   max_elements: ElementsOpt = 100_000_000, max_depth: DepthOpt = 200, quiet: QuietOpt = False,
                   no_color: NoColorOpt = False, check_numerics: NumericsOpt = False, sweep: SweepOpt = None,
                   scheduler: SchedulerOpt = None, workers: SweepWorkersOpt = 1, full: FullOpt = False,
                   out: OutOpt = None, keyword: KeywordOpt = None, line: LineOpt = None, last: LastOpt = False):
        options = dict(locals())
        inv = _invocation(command, options)
        inv.run(_show_requests(inv, command, kinds, title))
    return command_fn


app.command("grad", help="Gradients: the file's t.gradient(...) calls, or --of/--wrt.")(
    _requests_command("grad", ("gradient",), "gradients"))


def _show_requests(inv, command: str, kinds: tuple[str, ...], title: str):
    from tapecli.api import requests_of
    from tapecli.cli import render as r

    def show(result):
        if inv.json:
            print(r.dumps(r.requests_doc(command, result, kinds)))
            return
        requests = requests_of(result, kinds)
        if not requests:
            sys.stderr.write(r.terminal_text(f"{inv.filename}: no {title} requests; use --of NAME [--wrt NAME]") + "\n")
            return
        r.print_requests(f"{title} of {inv.filename or '<stdin>'}", requests, inv.color, full=inv.full)
    return show


@app.command("jacobian")
def jacobian_command(file: FileArg, json_out: JsonOpt = False, sets: SetOpt = None, dtype: DtypeOpt = None,
                     device: DeviceOpt = "cpu", of: OfOpt = None, wrt: WrtOpt = None,
                     unconnected: UnconnectedOpt = "none", mode: ModeOpt = "auto",
                     max_steps: StepsOpt = 10_000_000, max_elements: ElementsOpt = 100_000_000,
                     max_depth: DepthOpt = 200, quiet: QuietOpt = False, no_color: NoColorOpt = False,
                     check_numerics: NumericsOpt = False, sweep: SweepOpt = None, scheduler: SchedulerOpt = None,
                     workers: SweepWorkersOpt = 1, full: FullOpt = False, out: OutOpt = None,
                     keyword: KeywordOpt = None, line: LineOpt = None, last: LastOpt = False):
    """Jacobians: the file's t.jacobian / t.batch_jacobian calls, or --of/--wrt."""
    inv = _invocation("jacobian", locals())
    inv.run(_show_requests(inv, "jacobian", ("jacobian", "batch_jacobian"), "jacobians"))


@app.command("hessian")
def hessian_command(file: FileArg, of: OfOpt = None, wrt: WrtOpt = None, json_out: JsonOpt = False,
                    sets: SetOpt = None, dtype: DtypeOpt = None, device: DeviceOpt = "cpu",
                    unconnected: UnconnectedOpt = "none", mode: ModeOpt = "auto",
                    max_steps: StepsOpt = 10_000_000, max_elements: ElementsOpt = 100_000_000,
                    max_depth: DepthOpt = 200, quiet: QuietOpt = False, no_color: NoColorOpt = False,
                    sweep: SweepOpt = None, scheduler: SchedulerOpt = None, workers: SweepWorkersOpt = 1,
                    full: FullOpt = False, out: OutOpt = None, keyword: KeywordOpt = None, line: LineOpt = None,
                    last: LastOpt = False):
    """Second derivatives of --of T: d2(T)/d(S)2 for each --wrt S (S.shape + S.shape), and with several, the
    whole block: d2(T)/d(S1)d(S2) for each ordered pair (S1.shape + S2.shape)."""
    inv = _invocation("hessian", locals())
    inv.run(_show_requests(inv, "hessian", ("hessian",), "hessians"), _hessians)


def _hessians(source: str, filename: str, options):
    """Run the program with the implicit persistent tape of --of/--wrt, then differentiate each
    gradient once more on that tape, w.r.t. every source."""
    from tapecli.api import run_source
    from tapecli.tools.sweep import hessians
    result = run_source(source, filename, options)
    result.implicit = hessians(result, options)
    return result


app.commands_in("tapecli.cli.tool_commands", "plot")


@app.command()
def watched(file: FileArg, json_out: JsonOpt = False, sets: SetOpt = None, dtype: DtypeOpt = None,
            device: DeviceOpt = "cpu", max_steps: StepsOpt = 10_000_000, max_elements: ElementsOpt = 100_000_000,
            max_depth: DepthOpt = 200, quiet: QuietOpt = False, no_color: NoColorOpt = False):
    """Each tape with the variables and tensors it watched, and why."""
    from tapecli.cli import render as r
    inv = _invocation("watched", locals())

    def show(result):
        doc = r.watched_doc(result)
        if inv.json:
            print(r.dumps(doc))
            return
        rows = [[t["name"], str(t["line"]), "yes" if t["persistent"] else "no", w["name"], w["kind"], w["how"]]
                for t in doc["tapes"] for w in (t["watched"] or [{"name": "-", "kind": "", "how": ""}])]
        rows += [[t["name"], str(t["line"]), "yes" if t["persistent"] else "no", n["name"], "variable",
                  f"NOT watched (line {n['line']}): {n['why']}"] for t in doc["tapes"] for n in t["not_watched"]]
        rows += [[t["name"], str(t["line"]), "yes" if t["persistent"] else "no", "-", "NumPy",
                  (f"line {o['line']}: " if o["line"] is not None else "")
                  + f"{o['call']} took values off the tape (no gradient flows through it)"]
                 for t in doc["tapes"] for o in t["off_the_tape"]]
        r.print_table(f"watched in {inv.filename or '<stdin>'}",
                      ["tape", "line", "persistent", "watched", "kind", "how"], rows, inv.color,
                      drop=("line", "persistent", "kind"), wrap=("how",))
    inv.run(show)


app.commands_in("tapecli.cli.tool_commands", "explain", "check", "diff", "lint", "bench")


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else plural(n, "byte")


@app.command("tape")
def tape_command(file: FileArg, json_out: JsonOpt = False, sets: SetOpt = None, dtype: DtypeOpt = None,
                 device: DeviceOpt = "cpu", max_steps: StepsOpt = 10_000_000, max_elements: ElementsOpt = 100_000_000,
                 max_depth: DepthOpt = 200, quiet: QuietOpt = False, no_color: NoColorOpt = False):
    """The records of each tape (op, line, shapes) and the bytes they keep alive for the backward pass."""
    from tapecli.cli import render as r
    from tapecli.tools.tapelist import list_tapes
    from tapecli.api import device_doc as api_device_doc
    inv = _invocation("tape", locals())

    def show(found):
        inv._side_output(found["result"])
        tapes = found["tapes"]
        if inv.json:
            print(r.dumps({"schema": r.SCHEMA, "command": "tape", "file": inv.filename, "ok": True, "tapes": tapes,
                           "warnings": list(found["result"].warnings),
                           "device": api_device_doc(found["result"].context)}))
            return
        if not tapes:
            print(r.terminal_text(f"{inv.filename or '<stdin>'}: no tapes"))
        for t in tapes:
            title = (f"tape {t['name']} (line {t['line']}{', persistent' if t['persistent'] else ''}), {t['when']}: "
                     f"{plural(len(t['records']), 'record')}, {_mb(t['saved_bytes'])} kept")
            rows = [[rec["op"], str(rec["line"] or ""), ", ".join(str(s) for s in rec["inputs"]), str(rec["output"]),
                     str(rec["saved_bytes"])] for rec in t["records"]]
            r.print_table(title, ["op", "line", "inputs", "output", "saved bytes"], rows, inv.color,
                          drop=("saved bytes", "line"), wrap=("inputs",))
    inv.run(show, lambda source, filename, options: list_tapes(source, filename, options))


app.commands_in("tapecli.cli.tool_commands", "warmup")


def main():
    """The console script. The command line as a process (Ctrl-C, stdout failures, usage errors, exit codes)
    is cli/process.py's; the collector's pace, cli/collector.py's (Invocation.run sets the run's)."""
    collector.start_up()
    try:
        run_process(app, sys.argv[1:])
    finally:
        collector.restore()
