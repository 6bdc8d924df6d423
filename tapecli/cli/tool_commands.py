"""The commands a small run never takes: explain, plot, check, diff, lint, bench and warmup, declared as app.py
declares its own (lazytyper: Typer's API), in their places in the command line (app.py: ``app.commands_in``). This
module is imported when one of them is run, or with every command where Typer builds the whole command line (--help):
a small run need not load their code (docs/performance.md, "Start-up")."""
import os
import sys
from typing import Optional

from tapecli.cli import lazytyper as typer
from tapecli.cli.lazytyper import Annotated
from tapecli.cli.app import (app, DepthOpt, DeviceOpt, DtypeOpt, ElementsOpt, FileArg, Invocation, JsonOpt, KeywordOpt,
                             LastOpt, LineOpt, _invocation, _mb, NoColorOpt, NumericsOpt, OfOpt, QuietOpt, SchedulerOpt,
                             SetOpt, StepsOpt, SweepOpt, UnconnectedOpt, WrtOpt)
from tapecli.cli.process import EXIT_EXPECT, EXIT_INTERNAL, EXIT_OK, EXIT_PROGRAM, EXIT_USAGE
from tapecli.errors import plural


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
