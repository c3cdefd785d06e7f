"""Mutation check: break the game on purpose, in a copy of the source, and make sure a test fails.

    python tools/mutate.py                  every break, after a clean run of the same tests
    python tools/mutate.py --list           the breaks and where each one lands
    python tools/mutate.py --only finish-keeps-a-block --full

Each break finds its target in the code by structure (a named function, class, table or
comparison, found through the syntax tree), not by line number, and stops the whole check with
exit status 1 when its target is no longer there or is no longer unique: a refactor that moves
the code must move the break with it, never leave it silently disarmed.

For each break the checkout is copied to a temporary directory, the break applied there, and the
suite run in that copy with the non-browser filter. By default the test files most likely to notice
run first and the whole filtered suite only when they pass; --full always runs the whole filtered
suite, so "caught by" names the first failing test in suite order. Exit status 0 when every break
is caught, 1 otherwise, 2 for bad arguments.
"""
from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUITE_FILTER = "not browser and not server and not build"
SKIP_DIRS = {".git", ".venv", "build", "node_modules", "__pycache__", ".hypothesis", ".pytest_cache",
             ".mypy_cache", "dist"}
IN_MUTANT = "VRAM_TETRIS_MUTANT"  # set in the mutated copy's environment: no mutation check in there


class TargetMissing(Exception):
    """A break's pattern no longer matches the code (or matches more than one place)."""


@dataclass(frozen=True)
class Edit:
    path: Path  # relative to the checkout
    line: int
    before: str
    after: str


@dataclass(frozen=True)
class Mutation:
    name: str
    what: str
    find: Callable[[Path], Edit]
    hints: tuple[str, ...]  # test files to run first


# ------------------------------------------------------------------ locating targets
def _sources(root: Path, package: str) -> Iterator[tuple[Path, str, ast.Module]]:
    for path in sorted((root / package).rglob("*.py")):
        if SKIP_DIRS & set(path.relative_to(root).parts):
            continue
        text = path.read_text(encoding="utf-8")
        yield path.relative_to(root), text, ast.parse(text, str(path))


def _only(found: Sequence[tuple[Path, str, ast.AST]], what: str) -> tuple[Path, str, ast.AST]:
    if len(found) != 1:
        where = ", ".join(f"{p}:{getattr(n, 'lineno', '?')}" for p, _, n in found) or "nowhere"
        raise TargetMissing(f"expected exactly one {what}, found {len(found)} ({where})")
    return found[0]


def _segment(text: str, node: ast.AST) -> tuple[int, int]:
    """Character offsets of `node` in `text`."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    lineno, col = getattr(node, "lineno"), getattr(node, "col_offset")
    end_lineno, end_col = getattr(node, "end_lineno"), getattr(node, "end_col_offset")

    def offset(row: int, col_bytes: int) -> int:
        line = lines[row - 1]
        return starts[row - 1] + len(line.encode("utf-8")[:col_bytes].decode("utf-8"))

    return offset(lineno, col), offset(end_lineno, end_col)


def _replace(path: Path, text: str, node: ast.AST, new: str) -> Edit:
    start, end = _segment(text, node)
    return Edit(path, getattr(node, "lineno"), text, text[:start] + new + text[end:])


def _functions(root: Path, package: str, name: str) -> list[tuple[Path, str, ast.AST]]:
    return [(p, t, n) for p, t, tree in _sources(root, package) for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name]


def _replace_body(path: Path, text: str, fn: ast.AST, body: list[str]) -> Edit:
    """Replace a function's body (its docstring kept) with `body` lines."""
    assert isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
    first = fn.body[0]
    keep_doc = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
        and isinstance(first.value.value, str)
    stmts = fn.body[1:] if keep_doc and len(fn.body) > 1 else fn.body
    lines = text.splitlines(keepends=True)
    indent = re.match(r"\s*", lines[stmts[0].lineno - 1]).group(0)  # type: ignore[union-attr]
    start = sum(len(line) for line in lines[:stmts[0].lineno - 1])
    end = sum(len(line) for line in lines[:getattr(stmts[-1], "end_lineno")])
    new = "".join(f"{indent}{line}\n" for line in body)
    return Edit(path, stmts[0].lineno, text, text[:start] + new + text[end:])


# ------------------------------------------------------------------ the breaks
def _engine_nodes(root: Path, pred: Callable[[ast.AST], bool],
                  files: str = "") -> list[tuple[Path, str, ast.AST]]:
    """Every node under engine/ (outside engine/lab; only files named `files` when given) for
    which `pred` holds."""
    return [(p, t, n) for p, t, tree in _sources(root, "engine")
            if "lab" not in p.parts and (not files or p.name == files)
            for n in ast.walk(tree) if pred(n)]


def _method(root: Path, cls: str, name: str) -> tuple[Path, str, ast.FunctionDef]:
    found = [(p, t, f) for p, t, c in _engine_nodes(root, lambda n: isinstance(n, ast.ClassDef)
                                                      and n.name == cls)
             for f in getattr(c, "body") if isinstance(f, ast.FunctionDef) and f.name == name]
    path, text, fn = _only(found, f"{cls}.{name} under engine/")
    assert isinstance(fn, ast.FunctionDef)
    return path, text, fn


def finish_keeps_a_block(root: Path) -> Edit:
    """A finishing request frees all of its blocks but the last.

    The target is the one `<...>.board.free(cells)` call of the serving engine's release of a
    request (a method of class Serving whose name says release or finish)."""
    found = [(p, t, c) for p, t, fn in _engine_nodes(
                 root, lambda n: isinstance(n, ast.FunctionDef)
                 and any(w in n.name for w in ("release", "finish")), "serving.py")
             for c in ast.walk(fn) if isinstance(c, ast.Call)
             and ast.unparse(c.func).endswith("board.free") and len(c.args) == 1]
    path, text, call = _only(found, "a board.free(cells) call in a release/finish method of "
                                    "engine/serving.py")
    assert isinstance(call, ast.Call)
    arg = call.args[0]
    return _replace(path, text, arg, f"list({ast.unparse(arg)})[:-1]")


def paged_counts_fragmentation(root: Path) -> Edit:
    """The paged allocator says free blocks can be out of every request's reach."""
    path, text, cls = _only(_engine_nodes(root, lambda n: isinstance(n, ast.ClassDef)
                                          and n.name == "Paged", "allocators.py"),
                            "class Paged in engine/allocators.py")
    found = [(path, text, a.value) for a in getattr(cls, "body") if isinstance(a, ast.Assign)
             and [ast.unparse(t) for t in a.targets] == ["external_fragmentation"]]
    path, text, value = _only(found, "`external_fragmentation = ...` in class Paged")
    return _replace(path, text, value, "True")


def contiguous_does_not_reserve(root: Path) -> Edit:
    """A whole placement holds its context's blocks only: the rest of its shape is not reserved.

    The target is the second element of the tuple Allocator.whole returns (the base class's
    answer, which the contiguous allocator uses)."""
    path, text, fn = _method(root, "Allocator", "whole")
    rets = [n for n in ast.walk(fn) if isinstance(n, ast.Return) and isinstance(n.value, ast.Tuple)
            and len(n.value.elts) == 2]
    if len(rets) != 1:
        raise TargetMissing(f"{path}:{fn.lineno}: expected one `return tokens, reserved` in Allocator.whole")
    value = rets[0].value
    assert isinstance(value, ast.Tuple)
    return _replace(path, text, value.elts[1], "[]")


def preempts_the_oldest(root: Path) -> Edit:
    """Preemption takes the oldest running request instead of the newest.

    The target is the one comparison of two admission orders (`a.order > b.order`) in the
    serving engine's choice of a victim (engine/preemption.py)."""
    found = _engine_nodes(root, lambda n: isinstance(n, ast.Compare) and len(n.ops) == 1
                          and isinstance(n.ops[0], (ast.Gt, ast.Lt))
                          and ast.unparse(n.left).endswith(".order")
                          and ast.unparse(n.comparators[0]).endswith(".order"), "preemption.py")
    path, text, cmp = _only(found, "a comparison `x.order > y.order` in engine/preemption.py")
    assert isinstance(cmp, ast.Compare)
    op = "<" if isinstance(cmp.ops[0], ast.Gt) else ">"
    return _replace(path, text, cmp, f"{ast.unparse(cmp.left)} {op} {ast.unparse(cmp.comparators[0])}")


def deadline_off_by_one(root: Path) -> Edit:
    """A request that waited exactly DEADLINE_MS is still in time."""
    found = _engine_nodes(root, lambda n: isinstance(n, ast.Compare) and len(n.ops) == 1
                          and isinstance(n.ops[0], ast.GtE)
                          and ast.unparse(n.comparators[0]).split(".")[-1] == "DEADLINE_MS",
                          "game.py")
    path, text, cmp = _only(found, "a comparison `... >= DEADLINE_MS` in engine/game.py")
    assert isinstance(cmp, ast.Compare)
    return _replace(path, text, cmp, f"{ast.unparse(cmp.left)} > {ast.unparse(cmp.comparators[0])}")


def split_skips_sealed_holes(root: Path) -> Edit:
    """A page frame is only ever the cell above a column's top: sealed holes are never filled.

    The target is the rule "lowest free visible row of a column": `lowest_frame(masks, col)` in
    the page-placement module."""
    frames = [f for f in _functions(root, "engine", "lowest_frame") if "lab" not in f[0].parts]
    path, text, fn = _only(frames, "def lowest_frame under engine/")
    assert isinstance(fn, ast.FunctionDef)
    args = [a.arg for a in fn.args.args]
    if len(args) != 2:
        raise TargetMissing(f"{path}:{fn.lineno}: expected lowest_frame(masks, col)")
    masks, col = args
    return _replace_body(path, text, fn, [
        f"bit_ = 1 << {col}",
        f"top_ = next((y_ for y_, m_ in enumerate({masks}) if m_ & bit_), len({masks}))",
        "return top_ - 1 if top_ - 1 >= HIDDEN else -1",
    ])


def fragmentation_zero(root: Path) -> Edit:
    """The fragmentation gauge always reads 0 (the module-level function the gauge, the report
    and the autoplay read)."""
    found = [(p, t, n) for p, t, tree in _sources(root, "engine") if "lab" not in p.parts
             for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "fragmentation"]
    path, text, fn = _only(found, "a module-level def fragmentation under engine/ (outside engine/lab)")
    return _replace_body(path, text, fn, ["return 0.0"])


def lab_screen_fails(root: Path) -> Edit:
    """The LAB screen's constructor raises."""
    found: list[tuple[Path, str, ast.AST]] = []
    for path, text, tree in _sources(root, "ui"):
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name == "LabScene":
                found += [(path, text, f) for f in node.body
                          if isinstance(f, ast.FunctionDef) and f.name == "__init__"]
    path, text, init = _only(found, "LabScene.__init__ under ui/")
    assert isinstance(init, ast.FunctionDef)
    first = init.body[0]
    lines = text.splitlines(keepends=True)
    indent = re.match(r"\s*", lines[first.lineno - 1]).group(0)  # type: ignore[union-attr]
    start = sum(len(line) for line in lines[:first.lineno - 1])
    new = f'{indent}raise RuntimeError("mutation: the LAB screen cannot open")\n'
    return Edit(path, first.lineno, text, text[:start] + new + text[start:])


def ceiling_off_by_one(root: Path) -> Edit:
    """The ceiling rule is off by one: a request resting on the top visible row is an OOM.

    The target is the `... < HIDDEN` test whose branch reports the "ceiling" cause."""
    found = _engine_nodes(root, lambda n: isinstance(n, ast.If) and any(
        isinstance(c, ast.Compare) and len(c.ops) == 1 and isinstance(c.ops[0], ast.Lt)
        and ast.unparse(c.comparators[0]).split(".")[-1] == "HIDDEN" for c in ast.walk(n.test))
        and any(isinstance(k, ast.Constant) and k.value == "ceiling"
                for stmt in n.body for k in ast.walk(stmt)))
    path, text, node = _only(found, "`if ... < HIDDEN ...:` reporting \"ceiling\" under engine/")
    assert isinstance(node, ast.If)
    (cmp,) = [c for c in ast.walk(node.test) if isinstance(c, ast.Compare)
              and ast.unparse(c.comparators[0]).split(".")[-1] == "HIDDEN"]
    return _replace(path, text, cmp, f"{ast.unparse(cmp.left)} <= {ast.unparse(cmp.comparators[0])}")


def replay_drops_a_step(root: Path) -> Edit:
    """Replaying skips the middle step (or run of repeated steps) of the recording.

    The target is the loop over the recorded steps in the replay module's function that builds
    a Game and drives it."""
    found: list[tuple[Path, str, ast.AST]] = []
    for path, text, tree in _sources(root, "engine"):
        if "replay" not in path.name:
            continue
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef):
                continue
            builds_game = any(isinstance(c, ast.Call) and ast.unparse(c.func) in ("Game", "self.new_game")
                              for c in ast.walk(fn))
            loops = sorted((n for n in ast.walk(fn)
                            if isinstance(n, ast.For) and "steps" in ast.unparse(n.iter)),
                           key=lambda n: n.lineno)
            if builds_game and loops:
                found.append((path, text, loops[0].iter))
    path, text, it = _only(found, "a function in engine/*replay*.py that builds a Game (or has its "
                                  "replay build it) and loops over the recorded steps")
    drop = "(lambda s_: s_[:len(s_) // 2] + s_[len(s_) // 2 + 1:])"
    return _replace(path, text, it, f"{drop}(list({ast.unparse(it)}))")


RULES = "tests/test_engine_rules.py"
MUTATIONS = (
    Mutation("finish-keeps-a-block", "a finished request keeps its last block", finish_keeps_a_block,
             (RULES, "tests/test_engine_properties.py")),
    Mutation("paged-counts-fragmentation", "paged mode counts external fragmentation",
             paged_counts_fragmentation, (RULES, "tests/test_engine_memory.py")),
    Mutation("contiguous-does-not-reserve", "contiguous requests reserve nothing past their context",
             contiguous_does_not_reserve, (RULES, "tests/test_engine_memory.py")),
    Mutation("preempts-the-oldest", "preemption takes the oldest running request", preempts_the_oldest,
             (RULES,)),
    Mutation("deadline-off-by-one", "the waiting deadline off by one", deadline_off_by_one, (RULES,)),
    Mutation("split-skips-sealed-holes", "sealed holes not filled by a page split",
             split_skips_sealed_holes, (RULES,)),
    Mutation("fragmentation-zero", "fragmentation telemetry always 0", fragmentation_zero,
             (RULES, "tests/test_engine_memory.py")),
    Mutation("ceiling-off-by-one", "the ceiling rule off by one", ceiling_off_by_one, (RULES,)),
    Mutation("replay-drops-a-step", "a replay step dropped", replay_drops_a_step,
             ("tests/test_replay.py",)),
    Mutation("lab-screen-fails", "the LAB screen's constructor raises", lab_screen_fails,
             ("tests/test_ui_scenes.py", "tests/test_lab_scene.py")),
)


# ------------------------------------------------------------------ running
def copy_checkout(dest: Path) -> None:
    def ignore(directory: str, names: list[str]) -> set[str]:
        return {n for n in names if n in SKIP_DIRS or n.endswith(".egg-info")}
    shutil.copytree(ROOT, dest, ignore=ignore, symlinks=True)


def pytest_cmd(args: list[str]) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-rf",
            "-m", "not mutation", "-k", SUITE_FILTER, *args]


def run_tests(copy: Path, args: list[str], timeout: float) -> tuple[int, str]:
    env = dict(os.environ, PYTHONPATH=str(copy), PYTHONDONTWRITEBYTECODE="1", **{IN_MUTANT: "1"})
    env.setdefault("SDL_VIDEODRIVER", "dummy")
    env.setdefault("SDL_AUDIODRIVER", "dummy")
    proc = subprocess.run(pytest_cmd(args), cwd=copy, env=env, capture_output=True, text=True,
                          timeout=timeout)
    return proc.returncode, proc.stdout + proc.stderr


def check_imports_from(copy: Path) -> None:
    """The copy's own packages, not the installed checkout's, must be the ones tested."""
    code = "import engine, ui; print(engine.__file__); print(ui.__file__)"
    env = dict(os.environ, PYTHONPATH=str(copy))
    out = subprocess.run([sys.executable, "-c", code], cwd=copy, env=env, capture_output=True,
                         text=True, timeout=60)
    files = out.stdout.split()
    if out.returncode or len(files) != 2 or not all(Path(f).is_relative_to(copy) for f in files):
        raise SystemExit(f"mutate: the copy's packages are not the ones imported: {out.stdout}{out.stderr}")


FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.MULTILINE)


def first_failure(output: str) -> str:
    m = FAILED.search(output)
    return m.group(1) if m else "(the run failed without naming a test; see its output)"


@dataclass
class Result:
    name: str
    what: str
    target: str
    caught_by: str | None
    seconds: float


def run_one(m: Mutation, full: bool, timeout: float) -> Result:
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"mutant-{m.name}-") as tmp:
        copy = Path(tmp) / "src"
        copy_checkout(copy)
        edit = m.find(copy)
        if edit.after == edit.before:
            raise TargetMissing(f"{m.name}: the break changes nothing")
        (copy / edit.path).write_text(edit.after, encoding="utf-8")
        check_imports_from(copy)
        caught: str | None = None
        runs = [["tests"]] if full else [[h for h in m.hints if (copy / h).exists()], ["tests"]]
        for args in runs:
            if not args:
                continue
            code, out = run_tests(copy, args, timeout)
            if code == 5:  # nothing collected
                continue
            if code != 0:
                caught = first_failure(out)
                break
        return Result(m.name, m.what, f"{edit.path}:{edit.line}", caught, time.monotonic() - start)


def baseline(timeout: float) -> None:
    with tempfile.TemporaryDirectory(prefix="mutant-baseline-") as tmp:
        copy = Path(tmp) / "src"
        copy_checkout(copy)
        check_imports_from(copy)
        code, out = run_tests(copy, ["tests"], timeout)
        if code != 0:
            raise SystemExit(f"mutate: the unbroken copy already fails, so no break can be judged:\n{out[-3000:]}")


def main(argv: list[str] | None = None) -> int:
    names = [m.name for m in MUTATIONS]
    from engine.cli_args import failure, parser, number

    p = parser("tools/mutate.py", "Break the game on purpose in a copy; check the tests notice.")
    p.add_argument("--only", action="append", choices=names, metavar="NAME",
                   help=f"run only this break (repeatable): {', '.join(names)}")
    p.add_argument("--list", action="store_true", help="show each break and its target, run nothing")
    p.add_argument("--full", action="store_true",
                   help="always run the whole filtered suite (slower; names the first failing test in suite order)")
    p.add_argument("--no-baseline", action="store_true",
                   help="skip the clean run that proves the suite passes before anything is broken")
    p.add_argument("--timeout", type=number(0.0, 24 * 3600.0, above=True), default=600.0,
                   help="seconds allowed per test run")
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    args = p.parse_args(argv)
    if os.environ.get(IN_MUTANT):
        return failure("tools/mutate.py", "already inside a mutated copy")
    chosen = [m for m in MUTATIONS if not args.only or m.name in args.only]

    try:
        if args.list:
            for m in chosen:
                edit = m.find(ROOT)
                print(f"{m.name:26} {edit.path}:{edit.line}  {m.what}")
            return 0
        for m in chosen:  # every target must be found before anything runs
            m.find(ROOT)
        if not args.no_baseline:
            baseline(args.timeout)
        results = []
        for m in chosen:
            r = run_one(m, args.full, args.timeout)
            results.append(r)
            verdict = f"caught by {r.caught_by}" if r.caught_by else "NOT CAUGHT: no test failed"
            print(f"{r.name:26} {r.target:28} {verdict}  ({r.seconds:.1f} s)", flush=True)
    except TargetMissing as exc:
        return failure("tools/mutate.py", f"a break lost its target: {exc}")
    if args.json:
        Path(args.json).write_text(json.dumps([r.__dict__ for r in results], indent=2) + "\n")
    missed = [r.name for r in results if r.caught_by is None]
    if missed:
        return failure("tools/mutate.py",
                       f"{len(missed)} of {len(results)} breaks went unnoticed: {', '.join(missed)}")
    print(f"mutate: all {len(results)} breaks caught")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    from engine.cli_args import run

    sys.exit(run(main, prog="tools/mutate.py"))
