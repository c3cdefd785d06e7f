"""The web archive's copy of the source: docstrings and comments out, the program unchanged."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

from strip_source import StripError, main, strip  # noqa: E402
from tests.prockit import is_usage_error

SAMPLE = textwrap.dedent('''\
    """Module docstring that nothing reads."""
    from __future__ import annotations  # must stay the first statement

    from dataclasses import dataclass

    WIDTH = 10  # cells


    @dataclass(frozen=True)
    class Cell:
        """A board cell."""

        x: int
        y: int = 0  # row

        def label(self, width: int = 4) -> str:
            """Padded, quoted, nested f-strings."""
            name = "it's"
            return f"{self.x:>{width}}|{self.y!r}|{name}|{'a' + 'b'}|{ {'k': 1}['k'] }"


    def only_doc():
        """A body that is only a docstring."""


    class Empty:
        """Only a docstring, too."""


    async def tick(n):
        """Awaitable."""
        # comment only
        return [i * i for i in range(n) if i % 2]  # odd squares


    def text():
        return """not a docstring:
    kept as data"""


    def strings():
        x = 1
        "a bare string that is not first stays"
        return (b"\\x00\\xff", "tab\\t", r"raw\\d", 1e309, -0.0, 0x1F, ..., x)
''')


def load(source: str) -> dict:
    """Run source as a module (dataclasses look their module up by name)."""
    module = types.ModuleType("stripped_sample")
    sys.modules[module.__name__] = module
    try:
        exec(compile(source, "sample.py", "exec"), module.__dict__)
    finally:
        del sys.modules[module.__name__]
    return module.__dict__


def test_strip_drops_docstrings_and_comments_only() -> None:
    out = strip(SAMPLE)
    assert '"""' not in out.replace('"""not a docstring', "")
    assert "#" not in out
    assert "Module docstring" not in out and "A board cell" not in out
    assert "a bare string that is not first stays" in out
    assert out.splitlines()[0] == "from __future__ import annotations"
    assert len(out) < len(SAMPLE)


def test_functions_give_the_same_results_before_and_after() -> None:
    before, after = load(SAMPLE), load(strip(SAMPLE))
    for ns in (before, after):
        ns["cell"] = ns["Cell"](3, 7)
    assert after["cell"].label() == before["cell"].label() == "   3|7|it's|ab|1"
    assert after["cell"].label(1) == before["cell"].label(1)
    assert after["text"]() == before["text"]()
    assert after["strings"]() == before["strings"]()
    assert after["Cell"].__annotations__ == before["Cell"].__annotations__ == {"x": "int", "y": "int"}
    assert after["cell"] == after["Cell"](3, 7) and after["WIDTH"] == before["WIDTH"]
    import asyncio
    assert asyncio.run(after["tick"](8)) == asyncio.run(before["tick"](8)) == [1, 9, 25, 49]
    assert before["only_doc"].__doc__ and after["only_doc"].__doc__ is None
    assert before["Cell"].label.__doc__ and after["Cell"].label.__doc__ is None


def test_a_docstring_only_body_stays_valid() -> None:
    out = strip('def f():\n    """Only this."""\n\nclass C:\n    """And this."""\n')
    assert ast.dump(ast.parse(out)) == ast.dump(ast.parse("def f():\n    pass\n\nclass C:\n    pass\n"))
    ns = load(out)
    assert ns["f"]() is None and ns["C"]() is not None
    assert strip('"""Only a module docstring."""\n') == "pass\n"


def test_a_module_that_reads_its_docstring_keeps_it() -> None:
    source = '"""Tool: does things.\n\nMore."""\nimport argparse\nP = argparse.ArgumentParser(description=__doc__.splitlines()[0])\n'
    out = strip(source)
    assert load(out)["P"].description == "Tool: does things."
    source = 'def f():\n    """Help text."""\n\nHELP = f.__doc__  # read by name\n'
    assert load(strip(source))["HELP"] == "Help text."


def test_pep723_header_is_kept_first() -> None:
    source = '# /// script\n# dependencies = ["pygame-ce"]\n# ///\n"""Doc."""\nimport asyncio  # loop\n'
    assert strip(source) == '# /// script\n# dependencies = ["pygame-ce"]\n# ///\nimport asyncio\n'


def test_broken_source_is_refused() -> None:
    with pytest.raises(SyntaxError):
        strip("def f(:\n", "bad.py")


def test_a_printer_that_changes_the_program_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ast, "unparse", lambda tree: "x = 2")
    with pytest.raises(StripError, match="not the same program"):
        strip("x = 1\n", "m.py")


def test_every_game_module_strips_and_compiles() -> None:
    files = [ROOT / "main.py"] + sorted((ROOT / "engine").rglob("*.py")) + sorted((ROOT / "ui").rglob("*.py"))
    for path in files:
        out = strip(path.read_text(encoding="utf-8"), str(path))
        compile(out, str(path), "exec")
        assert "\n#" not in "\n" + out, path


def test_stripped_engine_plays_the_same_games(tmp_path: Path) -> None:
    """The bot's games and the LAB's run give the same figures from the stripped copy."""
    copy = tmp_path / "stripped"
    shutil.copytree(ROOT / "engine", copy / "engine", ignore=shutil.ignore_patterns("__pycache__"))
    for path in (copy / "engine").rglob("*.py"):
        path.write_text(strip(path.read_text(encoding="utf-8"), str(path)), encoding="utf-8")
    assert '"""' not in (copy / "engine" / "game.py").read_text(encoding="utf-8")
    commands = (["-m", "engine.autoplay", "--json", "--seeds", "2", "--max-minutes", "3"],
                ["-m", "engine.lab", "run", "--requests", "40", "--json"])
    for args in commands:
        runs = [subprocess.run([sys.executable, "-B", *args], cwd=cwd, capture_output=True, text=True, timeout=120)
                for cwd in (ROOT, copy)]
        assert runs[0].returncode == 0, runs[0].stderr
        assert runs[1].returncode == 0, runs[1].stderr
        assert runs[1].stdout == runs[0].stdout and len(runs[0].stdout) > 100


def test_cli_prints_sizes_and_refuses_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.py"
    good.write_text(SAMPLE, encoding="utf-8")
    assert main([str(good)]) == 0
    assert capsys.readouterr().out.splitlines()[-1].split()[-1] == "total"
    assert good.read_text(encoding="utf-8") == SAMPLE  # reports only, never rewrites
    bad = tmp_path / "bad.py"
    bad.write_text("def f(:\n", encoding="utf-8")
    for argv in ([str(bad)], [str(tmp_path / "missing.py")]):
        assert main(argv) == 1  # a file that cannot be read or stripped: a runtime failure
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and err.startswith("strip_source.py: error:")
    for argv in ([], ["--bogus", str(good)]):
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 2
        err = capsys.readouterr().err
        assert is_usage_error(err), err


@pytest.mark.timeout(600)
def test_stripped_sources_compile_and_run_in_cpython_312_for_webassembly(tmp_path: Path) -> None:
    """The browser runs CPython 3.12, the build strips with the build's Python: every stripped game
    module compiles there, and the stripped engine plays the same games there as natively."""
    import json

    import wasm_python

    from tests.test_wasm_core import skip_reason

    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    copy = tmp_path / "stripped"
    files = {"main.py": ROOT / "main.py"}
    files.update({p.relative_to(ROOT).as_posix(): p for d in ("engine", "ui") for p in sorted((ROOT / d).rglob("*.py"))
                  if "__pycache__" not in p.parts})
    sources = {}
    for name, path in files.items():
        sources[name] = strip(path.read_text(encoding="utf-8"), name)
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        (copy / name).write_text(sources[name], encoding="utf-8")
    args = ["--json", "--seeds", "2", "--max-minutes", "3"]
    native = subprocess.run([sys.executable, "-B", "-m", "engine.autoplay", *args], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert native.returncode == 0, native.stderr
    with wasm_python.wasm_python(root=copy) as wasm:
        code = ("import json, sys\n"
                f"sources = json.loads({json.dumps(sources)!r})\n"
                "for name, text in sources.items():\n"
                "    compile(text, name, 'exec')\n"
                "json.dumps([list(sys.version_info[:2]), len(sources)])")
        version, compiled = json.loads(wasm.run(code))
        assert version == [3, 12] and compiled == len(sources) > 50
        assert wasm.run_module("engine.autoplay", args) == (0, native.stdout, "")
