"""Mutation check: break the game on purpose, in a copy of the source, and make sure a test fails.

    python tools/mutate.py                  every break, after a clean run of the same tests
    python tools/mutate.py --list           the breaks and where each one lands
    python tools/mutate.py --only fragmentation-zero --full

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
from collections.abc import Callable, Iterator
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


def _only(found: list[tuple[Path, str, ast.AST]], what: str) -> tuple[Path, str, ast.AST]:
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
def line_score_table(root: Path) -> Edit:
    """The 4-line entry of the line-score table is worth 100 points less."""
    found: list[tuple[Path, str, ast.AST]] = []
    for path, text, tree in _sources(root, "engine"):
        for node in ast.walk(tree):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, ast.AnnAssign) else []
            if any(isinstance(t, ast.Name) and t.id == "LINE_POINTS" for t in targets) \
                    and isinstance(getattr(node, "value", None), ast.Dict):
                table = getattr(node, "value")
                for k, v in zip(table.keys, table.values):
                    if isinstance(k, ast.Constant) and k.value == 4:
                        found.append((path, text, v))
    path, text, value = _only(found, "entry 4 in a LINE_POINTS = {...} table under engine/")
    return _replace(path, text, value, f"({ast.unparse(value)}) - 100")


def split_skips_sealed_holes(root: Path) -> Edit:
    """A page frame is only ever the cell above a column's top: sealed holes are never filled.

    The target is the rule "lowest free visible row of a column": `lowest_frame(masks, col)` in
    the page-placement module when there is one, else `Board.lowest_empty(self, x)`."""
    frames = [f for f in _functions(root, "engine", "lowest_frame") if "lab" not in f[0].parts]
    if frames:
        path, text, fn = _only(frames, "def lowest_frame under engine/")
        assert isinstance(fn, ast.FunctionDef)
        args = [a.arg for a in fn.args.args]
        if len(args) != 2:
            raise TargetMissing(f"{path}:{fn.lineno}: expected lowest_frame(masks, col)")
        masks, col = args
        hidden = "HIDDEN"
    else:
        path, text, fn = _only(_functions(root, "engine", "lowest_empty"), "def lowest_empty under engine/")
        assert isinstance(fn, ast.FunctionDef)
        args = [a.arg for a in fn.args.args]
        if args[:1] != ["self"] or len(args) != 2:
            raise TargetMissing(f"{path}:{fn.lineno}: expected lowest_empty(self, x)")
        masks, col, hidden = "self.masks", args[1], "type(self).HIDDEN"
    return _replace_body(path, text, fn, [
        f"bit_ = 1 << {col}",
        f"top_ = next((y_ for y_, m_ in enumerate({masks}) if m_ & bit_), len({masks}))",
        f"return top_ - 1 if top_ - 1 >= {hidden} else -1",
    ])


def fragmentation_zero(root: Path) -> Edit:
    """The fragmentation gauge always reads 0."""
    found = [f for f in _functions(root, "engine", "fragmentation") if "lab" not in f[0].parts]
    path, text, fn = _only(found, "def fragmentation under engine/ (outside engine/lab)")
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


def oom_off_by_one(root: Path) -> Edit:
    """The ceiling rule is off by one: a piece resting on the top visible row is an OOM."""
    found: list[tuple[Path, str, ast.AST]] = []
    for path, text, tree in _sources(root, "engine"):
        if "lab" in path.parts:
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
                continue
            cond = node.test
            calls = [c for stmt in node.body for c in ast.walk(stmt) if isinstance(c, ast.Call)]
            if (len(cond.ops) == 1 and isinstance(cond.ops[0], ast.Lt)
                    and ast.unparse(cond.comparators[0]).endswith("HIDDEN")
                    and any("oom" in ast.unparse(c.func).lower() for c in calls)):
                found.append((path, text, cond))
    path, text, test = _only(found, "`if ... < HIDDEN:` leading to an OOM under engine/")
    assert isinstance(test, ast.Compare)
    return _replace(path, text, test, f"{ast.unparse(test.left)} <= {ast.unparse(test.comparators[0])}")


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
            builds_game = any(isinstance(c, ast.Call) and ast.unparse(c.func) == "Game"
                              for c in ast.walk(fn))
            loops = sorted((n for n in ast.walk(fn)
                            if isinstance(n, ast.For) and "steps" in ast.unparse(n.iter)),
                           key=lambda n: n.lineno)
            if builds_game and loops:
                found.append((path, text, loops[0].iter))
    path, text, it = _only(found, "a function in engine/*replay*.py that builds a Game and loops "
                                  "over the recorded steps")
    drop = "(lambda s_: s_[:len(s_) // 2] + s_[len(s_) // 2 + 1:])"
    return _replace(path, text, it, f"{drop}(list({ast.unparse(it)}))")


MUTATIONS = (
    Mutation("line-score-4", "the 4-line entry of the line-score table changed", line_score_table,
             ("tests/test_engine_rules.py",)),
    Mutation("split-skips-sealed-holes", "sealed holes not filled by a page split",
             split_skips_sealed_holes, ("tests/test_engine_rules.py",)),
    Mutation("fragmentation-zero", "fragmentation telemetry always 0", fragmentation_zero,
             ("tests/test_engine_rules.py",)),
    Mutation("lab-screen-fails", "the LAB screen's constructor raises", lab_screen_fails,
             ("tests/test_ui_scenes.py", "tests/test_lab_scene.py")),
    Mutation("oom-off-by-one", "the OOM ceiling rule off by one", oom_off_by_one,
             ("tests/test_engine_rules.py",)),
    Mutation("replay-drops-a-step", "a replay step dropped", replay_drops_a_step,
             ("tests/test_replay.py",)),
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
