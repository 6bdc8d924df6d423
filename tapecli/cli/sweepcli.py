"""The command line of --sweep and --scheduler: options -> tools/sweep.py, tools/cluster.py -> output."""
from __future__ import annotations

import contextlib
import os
import sys

from tapecli.cli import lazytyper as typer

from tapecli.cli.process import EXIT_INTERNAL, EXIT_OK, EXIT_PROGRAM, EXIT_USAGE
from tapecli.errors import plural


@contextlib.contextmanager
def progress_bar(total: int, what: str, show: bool):
    """A Rich progress bar on stderr while the work runs (a terminal only); yields advance(k)."""
    if not show:
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress
    bar = Progress(transient=True, console=Console(stderr=True))
    task = bar.add_task(what, total=total)
    bar.start()
    try:
        yield lambda k: bar.advance(task, k)
    finally:
        bar.stop()


@contextlib.contextmanager
def cluster_for(address: str | None):
    """The Dask cluster for --scheduler / TAPECLI_SCHEDULER (closed on the way out), or None."""
    if address is None:
        yield None
        return
    from tapecli.tools.cluster import Cluster
    cluster = Cluster(address)
    try:
        yield cluster
    finally:
        cluster.close()


def run_sweep_command(inv) -> None:
    """`run`/`grad`/`jacobian`/`hessian` with --sweep (or --scheduler): every point, stacked."""
    from tapecli.errors import TdfError, UsageError
    from tapecli.tools.cluster import check_workers, scheduler_address
    from tapecli.tools import sweep as s
    address = scheduler_address(inv.scheduler)
    try:
        from tapecli.api import read_source
        if not inv.sweep:
            raise UsageError(f"{'--scheduler' if inv.scheduler else '--workers'} needs --sweep on "
                             f"`{inv.command}` (or use `tapecli check`)")
        if inv.selection:
            raise UsageError("-k, --line and --last choose among one run's requests; with --sweep, select the "
                             "entries of the --json document")
        check_workers(inv.workers)
        options = inv.options()
        sweeps = s.load_sweeps(inv.sweep, options.limits)
        clash = sorted(set(sweeps) & set(options.overrides))
        if clash:
            raise UsageError(f"--sweep {clash[0]} and --set {clash[0]}: bind a declaration with one of them")
        if inv.out:
            from tapecli.tools import arrays
            out = arrays.parse_out(inv.out, inv.reads())      # (checked before any point runs)
        inv.source, inv.filename = read_source(inv.file)
        with cluster_for(address) as cluster, \
                progress_bar(s.points(sweeps), "points", not inv.json and sys.stderr.isatty()) as advance:
            doc = s.sweep_doc(inv.command, inv.source, inv.filename, options, sweeps, inv.workers, cluster, advance)
        if inv.out and not doc.get("errors"):
            arrays.write(out, arrays.sweep_arrays(inv.command, doc, sweeps))
        elif inv.out:       # errors at some points (exit 3): no file of stacked results with holes
            sys.stderr.write(f"tapecli {inv.command}: {', '.join(path for _, path in out)} not written: the program "
                             f"failed at {len(doc['errors'])} of {doc['sweep']['points']} points\n")
    except UsageError as e:
        inv._fail(EXIT_USAGE, "UsageError", str(e))
    except TdfError as e:
        inv._program_error(e)
    except Exception as e:  # a bug in tapecli
        if os.environ.get("TAPECLI_DEBUG"):
            raise
        inv._fail(EXIT_INTERNAL, "InternalError",
                  f"internal error: {type(e).__name__}: {e}. This is a bug in tapecli; please report it "
                  f"with the program (set TAPECLI_DEBUG=1 for the traceback).")
    if address is not None:
        doc["scheduler"] = address
    _show(inv, doc)
    errors = doc.get("errors", [])
    raise typer.Exit(EXIT_INTERNAL if any(e["kind"] == "InternalError" for e in errors)
                     else EXIT_PROGRAM if errors else EXIT_OK)


def _show(inv, doc: dict) -> None:
    from tapecli.cli import render as r
    if inv.command == "run" and not inv.json:
        for line in doc["output"]:
            print(r.program_output(line, sys.stdout))
    if not inv.quiet:
        points = doc["sweep"]["points"]
        inv.write_warnings(doc["warnings"], lambda w: f" (at {len(w['points'])} of {points} points)" if points > 1 else "")
    for e in doc.get("errors", [])[:20]:
        where = f"{inv.filename}:{e['line']}" if e["line"] else inv.filename
        sys.stderr.write(r.terminal_text(f"{where}: {e['kind']} at sweep point {e['point']}: {e['message']}") + "\n")
    if inv.json:
        print(r.dumps(doc))
        return
    n = doc["sweep"]["points"]
    title = f"{inv.command} of {inv.filename or '<stdin>'} at {plural(n, 'point')} ({', '.join(doc['sweep']['names'])})"
    if inv.command == "run":
        rows = [[name, str([n] + list(doc["types"][name].get("shape", []))), _ends(values)]
                for name, values in doc["values"].items()]
        r.print_table(title, ["name", "shape", "values"], rows, inv.color, wrap=("values",))
        return
    rows = [[e["name"] or "", e["target"], e["source"], e["dtype"] or "",
             str([n] + e["shape"]) if e["shape"] is not None else "", _ends(e["value"])]
            for e in doc[s_key(inv.command)]]
    r.print_table(title, ["name", "target", "source", "dtype", "shape", "values"], rows, inv.color,
                  drop=("dtype", "shape"), wrap=("values",))


def s_key(command: str) -> str:
    return {"grad": "gradients", "jacobian": "jacobians", "hessian": "hessians"}[command]


def _ends(values: list) -> str:
    from tapecli.cli.render import short_json
    if len(values) <= 4:
        return short_json(values)
    return f"{short_json(values[0])}, {short_json(values[1])}, ..., {short_json(values[-1])}"


def check_scaled(files, options, fd, workers, fail_fast, sweep_items, address, show_progress):
    """`check` with --sweep and/or --scheduler: the FileReports, in the files' order."""
    from tapecli.tools import checkscale
    from tapecli.tools.sweep import load_sweeps, points
    sweeps = load_sweeps(sweep_items, options.limits) if sweep_items else None
    total = len(files) if sweeps is None else len(files) * points(sweeps)
    with cluster_for(address) as cluster, progress_bar(total, "checking", show_progress) as advance:
        if sweeps is None:
            return checkscale.check_on_cluster(files, options, fd, cluster, fail_fast, advance)
        return checkscale.check_sweep(files, options, fd, sweeps, workers, cluster, fail_fast, advance)
