"""The command line: options -> library API -> renderer. Exit codes are docs/spec/CLI.md's."""
# (No `from __future__ import annotations`: the commands' annotations are objects when defined, which the fast
# command line reads without compiling their text, 0.2 ms of a small run.)
import os
import sys
from typing import Annotated, Callable, Optional

from tapecli.version import __version__
from tapecli.cli import collector
from tapecli.cli import lazytyper as typer  # Typer's API; the real Typer is imported only when needed
from tapecli.cli.process import EXIT_EXPECT, EXIT_INTERNAL, EXIT_OK, EXIT_PROGRAM, EXIT_USAGE, run_process
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
            from tapecli.cli.watchdog import watching
            from tapecli.runtime.limits import data_bounded
            with watching(options.limits.max_seconds, self._write_program_error, self.filename, self.source), \
                    data_bounded(options.limits.max_memory):
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
        from tapecli.documents import requests_of
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
        from tapecli.interpreter.core import ErrorLine
        for line in lines:
            stream = sys.stdout if self.command == "run" and type(line) is not ErrorLine else sys.stderr
            stream.write(program_output(line, stream) + "\n")
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
    from tapecli.cli import render as r

    def show(result):
        if inv.json:
            print(r.dumps(r.requests_doc(command, result, kinds)))
            return
        requests = r.requests_of(result, kinds)
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


@app.command("plot")
def plot_command(file: FileArg,
                 y: Annotated[Optional[list[str]], typer.Option("--y", help="A value to draw (repeatable): a tensor or "
                                                                            "a gradient entry's name.")] = None,
                 x: Annotated[Optional[str], typer.Option("--x", help="The 1-D value on the horizontal axis "
                                                                      "(default: the index).")] = None,
                 z: Annotated[Optional[str], typer.Option("--z", help="A 2-D value drawn as contours over --x and "
                                                                      "--y, its coordinates.")] = None,
                 arrows: Annotated[Optional[str], typer.Option("--arrows", metavar="U,V", help=(
                     "With --z: the arrows' components (default with --of Z --wrt X,Y: d(Z)/d(X),d(Z)/d(Y)).")
                 )] = None,
                 output: Annotated[Optional[str], typer.Option("-o", "--output", help="Write a .png, .svg or .pdf "
                                                               "file; without it, draw in the terminal.")] = None,
                 title: Annotated[Optional[str], typer.Option("--title", help="The plot's title.")] = None,
                 xlabel: Annotated[Optional[str], typer.Option("--xlabel", help="The x axis' label.")] = None,
                 ylabel: Annotated[Optional[str], typer.Option("--ylabel", help="The y axis' label.")] = None,
                 dpi: Annotated[int, typer.Option("--dpi", help="Dots per inch of a file.")] = 100,
                 size: Annotated[Optional[str], typer.Option("--size", metavar="WxH", help=(
                     "A file's size in inches [default: 7x4.5].")
                 )] = None,
                 logy: Annotated[bool, typer.Option("--logy", help="A logarithmic y axis.")] = False,
                 json_out: JsonOpt = False, sets: SetOpt = None, dtype: DtypeOpt = None, device: DeviceOpt = "cpu",
                 of: OfOpt = None, wrt: WrtOpt = None, unconnected: UnconnectedOpt = "none", sweep: SweepOpt = None,
                 max_steps: StepsOpt = 10_000_000, max_elements: ElementsOpt = 100_000_000, max_depth: DepthOpt = 200,
                 quiet: QuietOpt = False, no_color: NoColorOpt = False, check_numerics: NumericsOpt = False):
    """Draw values the program binds: each --y against --x (a 2-D --y alone as a heat map; --z over --x and --y
    as contours with arrows); needs the plot extra."""
    from tapecli.cli import render as r
    inv = _invocation("plot", locals())
    inv.sweep = None            # (plot draws the points of a sweep itself)

    def compute(source, filename, options):
        from tapecli.cli import plot
        style = plot.Style(title, xlabel, ylabel, logy, dpi, plot.parse_size(size))
        plot.check_request(y, output, style, inv.reads(sweep))
        names = plot.arrow_names(arrows, z, of, wrt, x, y)
        result, values = plot.run_values(source, filename, options, sweep, [x, z, *y, *(names or ())])
        return plot.draw(result, values, filename, x, y, output, style, inv.color, z, names)

    def show(drawing):
        inv._side_output(drawing.result)
        if inv.json:
            print(r.dumps({"schema": r.SCHEMA, "command": "plot", "file": inv.filename, "ok": True, **drawing.to_json(),
                           "warnings": list(drawing.result.warnings)}))
        elif drawing.text is not None:
            print(drawing.text)
        elif not quiet:
            sys.stderr.write(r.terminal_text(f"wrote {output}") + "\n")
    inv.run(show, compute)


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


@app.command()
def explain(file: FileArg, of: Annotated[str, typer.Option("--of", help="The target's name.")],
            wrt: Annotated[str, typer.Option("--wrt", help="The source's name.")],
            json_out: JsonOpt = False, sets: SetOpt = None, dtype: DtypeOpt = None, max_steps: StepsOpt = 10_000_000,
            max_elements: ElementsOpt = 100_000_000, max_depth: DepthOpt = 200, quiet: QuietOpt = False,
            no_color: NoColorOpt = False, keyword: KeywordOpt = None, line: LineOpt = None, last: LastOpt = False):
    """Why the gradient of T w.r.t. S is None, or the chain of statements that connects them."""
    from tapecli.cli import render as r
    from tapecli.api import explain as explain_pair
    inv = _invocation("explain", locals())

    def show(found):
        if json_out:
            print(r.dumps({"schema": r.SCHEMA, "command": "explain", "file": inv.filename, "ok": True,
                           "explanations": found, **({"selected": inv.selected_json} if inv.selection else {})}))
            return
        lines = [] if found else [f"no gradient of {of} w.r.t. {wrt} was asked for"]
        for e in found:
            where = f"tape {e['tape']}" + (f", line {e['line']}" if e["line"] else "")
            if e["connected"]:
                lines.append(f"d({of})/d({wrt}) on {where}: connected")
                lines += [f"  line {step['line']}: {step['text']}    [{', '.join(step['ops'])}]" for step in e["chain"]]
            else:
                lines.append(f"d({of})/d({wrt}) on {where}: None, because {e['why']}")
        for line in lines:
            print(r.escape_controls(line))
    inv.run(show, lambda source, filename, options: explain_pair(source, filename, options))


@app.command()
def check(paths: Annotated[list[str], typer.Argument(help="Files or folders (searched for *.tdf).",
                                                     show_default=False, metavar="PATH...")],
          json_out: JsonOpt = False,
          junit: Annotated[Optional[str], typer.Option("--junit", help="Also write JUnit XML here.")] = None,
          github: Annotated[bool, typer.Option("--github", help="Print GitHub workflow annotations (and append a "
                                                                "job summary to $GITHUB_STEP_SUMMARY when set).")] = False,
          allow_empty: Annotated[bool, typer.Option("--allow-empty", help="Exit 0, not 5, when there is nothing to "
                                                                          "check (a pre-commit hook on changed files).")
                                 ] = False,
          fail_fast: Annotated[bool, typer.Option("--fail-fast", help="Stop after the first failing file.")] = False,
          workers: Annotated[int, typer.Option("--workers", help="Check files in N processes.")] = 1,
          fd: Annotated[bool, typer.Option("--fd", help="Also check every gradient request w.r.t. declarations "
                                                        "by finite differences in float64.")] = False,
          sets: SetOpt = None, dtype: DtypeOpt = None, device: DeviceOpt = "cpu", max_steps: StepsOpt = 10_000_000,
          max_elements: ElementsOpt = 100_000_000, max_depth: DepthOpt = 200, quiet: QuietOpt = False,
          no_color: NoColorOpt = False, sweep: SweepOpt = None, scheduler: SchedulerOpt = None):
    """Run every expect (and expect_error, gradcheck) in the files; exit 1 if any failed."""
    from tapecli.tools import check as c
    from tapecli.cli import render as r
    from tapecli.errors import UsageError
    inv = Invocation("check", "-", json_out, sets, dtype, device, None, None, "none", max_steps, max_elements,
                     max_depth, quiet, no_color)
    try:
        options = inv.options()
        files = c.collect(paths)
        from tapecli.tools.cluster import check_workers, scheduler_address
        check_workers(workers)
        if junit:
            from tapecli.tools.outfile import read_paths, target
            reads = read_paths(files, [*(sets or ()), *(sweep or ())])
            target(junit, "--junit", reads)     # a device, a FIFO, a missing folder, a file checked: said before any
                                                # file is checked
        address = scheduler_address(scheduler)
        if sweep or address:
            from tapecli.cli.sweepcli import check_scaled
            reports = check_scaled(files, options, fd, workers, fail_fast, sweep, address,
                                   show_progress=not json_out and sys.stderr.isatty())
    except UsageError as e:
        inv._fail(EXIT_USAGE, "UsageError", str(e))
    if not (sweep or address):
        reports = _check_files(files, options, fd, workers, fail_fast,
                               show_progress=not json_out and sys.stderr.isatty())
    passed, failed, errors = c.totals(reports)
    if junit:
        try:
            c.write_atomically(junit, c.junit_xml(reports), reads=reads)
        except UsageError as e:
            inv._fail(EXIT_USAGE, "UsageError", str(e))
    if json_out:
        results = [res for rep in reports for res in rep.results]
        results += [{"file": rep.file, "line": rep.error["line"], "ok": False, "error": rep.error}
                    for rep in reports if rep.error]
        skipped = [{**s, "ok": None} for rep in reports for s in rep.skipped]
        doc = {"schema": r.SCHEMA, "command": "check", "file": None, "files": [rep.file for rep in reports],
               "ok": not (failed or errors or (not passed and not allow_empty)),
               "passed": passed, "failed": failed, "errors": errors, "skipped": len(skipped),
               "results": [_json_result(res) for res in results], "skips": skipped,
               "lint": [finding for rep in reports for finding in rep.lint]}
        if address:
            doc["scheduler"] = address
        print(r.dumps(doc))
    else:
        _check_report(reports, passed, failed, errors, inv)
    if github:
        for line in c.github_annotations(reports):
            print(line, file=sys.stderr if json_out else sys.stdout)
        _job_summary(c.markdown_summary(reports))
    internal = any(rep.error and rep.error["kind"] == c.INTERNAL_ERROR for rep in reports)
    if not (passed or failed or errors or allow_empty):   # pytest's convention: a wrong path in CI must not pass
        sys.stderr.write(r.terminal_text(f"tapecli check: no expectations found in {', '.join(paths)}"
                                         + (f" ({plural(len(files), 'file')}, none ran an expect)" if files else ""))
                         + "\n")
        raise typer.Exit(EXIT_NO_EXPECTATIONS)
    raise typer.Exit(EXIT_INTERNAL if internal else EXIT_PROGRAM if errors else EXIT_EXPECT if failed else EXIT_OK)


EXIT_NO_EXPECTATIONS = 5     # `check` found nothing to check (pytest's "no tests collected")


def _check_report(reports, passed: int, failed: int, errors: int, inv: Invocation) -> None:
    """check's report for people: a line per expectation (PASS, FAIL; SKIP) and lint finding, each file's
    error on stderr, then the totals."""
    from tapecli.cli import render as r
    from tapecli.cli.colour import error_text, word
    from tapecli.tools import check as c
    out, err = inv.paint(sys.stdout), inv.paint(sys.stderr)

    def line(where, role, label, text):
        shown, at = r.terminal_text(f"{where}: {label} {text}"), len(r.escape_controls(where)) + 2
        if shown[at:at + len(label) + 1] == label + " ":
            shown = shown[:at] + word(role, label, out) + shown[at + len(label):]
        print(shown)
    for rep in reports:
        for res in rep.results:
            if res["ok"] and inv.quiet:
                continue
            line(f"{rep.file}:{res['line']}", *(("pass", "PASS") if res["ok"] else ("fail", "FAIL")), c.describe(res))
        for finding in [] if inv.quiet else rep.lint:
            line(f"{rep.file}:{finding['line']}", "code", f"lint {finding['code']}", finding["message"])
        if rep.error:
            sys.stderr.write(error_text(r.terminal_text(rep.error["text"]), rep.error["kind"], err) + "\n")
        for s in rep.skipped:
            line(f"{rep.file}:{s['line']}", "skip", "SKIP", f"{s['expr']}: {s['reason']}")
    skipped = sum(len(rep.skipped) for rep in reports)
    counts = [(passed, "pass", f"{passed} passed"), (failed, "fail", f"{failed} failed")]
    counts += [(skipped, "skip", f"{skipped} skipped")] if skipped else []
    counts += [(errors, "fail", plural(errors, "error"))] if errors else []
    print(", ".join(word(role, text, out if n else None) for n, role, text in counts))


def _job_summary(markdown: str) -> None:
    """Append to the GitHub job summary, where there is one (GitHub Actions sets $GITHUB_STEP_SUMMARY)."""
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if path:
        try:
            with open(path, "a", encoding="utf-8") as f:
                f.write(markdown)
        except OSError as e:
            from tapecli.cli.render import terminal_text
            sys.stderr.write(terminal_text(f"tapecli check: cannot write the job summary to {path}: {e.strerror}") + "\n")


def _json_result(res: dict) -> dict:
    from tapecli.cli.render import to_json
    return {k: to_json(v) if k in ("actual", "expected") else v for k, v in res.items()}


def _check_files(files, options, fd, workers, fail_fast, show_progress):
    from tapecli.tools import check as c
    from tapecli.cli.sweepcli import progress_bar
    with progress_bar(len(files), "checking", show_progress) as advance:      # on stderr
        return c.check_files(files, options, fd, workers, fail_fast, advance)


@app.command()
def diff(a: Annotated[str, typer.Argument(help="A run, grad, jacobian or hessian --json document (the golden file).")],
         b: Annotated[str, typer.Argument(help="The document to compare with it.")],
         rtol: Annotated[float, typer.Option("--rtol", help="Relative tolerance.")] = 1e-5,
         atol: Annotated[float, typer.Option("--atol", help="Absolute tolerance.")] = 1e-6,
         json_out: JsonOpt = False, no_color: NoColorOpt = False):
    """Compare two `grad --json` (`jacobian`, `hessian`) documents entry by entry, or two `run --json` documents
    name by name (value and type); exit 1 on a difference."""
    from tapecli.cli import render as r
    from tapecli.tools.diff import compare_documents, load_document, mismatch_text
    from tapecli.errors import UsageError
    try:
        differences, compared = compare_documents(load_document(a), load_document(b), rtol, atol)
    except UsageError as e:
        sys.stderr.write(r.terminal_text(f"tapecli diff: {e}") + "\n")
        raise typer.Exit(EXIT_USAGE)
    if json_out:
        print(r.dumps({"schema": r.SCHEMA, "command": "diff", "file": None, "files": [a, b], "ok": not differences,
                       "compared": compared,
                       "differences": differences, "rtol": rtol, "atol": atol}))
    elif differences:
        r.print_table(f"{len(differences)} of {plural(compared, 'entry', 'entries')} "
                      f"{'differs' if len(differences) == 1 else 'differ'} (rtol {rtol:g}, atol {atol:g})",
                      ["entry", "what", a, b, "mismatch"],
                      [[d["entry"], d["what"], r.short_json(d["a"]), r.short_json(d["b"]), mismatch_text(d)]
                       for d in differences], False if no_color else None, wrap=(a, b, "mismatch"))
    else:
        print(f"{plural(compared, 'entry', 'entries')} {'agrees' if compared == 1 else 'agree'} "
              f"(rtol {rtol:g}, atol {atol:g})")
    raise typer.Exit(EXIT_EXPECT if differences else EXIT_OK)


@app.command()
def lint(paths: Annotated[list[str], typer.Argument(help="Files or folders (searched for *.tdf and TensorFlow *.py); - reads "
                                                         "standard input.", show_default=False, metavar="PATH...")],
         json_out: JsonOpt = False,
         github: Annotated[bool, typer.Option("--github", help="Print GitHub workflow annotations.")] = False,
         select: Annotated[Optional[str], typer.Option("--select", metavar="CODES", help=(
             "Only these codes (comma-separated; a prefix such as TDF00 selects several)."))] = None,
         ignore: Annotated[Optional[str], typer.Option("--ignore", metavar="CODES", help=(
             "Not these codes (comma-separated prefixes)."))] = None,
         no_color: NoColorOpt = False):
    """Static checks, without running the programs; exit 1 if there are findings. `# noqa: TDF001` on a line
    silences a finding; select and ignore in pyproject.toml's tool.tapecli.lint table choose the codes."""
    from tapecli.cli.lintcli import lint_paths
    inv = Invocation("lint", "-", json_out, None, None, "cpu", None, None, "none", 1, 1, 1, False, no_color)
    raise typer.Exit(lint_paths(inv, paths, github, select, ignore))


RepeatOpt = Annotated[int, typer.Option("--repeat", help="Timed runs.")]
WarmupOpt = Annotated[int, typer.Option("--warmup", help="Untimed runs before them.")]


@app.command()
def bench(file: FileArg, repeat: RepeatOpt = 10, warmup: WarmupOpt = 1, json_out: JsonOpt = False,
          sets: SetOpt = None, dtype: DtypeOpt = None, device: DeviceOpt = "cpu", max_steps: StepsOpt = 10_000_000,
          max_elements: ElementsOpt = 100_000_000, max_depth: DepthOpt = 200, quiet: QuietOpt = False,
          no_color: NoColorOpt = False):
    """Time the whole program (forward and every gradient/jacobian request), parsed once, run many times."""
    from tapecli.cli import render as r
    from tapecli.cli.sweepcli import progress_bar
    from tapecli.tools.bench import bench_source, runs
    inv = _invocation("bench", locals())

    def show(b):
        if not quiet:
            inv.write_warnings(b.warnings)
        if inv.json:
            print(r.dumps({"schema": r.SCHEMA, "command": "bench", "ok": True, **b.to_json()}))
            return
        print(r.terminal_text(f"{inv.filename or '<stdin>'}: {plural(b.repeat, 'run')} after {b.warmup} untimed"))
        print(f"  median {b.median_s:.6f} s   min {b.min_s:.6f} s   max {b.max_s:.6f} s")
        if b.peak_bytes is not None:
            rss = f"; process peak RSS {_mb(b.peak_rss_bytes)}" if b.peak_rss_bytes else ""
            print(f"  peak memory of a run {_mb(b.peak_bytes)} (tracemalloc){rss}")
        if (passes := b.backward_passes)["backward_passes"] or passes["loop_replayed"]:
            print("  backward passes in a run {backward_passes}, {backward_replayed} of them as plans; "
                  "loop iterations as plans {loop_replayed}".format(**passes))
    def timed(source, filename, options):
        with progress_bar(runs(repeat, warmup), "runs", not json_out and sys.stderr.isatty()) as advance:  # stderr
            return bench_source(source, filename, options, repeat, warmup, progress=advance)
    inv.run(show, timed)


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


@app.command()
def warmup(json_out: JsonOpt = False,
           dtype: Annotated[Optional[str], typer.Option("--dtype", help="Only this dtype (float32 or float64); "
                                                                        "default both.")] = None,
           kernel: Annotated[Optional[list[str]], typer.Option("--kernel", help="Only this kernel (repeatable); "
                                                                               "default all.")] = None):
    """Compile the numba kernels (float32 and float64) into the cache."""
    import time
    from tapecli.cli import render as r
    from tapecli import ops
    ops.load_deferred()         # (the whole op table fills the set of numba kernels)
    from tapecli.kernels import NUMBA_KERNELS
    from tapecli.tools.warmup import DTYPES, compile_kernels
    unknown = sorted(set(kernel or ()) - NUMBA_KERNELS)
    if (dtype is not None and dtype not in DTYPES) or unknown:
        sys.stderr.write(f"tapecli warmup: --kernel {unknown[0]}: no such numba kernel\n" if unknown else
                         f"tapecli warmup: --dtype must be float32 or float64, got {dtype}\n")
        raise typer.Exit(EXIT_USAGE)
    from tapecli.cli.sweepcli import progress_bar
    start = time.perf_counter()
    dtypes = (dtype,) if dtype else DTYPES
    with progress_bar(len(dtypes) * len(kernel or NUMBA_KERNELS), "compiling",
                      not json_out and sys.stderr.isatty()) as advance:       # on stderr
        entries = compile_kernels(dtypes, names=kernel, progress=advance and (lambda entry: advance(1)))
    total = time.perf_counter() - start
    errors = [e["error"] for e in entries if "error" in e]
    if json_out:
        print(r.dumps({"schema": r.SCHEMA, "command": "warmup", "file": None, "ok": not errors,
                       "kernels": [e for e in entries if "error" not in e], "errors": errors, "seconds": total}))
    else:
        for name in dtypes:
            done = [e for e in entries if e.get("dtype") == name]
            if done:
                print(f"{name}: {plural(len(done), 'kernel')}, "
                      f"{plural(sum(e['calls'] for e in done), 'signature')}, "
                      f"{sum(e['seconds'] for e in done):.2f} s: {' '.join(e['kernel'] for e in done)}")
        for e in errors:
            sys.stderr.write(f"tapecli warmup: {e}\n")
        print(f"total {total:.2f} s")
    raise typer.Exit(EXIT_INTERNAL if errors else EXIT_OK)


def main():
    """The console script. The command line as a process (Ctrl-C, stdout failures, usage errors, exit codes)
    is cli/process.py's; the collector's pace, cli/collector.py's (Invocation.run sets the run's)."""
    collector.start_up()
    try:
        run_process(app, sys.argv[1:])
    finally:
        collector.restore()
