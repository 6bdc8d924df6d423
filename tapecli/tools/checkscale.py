"""`tapecli check` on a Dask cluster (--scheduler) and with --sweep: the same FileReports, in the same
order, as checking the files one after another in this process."""
from __future__ import annotations

from tapecli.api import Options, read_source
from tapecli.errors import TdfError, UsageError
from tapecli.tools.check import FileReport, check_file, lint_findings


def check_chunk(files: list[tuple[str, str | None]], options: Options, fd: bool) -> list[FileReport]:
    """Run on a worker: the reports of a chunk of (path, text) files; the text was read here, so the
    workers need not see the same file system."""
    return [check_file(path, options, fd, source) for path, source in files]


def _read(path: str) -> str | None:
    try:
        return read_source(path)[0]
    except UsageError:
        return None             # check_file reports it on the worker, as in one process


def check_on_cluster(files: list[str], options: Options, fd: bool, cluster, fail_fast: bool,
                     progress=None) -> list[FileReport]:
    """Files in chunks on the cluster; a chunk that never came back is an error for each of its files."""
    from tapecli.tools.cluster import Lost, chunk_size
    size = chunk_size(len(files), cluster.workers, 25)
    spans = [files[i:i + size] for i in range(0, len(files), size)]
    reports: list[FileReport] = []

    def done(index, result):
        chunk = spans[index]
        if isinstance(result, Lost):
            kind = "WorkerLost" if result.lost else "InternalError"
            result = [FileReport(f, error={"kind": kind, "message": result.message, "line": None,
                                           "column": None, "text": f"{f}: {result.message}"}) for f in chunk]
        for rep in result:
            reports.append(rep)
            if progress is not None:
                progress(1)
            if fail_fast and (rep.failed or rep.error):
                return False
        return True
    if "-" in files:
        raise UsageError("check --scheduler reads files, not standard input (-)")
    cluster.map(check_chunk, [([(f, _read(f)) for f in chunk], options, fd) for chunk in spans], done)
    return reports


def check_sweep(files: list[str], options: Options, fd: bool, sweeps: dict, workers: int, cluster,
                fail_fast: bool, progress=None) -> list[FileReport]:
    """Each file's expectations at every point of the sweep (see sweep.check_report)."""
    from tapecli.documents import format_error
    from tapecli.tools.sweep import check_report, run_sweep
    reports = []
    for path in files:
        report = FileReport(path)
        source = None
        try:
            source, _ = read_source(path)
            report.lint = lint_findings(source, path)
            outcomes, _ = run_sweep("check", source, path, options, sweeps, workers, cluster, fd, progress)
            check_report(path, outcomes, report)
        except TdfError as e:
            report.error = {"kind": e.kind, "message": e.message, "line": e.line, "column": e.column,
                            "text": format_error(e, path, source, terminal=False)}
        except UsageError as e:
            report.error = {"kind": "UsageError", "message": str(e), "line": None, "column": None,
                            "text": f"{path}: {e}"}
        reports.append(report)
        if fail_fast and (report.failed or report.error):
            break
    return reports
