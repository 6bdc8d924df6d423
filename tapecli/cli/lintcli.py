"""`tapecli lint FILE|DIR ...`: tools/lint.py over many files, as text, JSON or GitHub annotations."""
from __future__ import annotations

import sys

from tapecli.cli.process import EXIT_EXPECT, EXIT_OK, EXIT_PROGRAM, EXIT_USAGE


def lint_paths(inv, paths: list[str], github: bool, select: str | None, ignore: str | None) -> int:
    """Lint every file named or found under the folders named; print the findings; the exit code."""
    from tapecli.api import read_source
    from tapecli.cli import render as r
    from tapecli.errors import TdfError, UsageError, plural
    from tapecli.tools.check import collect, github_escape
    from tapecli.tools.lint import lint_checked, read_settings
    try:
        settings, _ = read_settings()
        settings = settings.overridden(select, ignore)
        files = collect(paths, python=True)
    except UsageError as e:
        inv._fail(EXIT_USAGE, "UsageError", str(e))
    findings, errors, shown_files = [], [], []
    for path in files:
        source = None
        try:
            source, shown = read_source(path)
            shown_files.append(shown)
            findings += [{"file": shown, **f.to_json()} for f in lint_checked(source, shown, settings)]
        except UsageError as e:
            inv._fail(EXIT_USAGE, "UsageError", str(e))
        except TdfError as e:
            errors.append({"file": shown, "kind": e.kind, "message": e.message, "line": e.line,
                           "column": e.column, "text": r.format_error(e, shown, source)})
    if inv.json:
        doc = {"schema": r.SCHEMA, "command": "lint", "file": shown_files[0] if len(shown_files) == 1 else None}
        if len(shown_files) != 1:
            doc["files"] = shown_files
        doc["ok"] = not (findings or errors)
        doc["findings"] = findings
        if errors:
            doc["errors"] = [{k: v for k, v in e.items() if k != "text"} for e in errors]
            if len(shown_files) == 1:
                doc["error"] = doc["errors"][0]
        print(r.dumps(doc))
    else:
        from tapecli.cli.colour import error_text, word
        out, err = inv.paint(sys.stdout), inv.paint(sys.stderr)
        for f in findings:
            print(r.escape_controls(f"{f['file']}:{f['line']}:{f['column']}: ") + word('code', f['code'], out) + " "
                  + r.escape_controls(f['message']))
        for e in errors:
            sys.stderr.write(error_text(r.terminal_text(e["text"]), e["kind"], err) + "\n")
        if findings or not errors:
            where = f" in {len({f['file'] for f in findings})} of {len(files)} files" if len(files) > 1 else ""
            print(f"{plural(len(findings), 'finding')}{where}" if findings else "no findings")
    if github:
        out = sys.stderr if inv.json else sys.stdout
        for f in findings:
            print(f"::error file={github_escape(f['file'], True)},line={f['line']},col={f['column']},"
                  f"title={github_escape(f['code'], True)}::{github_escape(f['message'])}", file=out)
        for e in errors:
            print(f"::error file={github_escape(e['file'], True)},line={e['line'] or 1},"
                  f"title={github_escape(e['kind'], True)}::{github_escape(e['message'])}", file=out)
    return EXIT_PROGRAM if errors else EXIT_EXPECT if findings else EXIT_OK
