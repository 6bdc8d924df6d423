"""The command line: options -> library API -> renderer. ``main`` is the console script."""

# The collector's pace while the command line starts: a young collection every this many allocations, not
# Python's 700. Start-up allocates many objects that live for the whole process (modules, NumPy's); collecting
# meanwhile costs a small run ~5 ms. (app.main sets the run's own pace before the program runs.)
START_UP_THRESHOLD = 100_000


def main():
    """The console script (and ``python -m tapecli``): ``app.main``, whose exit skips the interpreter's
    teardown when nothing needs it (``end_without_teardown``); Ctrl-C during its start-up ends it at once.
    The collector takes the start-up pace before the command line is imported: Python's own start-up leaves
    a middle-generation collection due, which its imports met (about 1 ms: every object made so far)."""
    import gc
    threshold = gc.get_threshold()
    gc.set_threshold(START_UP_THRESHOLD, *threshold[1:])
    try:
        from tapecli.cli.process import end_without_teardown, interrupt_early
        interrupt_early()
        from tapecli.cli import app
    except BaseException:
        gc.set_threshold(*threshold)
        raise
    try:
        app.main(threshold)
    except SystemExit as e:
        end_without_teardown(e)
        raise


__all__ = ["main"]
