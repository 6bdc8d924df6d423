"""The command line: options -> library API -> renderer. ``main`` is the console script."""
from tapecli.cli.process import end_without_teardown, interrupt_early


def main():
    """The console script (and ``python -m tapecli``): ``app.main``, whose exit skips the interpreter's
    teardown when nothing needs it (``end_without_teardown``); Ctrl-C during its start-up ends it at once."""
    interrupt_early()
    from tapecli.cli import app
    try:
        app.main()
    except SystemExit as e:
        end_without_teardown(e)
        raise


__all__ = ["main"]
