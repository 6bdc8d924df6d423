"""The command line: options -> library API -> renderer. ``main`` is the console script."""
from tapecli.cli import collector


def main(cached_modules: bool = True):
    """The console script (and ``python -m tapecli``, without ``cached_modules``): ``app.main``, whose exit skips
    the interpreter's teardown when nothing needs it (``end_without_teardown``); Ctrl-C during its start-up ends it
    at once. The collector takes the start-up pace before the command line is imported: Python's own start-up
    leaves a middle-generation collection due, which its imports met (about 1 ms: every object made so far).
    The modules come from the code cache (code_cache.py) from here on; ``python -m`` puts the current folder on
    sys.path, which would make a cache file per folder, so it imports as Python does."""
    collector.start_up()
    modules = None
    if cached_modules:
        from tapecli.cli import code_cache
        modules = code_cache.install()
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
        if modules is not None:
            modules.store()
        end_without_teardown(e)
        raise


__all__ = ["main"]
