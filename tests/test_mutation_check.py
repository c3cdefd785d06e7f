"""The mutation check (tools/mutate.py): every deliberate break is caught by some test, and a break
whose target moved stops the check instead of passing quietly."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import mutate  # noqa: E402

pytestmark = pytest.mark.mutation


@pytest.mark.skipif(bool(os.environ.get(mutate.IN_MUTANT)), reason="already inside a mutated copy")
def test_every_break_is_caught_by_a_test():
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "mutate.py"), "--no-baseline"],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    print(proc.stdout)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for m in mutate.MUTATIONS:
        line = next(line for line in proc.stdout.splitlines() if line.startswith(m.name + " "))
        assert "caught by tests/" in line, line


def test_every_break_finds_exactly_one_target_and_changes_it():
    for m in mutate.MUTATIONS:
        edit = m.find(ROOT)
        assert edit.after != edit.before
        assert compile(edit.after, str(edit.path), "exec")  # the broken copy still imports


def test_a_break_whose_target_moved_fails_loudly(tmp_path):
    engine = tmp_path / "engine"
    engine.mkdir()
    rules = (ROOT / "engine" / "rules.py").read_text()
    (engine / "rules.py").write_text(rules.replace("LINE_POINTS", "POINTS_PER_CLEAR"))
    with pytest.raises(mutate.TargetMissing, match="LINE_POINTS"):
        mutate.line_score_table(tmp_path)
    (engine / "rules.py").write_text(rules + "\nLINE_POINTS = {4: 1}\n")  # two tables: ambiguous
    with pytest.raises(mutate.TargetMissing, match="found 2"):
        mutate.line_score_table(tmp_path)


def test_bad_arguments_exit_2():
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "mutate.py"), "--only", "nothing"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
