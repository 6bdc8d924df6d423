"""The command line: options -> library API -> renderer. ``main`` is the console script."""
from tapecli.cli import app
from tapecli.cli.process import end_without_teardown


def main():
    """The console script (and ``python -m tapecli``): ``app.main``, whose exit skips the interpreter's
    teardown when nothing needs it (``end_without_teardown``)."""
    try:
        app.main()
    except SystemExit as e:
        end_without_teardown(e)
        raise


__all__ = ["main"]
