"""The parser decision, by measurement: Lark alone, or the hand-written parser with Lark in the tests.

The rule (the architecture issue): Lark's LALR parser with its contextual lexer and an inline transformer
building tapecli's AST becomes the only parser if it parses a 100-line program within start-up's budget and
a 10,000-line program in at most 3 s; otherwise fastparse.py stays the only parser for valid programs.

    python benchmarks/parser_choice.py [--runs 9] [--json out.json]

Programs: the examples (examples/*.tdf) that every parser measured here takes, whole files concatenated in
turn until the next would pass the size, then the next file's statements that fit (each file is a program,
and so is their concatenation; every variant must give fastparse's AST for both programs, checked first).

Each measurement is a fresh process (``--worker``) that imports what that parser needs, loads the parser
(``import lark`` and Lark's own cache, with the tests' oracle for the tree -> AST transformer:
tests/frontend/lark_oracle.py), parses, and reports its load and parse times; the whole process is timed from
outside. The commands run in turn, round after round, so that a change in the machine's load hits them alike.

Variants:
  fastparse              frontend/fastparse.py (tapecli's parser)
  lark-contextual-pass   import lark, Lark's cached LALR parser with the contextual lexer, tree -> AST pass
  lark-contextual-inline the same, the AST built inline (each rule's node transformed as it is reduced): the
                         candidate the issue names

(The decision's first measurement had two more variants, Lark's generated standalone parser, which tapecli then
used for syntax errors; it no longer does: docs/design.md.)

Start-up budget: ``tapecli grad tiny.tdf`` <= 1.25 x ``python -c "import numpy"``; it measured 1.07x, so a
parser's extra whole-process cost over fastparse on the 100-line program must fit in (1.25 - 1.07) x
import numpy (timed in the same rounds). The headroom tiny grad leaves in these rounds is printed too.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))     # the oracle: frontend/lark_oracle.py

STARTUP_FACTOR = 1.25
STARTUP_TODAY = 1.07        # tiny grad / import numpy at the last full measurement (docs/performance.md)
LARGE_BUDGET_S = 3.0
SMALL_LINES, LARGE_LINES = 100, 10_000
VARIANTS = ("fastparse", "lark-contextual-pass", "lark-contextual-inline")


# ------------------------------------------------------------------ the worker (a fresh process per run)

def load(variant: str):
    """A function text -> AST statements, loaded as the variant's start-up would load it."""
    if variant == "fastparse":
        from tapecli.frontend import fastparse
        return fastparse.parse
    from lark import Lark, Tree
    from frontend import lark_oracle
    from tapecli.cache import cache_dir
    from tapecli.frontend.grammar import grammar_text
    parser = Lark(grammar_text(), postlex=lark_oracle.TdfIndenter(), **{**lark_oracle.OPTIONS, "lexer": "contextual"},
                  cache=str(cache_dir("parser") / "tdf-contextual.lark.cache"))
    if variant.endswith("inline"):
        build_inline(parser, lark_oracle._ToAst(), Tree)
        parse = parser.parse
    else:
        def parse(text):
            return lark_oracle._ToAst().transform(parser.parse(text))
    lark_oracle.parse_body = parse      # an f-string's fields are parsed by the same parser
    return parse


def build_inline(parser, transformer, tree_class) -> None:
    """Make ``parser`` build the AST as it reduces: each rule's callback (which builds the rule's tree node, its
    positions propagated from all its tokens, the ones the tree drops included) hands the node at once to the
    transformer's method for it. Lark's own ``transformer=`` option refuses methods that take positions
    (``v_args(meta=True)``, which every AST node needs), and its position propagation reads positions from trees
    and tokens only, so each result travels to its parent with its node's positions (``__lark_meta__``)."""
    callbacks = parser.parser.parser.parser.callbacks
    call = transformer._call_userfunc

    def inline(build):
        def reduce(children):
            node = build(children)
            if type(node) is not tree_class or node.data.startswith("_"):     # a rule the parent inlines
                return node
            node.children = [c.value if type(c) in _RESULTS else c for c in node.children]
            return (_Bare if node.meta.empty else _Placed)(call(node), node.meta)
        return reduce
    for rule, build in list(callbacks.items()):
        callbacks[rule] = inline(build)
    parse = parser.parse

    def parse_inline(text):
        result = parse(text)
        return result.value if type(result) in _RESULTS else result
    parser.parse = parse_inline


class _Bare:
    """A rule's AST result (spanning no token)."""
    __slots__ = ("value", "meta")

    def __init__(self, value, meta):
        self.value, self.meta = value, meta


class _Placed(_Bare):
    """A rule's AST result with its node's positions, which Lark propagates to the parent."""
    __slots__ = ()

    def __lark_meta__(self):
        return self.meta


_RESULTS = (_Bare, _Placed)


def worker(variant: str, path: str) -> None:
    start = time.perf_counter()
    parse = load(variant)
    loaded = time.perf_counter()
    with open(path, encoding="utf-8") as f:
        text = f.read()
    begin = time.perf_counter()
    body = parse(text)
    end = time.perf_counter()
    assert isinstance(body, list)
    print(f"{loaded - start!r} {end - begin!r}")


# ------------------------------------------------------------------ the driver

def programs(folder, examples) -> dict[int, str]:
    """{lines: path} of the 100- and 10,000-line programs, from the examples every variant takes."""
    from tapecli.frontend import fastparse
    taken = []
    for path in examples:
        text = path.read_text(encoding="utf-8")
        text = text if text.endswith("\n") else text + "\n"
        unlike = [v for v in VARIANTS[1:] if not _parses_alike(v, text)]
        if unlike:
            print(f"left out: {path.name} (not fastparse's AST from {', '.join(unlike)})")
        else:
            taken.append(text)
    print(f"examples: {len(taken)} of {len(examples)} taken by every variant")
    out = {}
    for size in (SMALL_LINES, LARGE_LINES):
        parts, lines, i = [], 0, 0
        while lines < size:
            text = taken[i % len(taken)]
            i += 1
            count = text.count("\n")
            if lines + count > size:     # the statements of the next file that fit
                fits = [s for s in (1, *(node.line for node in fastparse.parse(text))) if s - 1 <= size - lines]
                text = "".join(text.splitlines(keepends=True)[:fits[-1] - 1])
                count = text.count("\n")
                if not count:
                    break
            parts.append(text)
            lines += count
        program = "".join(parts)
        for variant in VARIANTS[1:]:
            if not _parses_alike(variant, program):
                raise SystemExit(f"{variant} parses the {size}-line program unlike fastparse")
        path = folder / f"program_{size}.tdf"
        path.write_text(program, encoding="utf-8")
        out[program.count("\n")] = path
    return out


_LOADED: dict = {}


def _parses_alike(variant: str, text: str) -> bool:
    """Whether ``variant`` gives fastparse's AST for ``text`` (in this process)."""
    for name in ("fastparse", variant):
        if name not in _LOADED:
            _LOADED[name] = load(name)
    try:
        reference = _LOADED["fastparse"](text)
        return reference is not None and _LOADED[variant](text) == reference
    except Exception:       # a syntax error where fastparse took the text: unlike it
        return False


def measure(runs: int) -> dict:
    import tempfile

    here = Path(__file__).resolve().parent
    sys.path.insert(0, str(here))
    from run import tapecli_command

    with tempfile.TemporaryDirectory(prefix="parser_choice-") as folder:
        return _measure(runs, Path(folder), here, tapecli_command())


def _measure(runs, tmp, here, tapecli_cmd) -> dict:
    import statistics
    import subprocess
    os.environ["TAPECLI_CACHE_DIR"] = str(tmp / "cache")      # Lark's parser cached into it once, below
    env = {v: dict(os.environ) for v in VARIANTS}
    for variant in VARIANTS[1:]:
        _LOADED[variant] = load(variant)
    files = programs(tmp, sorted((here.parent / "examples").glob("*.tdf")))
    small, large = min(files), max(files)

    commands = {"import numpy": ([sys.executable, "-c", "import numpy"], None),
                "tapecli grad tiny.tdf": ([*tapecli_cmd, "grad", str(here / "tiny.tdf")], None)}
    for variant in VARIANTS:
        for lines in (small, large):
            commands[f"{variant} {lines}"] = ([sys.executable, __file__, "--worker", variant, str(files[lines])],
                                              env[variant])
    times = {name: [] for name in commands}
    inner = {name: [] for name in commands}
    for round_ in range(runs + 1):             # round 0 warms the file cache and the parsers' caches
        for name, (cmd, run_env) in commands.items():
            start = time.perf_counter()
            done = subprocess.run(cmd, env=run_env, capture_output=True, text=True)
            wall = time.perf_counter() - start
            if done.returncode:
                raise SystemExit(f"{name}: exit {done.returncode}\n{done.stderr[-2000:]}")
            if round_:
                times[name].append(wall)
                if run_env is not None:
                    inner[name].append([float(x) for x in done.stdout.split()])
        print(f"round {round_}/{runs} done", file=sys.stderr)

    def stats(values):
        return {"median": statistics.median(values), "min": min(values), "max": max(values)}
    result = {"runs": runs, "lines": {"small": small, "large": large}, "processes": {}, "variants": {}}
    for name in ("import numpy", "tapecli grad tiny.tdf"):
        result["processes"][name] = stats(times[name])
    headroom = [STARTUP_FACTOR * n - t for n, t in zip(times["import numpy"], times["tapecli grad tiny.tdf"])]
    result["headroom"] = stats(headroom)
    allowance = (STARTUP_FACTOR - STARTUP_TODAY) * result["processes"]["import numpy"]["median"]
    result["allowance_s"] = allowance
    for variant in VARIANTS:
        s, big = f"{variant} {small}", f"{variant} {large}"
        extra = [a - b for a, b in zip(times[s], times[f"fastparse {small}"])]
        result["variants"][variant] = {
            "small_process": stats(times[s]), "small_load": stats([x[0] for x in inner[s]]),
            "small_parse": stats([x[1] for x in inner[s]]), "large_parse": stats([x[1] for x in inner[big]]),
            "extra_over_fastparse": stats(extra),
            "meets_startup": statistics.median(extra) <= allowance,
            "meets_large": statistics.median([x[1] for x in inner[big]]) <= LARGE_BUDGET_S}
    return result


def report(result: dict) -> None:
    def ms(s):
        return f"{s['median'] * 1e3:.1f} ms ({s['min'] * 1e3:.1f}-{s['max'] * 1e3:.1f})"

    def sec(s):
        return f"{s['median']:.2f} s ({s['min']:.2f}-{s['max']:.2f})"
    small, large = result["lines"]["small"], result["lines"]["large"]
    print(f"\nmedians of {result['runs']} fresh processes each, (min-max)")
    for name, s in result["processes"].items():
        print(f"  {name}: {ms(s)}")
    print(f"  headroom in these rounds ({STARTUP_FACTOR} x import numpy - tiny grad, per round): {ms(result['headroom'])}")
    print(f"  a parser's start-up allowance ({STARTUP_FACTOR} - {STARTUP_TODAY}) x import numpy: "
          f"{result['allowance_s'] * 1e3:.1f} ms\n")
    print(f"| variant | {small} lines: whole process | load | parse | extra over fastparse "
          f"| {large} lines: parse | start-up | <= {LARGE_BUDGET_S:.0f} s |")
    print("|---|---|---|---|---|---|---|---|")
    for variant, v in result["variants"].items():
        print(f"| {variant} | {ms(v['small_process'])} | {ms(v['small_load'])} | {ms(v['small_parse'])} "
              f"| {ms(v['extra_over_fastparse'])} | {sec(v['large_parse'])} "
              f"| {'met' if v['meets_startup'] else 'not met'} | {'met' if v['meets_large'] else 'not met'} |")
    candidate = result["variants"]["lark-contextual-inline"]
    if candidate["meets_startup"] and candidate["meets_large"]:
        print("\ndecision: Lark (LALR, contextual lexer, inline AST) meets both budgets: it can be the only parser")
    else:
        print("\ndecision: Lark (LALR, contextual lexer, inline AST) misses "
              + " and ".join(w for w, ok in (("the start-up budget", candidate["meets_startup"]),
                                             (f"{LARGE_BUDGET_S:.0f} s for {large} lines", candidate["meets_large"]))
                             if not ok)
              + ": fastparse.py stays the only parser of valid programs, Lark the oracle in the tests")


def main(argv: list[str]) -> None:
    if argv[:1] == ["--worker"]:
        worker(argv[1], argv[2])
        return
    import argparse
    import json
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=9, help="fresh processes per measurement (at least 7)")
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args(argv)
    result = measure(max(args.runs, 7))
    report(result)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1:])
