"""Parts of the game fetched after the first frame: the memory LAB and the Korean pack."""
from __future__ import annotations

import ast
import asyncio
import io
import sys
import types
from pathlib import Path

import pygame
import pytest

from tests.uikit import key, make_app, pump
from ui import packs

pytestmark = pytest.mark.usefixtures("clean_event_queue")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))


def walk_skipping_main(tree: ast.AST):
    """Every node, except what runs only as a script (`if __name__ == "__main__":`)."""
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, ast.If) and "__main__" in ast.unparse(child.test):
            continue
        yield child
        yield from walk_skipping_main(child)


def imported_modules(path: Path) -> set[str]:
    """Absolute names of the engine and ui modules a file imports (relative imports resolved)."""
    rel = path.relative_to(ROOT).with_suffix("")
    package = rel.parent.as_posix().replace("/", ".") if rel.name != "__init__" else \
        rel.parent.as_posix().replace("/", ".")
    found: set[str] = set()
    for node in walk_skipping_main(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            found.add(base)
            found |= {f"{base}.{a.name}" for a in node.names}
    return {m for m in found if m.startswith(("engine", "ui"))}


def module_file(name: str) -> str | None:
    for candidate in (name.replace(".", "/") + ".py", name.replace(".", "/") + "/__init__.py"):
        if (ROOT / candidate).is_file():
            return candidate
    return None  # a name imported from a module, not a module


def test_the_lab_pack_holds_everything_the_lab_imports_but_the_first_frame_lacks():
    import build_web
    shipped_later = set(packs.PACKS["lab"])
    for rel in packs.PACKS["lab"]:
        for name in imported_modules(ROOT / rel):
            f = module_file(name)
            if f is None or f in shipped_later:
                continue
            assert f not in build_web.DESKTOP_ONLY, f"{rel} imports the desktop tool {f}"
            assert not f.startswith("engine/lab/"), f"{rel} imports {f}, which is not in the LAB pack"


def test_nothing_the_first_frame_runs_imports_the_lab():
    """Only the app's open_lab (inside a function) reaches for the LAB."""
    import build_web
    later = {rel for files in packs.PACKS.values() for rel in files}
    for path in sorted([ROOT / "main.py", *(ROOT / "ui").rglob("*.py"), *(ROOT / "engine").rglob("*.py")]):
        rel = path.relative_to(ROOT).as_posix()
        if rel in later or rel in build_web.DESKTOP_ONLY or "__pycache__" in rel:
            continue
        top = ast.parse(path.read_text(encoding="utf-8"))
        for node in top.body:  # module level only: lazy imports inside functions are fine
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                for name in names:
                    f = module_file(name)
                    assert f not in later, f"{rel} imports {f} before the LAB is fetched"


def test_fetch_downloads_what_is_missing_checks_it_and_never_twice(tmp_path, monkeypatch):
    asked: list[str] = []
    served = {packs.archive_url(name): packs.pack_bytes(name) for name in packs.PACKS}

    class Opened:
        def __init__(self, url, mode):
            asked.append(url)
            self.data = served.get(url, b"<html>404 not found</html>" * 60)

        async def __aenter__(self):
            return io.BytesIO(self.data)

        async def __aexit__(self, *exc):
            return False

    monkeypatch.setitem(sys.modules, "platform", types.SimpleNamespace(fopen=Opened))
    monkeypatch.setattr(sys, "platform", "emscripten")
    assert packs.missing("lab", tmp_path) == list(packs.PACKS["lab"])
    assert asyncio.run(packs.fetch("lab", tmp_path)) is None
    assert asked == ["later/lab.tar.gz"] and packs.missing("lab", tmp_path) == []
    assert (tmp_path / "ui/lab_scene.py").read_bytes() == (ROOT / "ui/lab_scene.py").read_bytes()
    asked.clear()
    assert asyncio.run(packs.fetch("lab", tmp_path)) is None and asked == []  # nothing fetched twice
    served["later/ko.tar.gz"] = b"<html>404</html>"  # an error page in place of the pack
    assert "not a pack" in asyncio.run(packs.fetch("ko", tmp_path))
    assert packs.missing("ko", tmp_path) == list(packs.PACKS["ko"])


def test_a_pack_is_written_only_whole_and_only_with_its_own_files(tmp_path):
    import tarfile

    def tar_of(entries: dict[str, bytes]) -> bytes:
        raw = io.BytesIO()
        with tarfile.open(fileobj=raw, mode="w:gz") as tar:
            for name, content in entries.items():
                info = tarfile.TarInfo(name)
                info.size = len(content)
                tar.addfile(info, io.BytesIO(content))
        return raw.getvalue()

    good = {rel: (ROOT / rel).read_bytes() for rel in packs.PACKS["ko"]}
    assert "unexpected member" in packs.unpack(tar_of({**good, "../evil.py": b"x = 1"}), "ko", tmp_path)
    assert "incomplete" in packs.unpack(tar_of({"ui/i18n/ko.py": good["ui/i18n/ko.py"]}), "ko", tmp_path)
    bad_font = {**good, "ui/fonts/VRAMTetrisHangul-Bold.ttf": b"<html>" * 400}
    assert "TrueType" in packs.unpack(tar_of(bad_font), "ko", tmp_path)
    assert not any(tmp_path.rglob("*.*"))  # nothing written by a bad pack
    assert packs.unpack(tar_of(good), "ko", tmp_path) is None and packs.missing("ko", tmp_path) == []


def test_packs_are_the_same_bytes_every_build():
    assert packs.pack_bytes("ko") == packs.pack_bytes("ko")


def test_problem_with_spots_error_pages():
    assert packs.problem_with(b"<html>404</html>", "ui/x.py") is not None
    assert packs.problem_with(b"<html>" * 400, "ui/fonts/x.ttf") == "not a TrueType file"
    assert packs.problem_with(b"\x00\x01\x00\x00" + b"\0" * 2000, "ui/fonts/x.ttf") is None
    assert packs.problem_with(b"X = 1\n", "ui/x.py") is None


def test_on_the_desktop_a_missing_pack_is_reported_not_fetched(tmp_path):
    assert "missing" in asyncio.run(packs.fetch("ko", tmp_path))


def test_the_lab_opens_once_the_browser_has_fetched_it(tmp_path, monkeypatch):
    """The LAB is not in the web archive: the first L fetches it, and it opens when it arrives."""
    import builtins

    from ui.lab_scene import LabScene
    from ui.title_scene import TitleScene

    app = make_app(tmp_path)
    title = TitleScene(app, seed=1)
    app.reset(title)
    real_import = builtins.__import__
    fetched = {"done": False}

    def no_lab(name, globals=None, locals=None, fromlist=(), level=0):
        if name == "ui.lab_scene" and not fetched["done"]:
            raise ModuleNotFoundError("No module named 'ui.lab_scene'", name="ui.lab_scene")
        return real_import(name, globals, locals, fromlist, level)

    monkeypatch.setattr(builtins, "__import__", no_lab)
    monkeypatch.setattr(sys, "platform", "emscripten")
    monkeypatch.setattr(packs, "missing", lambda name, root=None: [] if fetched["done"] else ["ui/lab_scene.py"])
    key(app, pygame.K_l)
    assert app.top is title and app.wanted_packs == ["lab"]
    assert app.tr.msg(title.notice) == "loading the memory lab ..."
    fetched["done"] = True
    app.pack_arrived("lab", None)
    assert isinstance(app.top, LabScene) and app.wanted_packs == []
    app.pop()
    assert app.top is title and title.notice == ""


def test_a_lab_that_cannot_be_fetched_says_why(tmp_path, monkeypatch):
    from ui.title_scene import TitleScene

    app = make_app(tmp_path)
    title = TitleScene(app, seed=1)
    app.reset(title)
    monkeypatch.setattr(sys, "platform", "emscripten")
    monkeypatch.setitem(sys.modules, "ui.lab_scene", None)  # import fails: not fetched yet
    monkeypatch.setattr(packs, "missing", lambda name, root=None: ["ui/lab_scene.py"])
    title.open_lab()
    assert app.wanted_packs == ["lab"]
    app.pack_arrived("lab", "later/ui/lab_scene.py: offline")
    assert app.top is title and "offline" in app.tr.msg(title.notice)


def test_a_replay_link_in_the_browser_fetches_the_replay_screen_then_plays_it(tmp_path, monkeypatch):
    from engine.replay import Recorder
    from ui.title_scene import TitleScene

    screens = sys.modules.get("ui.replay_scene") or __import__("ui.replay_scene", fromlist=["ReplayScene"])
    rec = Recorder(seed=2, mode="paged")
    for _ in range(30):
        rec.update(100.0, ["HARD_DROP"])
    replay = rec.finish()
    app = make_app(tmp_path)
    monkeypatch.setattr(sys, "platform", "emscripten")
    monkeypatch.setitem(sys.modules, "ui.replay_scene", None)  # not fetched yet
    monkeypatch.setattr(packs, "missing", lambda name, root=None: ["ui/replay_scene.py"])
    app.watch(replay)
    assert isinstance(app.top, TitleScene) and app.wanted_packs == ["replay"]
    assert app.tr.msg(app.top.notice) == "loading the replay ..."
    monkeypatch.setitem(sys.modules, "ui.replay_scene", screens)
    app.pack_arrived("replay", None)
    assert isinstance(app.top, screens.ReplayScene) and app.wanted_packs == []
    # One that cannot come: the title says why.
    monkeypatch.setitem(sys.modules, "ui.replay_scene", None)
    app.watch(replay)
    app.pack_arrived("replay", "later/replay.tar.gz: offline")
    assert isinstance(app.top, TitleScene) and "offline" in app.tr.msg(app.top.notice)
