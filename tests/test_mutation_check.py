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
                          cwd=ROOT, capture_output=True, text=True, timeout=1800)
    print(proc.stdout)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for m in mutate.MUTATIONS:
        line = next(line for line in proc.stdout.splitlines() if line.startswith(m.name + " "))
        # Caught where it should be: by a test of the rule it breaks, not by any failing test.
        assert any(f"caught by {hint}::" in line for hint in m.hints), line


def test_every_break_finds_exactly_one_target_and_changes_it():
    for m in mutate.MUTATIONS:
        edit = m.find(ROOT)
        assert edit.after != edit.before
        assert compile(edit.after, str(edit.path), "exec")  # the broken copy still imports


def test_the_breaks_are_of_the_current_rules():
    names = {m.name for m in mutate.MUTATIONS}
    assert {"finish-keeps-a-block", "paged-counts-fragmentation", "contiguous-does-not-reserve",
            "preempts-the-oldest", "deadline-off-by-one", "replay-drops-a-step"} <= names
    assert "line-score-4" not in names  # rows no longer clear


def test_a_break_whose_target_moved_fails_loudly(tmp_path):
    engine = tmp_path / "engine"
    engine.mkdir()
    game = (ROOT / "engine" / "game.py").read_text()
    (engine / "game.py").write_text(game.replace("DEADLINE_MS", "WAIT_LIMIT_MS"))
    with pytest.raises(mutate.TargetMissing, match="DEADLINE_MS"):
        mutate.deadline_off_by_one(tmp_path)
    (engine / "game.py").write_text(game + "\n\ndef again(t):\n    return t >= R.DEADLINE_MS\n")
    with pytest.raises(mutate.TargetMissing, match="found 2"):
        mutate.deadline_off_by_one(tmp_path)


def test_bad_arguments_exit_2():
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "mutate.py"), "--only", "nothing"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
