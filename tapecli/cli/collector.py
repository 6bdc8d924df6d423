"""The garbage collector's pace for a command line's run: slow while the command line starts (its imports), then
Python's for the program's young objects with the start-up heap frozen, and as it was once the command is over (the
command line called in a process not its own)."""
import gc

# A young collection every this many allocations while the command line starts, not Python's 700: start-up
# allocates many objects that live for the whole process (modules, NumPy's), and collecting meanwhile costs a small
# run ~5 ms.
START_UP_THRESHOLD = 100_000
# Collections of the oldest generation while a program runs: one in this many of the middle one's (Python's
# default is 10). Each walks every object the run made that is still alive, a long recorded loop's whole tape
# again at every quarter of growth: a 100,000-step loop spent a third of its time there.
RARE_FULL_COLLECTIONS = 1000

_saved = None           # the thresholds before start_up changed them
_frozen = False


def start_up() -> None:
    """The start-up pace, until ``for_the_run`` (again where it is set already: the thresholds to restore stay the
    first ones)."""
    global _saved
    if _saved is None:
        _saved = gc.get_threshold()
    gc.set_threshold(START_UP_THRESHOLD, *_saved[1:])


def for_the_run() -> None:
    """The pace for the run, once the imports are done: young objects as usual, the oldest generation rarely. What
    is alive by then lives for the whole process (modules, NumPy's): it is frozen out of the collector's way (each
    full collection walked it too)."""
    global _frozen
    if _saved is not None:
        gc.set_threshold(_saved[0], _saved[1], max(_saved[2], RARE_FULL_COLLECTIONS))
        if not gc.get_freeze_count():        # (a caller that froze objects of its own keeps them so)
            gc.freeze()
            _frozen = True


def restore() -> None:
    """The collector as it was before ``start_up``."""
    global _saved, _frozen
    if _saved is not None:
        gc.set_threshold(*_saved)
        _saved = None
    if _frozen:
        gc.unfreeze()
        _frozen = False
