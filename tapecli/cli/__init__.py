"""The command line: options -> library API -> renderer. ``main`` is the console script."""
from tapecli.cli import collector


def main():
    """The console script (and ``python -m tapecli``): ``app.main``, whose exit skips the interpreter's
    teardown when nothing needs it (``end_without_teardown``); Ctrl-C during its start-up ends it at once.
    The collector takes the start-up pace before the command line is imported: Python's own start-up leaves
    a middle-generation collection due, which its imports met (about 1 ms: every object made so far)."""
    collector.start_up()
    try:
        from tapecli.cli.process import end_without_teardown, interrupt_early
        interrupt_early()
        from tapecli.cli import app
    except BaseException:
        collector.restore()
        raise
    try:
        app.main()
    except SystemExit as e:
        end_without_teardown(e)
        raise


__all__ = ["main"]
