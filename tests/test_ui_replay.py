"""Watching runs in the game: the replay screen, the report's share code, COPY and WATCH."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pygame
import pytest

from engine import Input, replay_json, sharecode
from engine.replay import Claim
from tests.uikit import canvas, centre, click, key, make_app, pump
from ui import share, theme
from ui.headless import force_oom
from ui.overlays import ResultScene
from ui.storage import Settings
from ui.play_scene import END_DELAY_MS, PlayScene
from ui.replay_scene import ReplayScene
from ui.title_scene import TitleScene

ROOT = Path(__file__).resolve().parents[1]
ENV = {"SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy", "PATH": "/usr/bin:/bin",
       "PYGAME_HIDE_SUPPORT_PROMPT": "1"}
pytestmark = pytest.mark.usefixtures("clean_event_queue")


def finished_run(app, mode="paged", seed=5, switch=False) -> PlayScene:
    """A short played run that ends in OOM, with its report on screen."""
    play = PlayScene(app, mode=mode, seed=seed)
    app.reset(play)
    pump(app, 30)
    if switch:
        play.session.step(theme.STEP_MS, [Input.HARD_DROP])  # the run has started
        play.set_mode("contiguous" if mode == "paged" else "paged")
    pump(app, 10)
    force_oom(play)
    pump(app, int(END_DELAY_MS / theme.STEP_MS) + 2)
    assert isinstance(app.top, ResultScene)
    return play


def run_main(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "main.py"), *args], cwd=ROOT, env=ENV,
                          capture_output=True, text=True, timeout=120)


def test_a_replay_screenshot_is_deterministic_and_the_same_from_file_or_code(tmp_path):
    record = tmp_path / "run.json"
    made = run_main("--headless", "--frames", "900", "--scene", "play", "--autoplay", "--seed", "6",
                    "--record", str(record))
    assert made.returncode == 0, made.stderr
    code = sharecode.encode(replay_json.load(str(record)))
    shots = []
    for name, source in (("a", str(record)), ("b", str(record)), ("c", code)):
        out = tmp_path / f"{name}.png"
        done = run_main("--headless", "--frames", "600", "--replay", source, "--screenshot", str(out))
        assert done.returncode == 0, done.stderr
        assert "ReplayScene" in done.stdout
        shots.append(pygame.image.tobytes(pygame.image.load(str(out)), "RGB"))
    assert shots[0] == shots[1] == shots[2]
    later = tmp_path / "later.png"
    assert run_main("--headless", "--frames", "800", "--replay", str(record), "--screenshot", str(later)).returncode == 0
    assert pygame.image.tobytes(pygame.image.load(str(later)), "RGB") != shots[0]  # the run moves on


def test_a_replay_that_cannot_be_watched_is_one_line_and_exit_1(tmp_path):
    for source in ("vt1garbage", "", str(tmp_path / "missing.json")):
        done = run_main("--headless", "--frames", "5", "--replay", source, "--screenshot", str(tmp_path / "x.png"))
        assert done.returncode == 1 and "Traceback" not in done.stderr
        assert done.stderr.strip().count("\n") == 0 and done.stderr.startswith("main.py: error: cannot watch")
    done = run_main("--replay", "vt1garbage")  # the window does not open on a bad code
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("main.py: error: cannot watch")


def test_replay_plays_at_1x_4x_16x_and_pauses(tmp_path):
    from engine.replay import Recorder

    rec = Recorder(seed=2, mode="paged")
    for n in range(3000):
        rec.update(theme.STEP_MS, [Input.LEFT] if n % 50 == 0 else [])
    app = make_app(tmp_path)
    app.watch(rec.finish())
    scene = app.top
    assert isinstance(scene, ReplayScene)
    pump(app, 10)
    t = scene.game.time_ms
    key(app, pygame.K_SPACE, steps=20)  # pause
    assert scene.paused and scene.game.time_ms == t  # 21 frames, no game time
    t = scene.game.time_ms
    key(app, pygame.K_SPACE, steps=0)
    for speed_key, speed in ((pygame.K_1, 1), (pygame.K_2, 4), (pygame.K_3, 16)):
        key(app, speed_key, steps=0)
        before = scene.game.time_ms
        pump(app, 2)
        assert scene.game.time_ms == pytest.approx(before + 2 * speed * theme.STEP_MS)
    click(app, centre(next(b for b in scene.buttons if b.name == "pause").rect), steps=5)
    assert scene.paused


def test_a_replay_reaches_the_same_end_and_says_it_is_verified(tmp_path):
    app = make_app(tmp_path)
    played = finished_run(app)
    app.watch(sharecode.decode(played.share_code))
    scene = app.top
    what, where = scene.banner_text()
    assert "REPLAY" in what and f"final score {played.game.score:,}" in where and "not a live game" in where
    key(app, pygame.K_3, steps=len(played.replay.steps) // 16 + 3)
    assert scene.done and scene.verdict is None
    assert scene.game.score == played.game.score and scene.game.board.grid == played.game.board.grid
    assert "verified" in scene.banner_text()[1]
    # A code whose claim is false plays, and the end says it does not match.
    fake = played.replay.simulate()
    claim = Claim.of(fake.game)
    lie = sharecode.decode(sharecode.encode(played.replay, Claim(claim.score + 500, claim.served, claim.pieces,
                                                                  claim.outcome, claim.mode, claim.digest)))
    app.watch(lie)
    key(app, pygame.K_3, steps=len(lie.steps) // 16 + 3)
    assert app.top.done and app.top.verdict is not None
    assert "does not match" in app.top.banner_text()[1]
    key(app, pygame.K_ESCAPE)
    assert isinstance(app.top, TitleScene)


def test_watch_on_the_report_opens_the_replay_and_exit_comes_back(tmp_path):
    app = make_app(tmp_path)
    finished_run(app)
    report = app.top
    assert report.code and sharecode.decode(report.code).verify()
    key(app, pygame.K_w, steps=3)
    assert isinstance(app.top, ReplayScene)
    key(app, pygame.K_ESCAPE)
    assert app.top is report


def test_copy_in_the_browser_puts_a_link_on_the_clipboard_or_selects_it(tmp_path, monkeypatch):
    calls = []

    class FakeShare:
        status = "pending"

        def copy(self, code):
            calls.append(code)

    class FakeWindow:
        vtShare = FakeShare()

    monkeypatch.setattr(share, "BROWSER", True)
    monkeypatch.setattr(share, "_window", lambda: FakeWindow)
    app = make_app(tmp_path)
    finished_run(app)
    report = app.top
    click(app, centre(next(b for b in report.buttons if b.name == "copy").rect))
    assert calls == [report.code] and report.copy_state == "pending"
    FakeShare.status = "selected"  # the page showed the link selected (no clipboard rights)
    pump(app, 1)
    assert report.copy_state == "selected"
    report.draw(canvas())


def test_copy_on_the_desktop_falls_back_to_the_terminal(tmp_path, monkeypatch, capsys):
    def refused(text):
        raise pygame.error("no clipboard")

    monkeypatch.setattr(pygame.scrap, "put_text", refused)
    monkeypatch.setattr(pygame.scrap, "get_init", lambda: True)
    app = make_app(tmp_path)
    finished_run(app)
    key(app, pygame.K_c)
    assert app.top.copy_state == "printed"
    assert app.top.code in capsys.readouterr().out


def test_a_run_that_switched_allocator_is_mixed_and_replays_exactly(tmp_path):
    app = make_app(tmp_path)
    played = finished_run(app, mode="paged", switch=True)
    assert played.tape.mixed and played.tape.mode == "mixed"
    assert app.settings.best == Settings().best  # never a best of either mode
    assert app.settings.games_played == 1
    decoded = sharecode.decode(played.share_code)
    out, problem = decoded.check()
    assert problem is None and out.mode == "mixed"
    assert out.game.board.grid == played.game.board.grid
    assert Input.MODE_CONTIGUOUS in {i for _, inputs in decoded.steps for i in inputs}


def test_choosing_the_allocator_before_the_first_request_is_not_mixed(tmp_path):
    app = make_app(tmp_path)
    play = PlayScene(app, mode="paged", seed=5)
    app.reset(play)
    play.set_mode("contiguous")
    force_oom(play)
    pump(app, int(END_DELAY_MS / theme.STEP_MS) + 2)
    assert not play.tape.mixed and play.tape.mode == "contiguous"
    out, problem = sharecode.decode(play.share_code).check()
    assert problem is None and out.mode == "contiguous"
    assert app.best("contiguous", "serve") == play.game.score


def test_the_title_has_a_daily_button(tmp_path):
    app = make_app(tmp_path)
    title = TitleScene(app)
    app.reset(title)
    pump(app, 2)
    click(app, centre(title.daily_button.rect))
    assert isinstance(app.top, PlayScene) and app.top.daily == app.today()


def test_the_page_address_opens_a_replay_in_the_browser(monkeypatch):
    class Location:
        search = "?utm=x&replay=vt1AbC%20dE"

    class FakeWindow:
        location = Location()

    assert share.page_replay_code() is None  # the desktop has no page address
    monkeypatch.setattr(share, "BROWSER", True)
    monkeypatch.setattr(share, "_window", lambda: FakeWindow)
    assert share.page_replay_code() == "vt1AbC dE"
    Location.search = ""
    assert share.page_replay_code() is None



@pytest.mark.parametrize("args", [
    ["--record", "run.json"],  # a window records every run itself
    ["--headless", "--frames", "5", "--record", "run.txt"],
    ["--headless", "--frames", "5", "--record", "run.json", "--scene", "title"],
    ["--replay", "vt1abc", "--seed", "3"],
    ["--replay", "vt1abc", "--daily"],
    ["--replay", "vt1abc", "--autoplay"],
    ["--daily", "--seed", "4"],
])
def test_replay_record_and_daily_options_are_checked(args):
    from ui.cli import UsageError, parse

    with pytest.raises(UsageError):
        parse(args)


def test_headless_record_needs_no_screenshot_and_writes_a_verifying_replay(tmp_path):
    path = tmp_path / "oom.json"
    done = run_main("--headless", "--frames", "30", "--scene", "oom", "--mode", "contiguous", "--seed", "3",
                    "--record", str(path))
    assert done.returncode == 0, done.stderr
    replay = replay_json.load(str(path))
    out, problem = replay.check()
    assert problem is None and out.summary()["outcome"] == "oom" and out.mode == "contiguous"
    blocked = run_main("--headless", "--frames", "3", "--scene", "play", "--record", str(tmp_path / "no" / "x.json"))
    assert blocked.returncode == 2 and "Traceback" not in blocked.stderr


@pytest.mark.parametrize("layout", ["landscape", "portrait"])
@pytest.mark.parametrize("done", [False, True])
def test_the_replay_screen_is_legible_and_finger_sized_in_both_layouts(tmp_path, monkeypatch, layout, done):
    import itertools

    from tests.test_ui_portrait import _record

    app = make_app(tmp_path, layout=layout)
    played = finished_run(app)
    app.watch(sharecode.decode(played.share_code))
    scene = app.top
    if done:
        scene.set_speed(16)
    pump(app, len(scene.replay.steps) // 16 + 3 if done else 30)
    assert scene.done is done
    lay = app.layout
    drawn = _record(app, monkeypatch)
    surface = pygame.Surface(lay.size)
    scene._draw_banner(surface)
    scene._draw_bar(surface)
    texts = [(t, px, r) for t, px, r, on in drawn if on]
    assert any("REPLAY" in t for t, _, _ in texts) and any("16x" == t for t, _, _ in texts)
    inside = lay.canvas.inflate(-2, -2)
    for text, px, r in texts:
        assert px >= lay.text.small, (text, px)
        assert inside.contains(r), (text, r)
    for (ta, _, a), (tb, _, b) in itertools.combinations(texts, 2):
        assert a == b or not a.inflate(0, -4).colliderect(b.inflate(0, -4)), (ta, a, tb, b)
    for b in scene.buttons:
        assert b.target.width >= lay.touch and b.target.height >= lay.touch, b.name
    for a, b in itertools.combinations(scene.buttons, 2):
        assert not pygame.Rect(a.rect).colliderect(b.rect)


@pytest.mark.parametrize("layout", ["landscape", "portrait"])
def test_the_daily_button_and_share_row_fit_each_layout(tmp_path, layout):
    import itertools

    app = make_app(tmp_path, layout=layout)
    title = TitleScene(app)
    app.reset(title)
    buttons = [*title.mode_buttons, title.start_button, *title.side_buttons, title.daily_button]
    for b in buttons:
        assert b.target.width >= app.layout.touch and b.target.height >= app.layout.touch, b.name
        assert app.layout.canvas.contains(pygame.Rect(b.rect)), b.name
    for a, b in itertools.combinations(buttons, 2):
        assert not pygame.Rect(a.rect).colliderect(b.rect), (a.name, b.name)
    finished_run(app)
    report = app.top
    for a, b in itertools.combinations(report.buttons, 2):
        assert not pygame.Rect(a.rect).colliderect(b.rect), (a.name, b.name)
    assert not pygame.Rect(report.code_box).colliderect(report.share_buttons[0].rect)


@pytest.mark.parametrize("language, words", [
    ("en", "replay link: recorded under rules 1; this build plays rules 4"),
    ("ko", "리플레이 링크: 규칙 1 버전의 게임입니다. 이 빌드는 규칙 4 버전입니다")])
def test_an_old_share_code_is_refused_with_the_engines_one_line(tmp_path, monkeypatch, language, words):
    from engine.replay import ReplayError, rules_mismatch
    from tests.test_sharecode import GOLDEN
    from ui.i18n import Msg

    with pytest.raises(ReplayError) as refused:
        sharecode.decode(GOLDEN[1][0][3])
    assert str(refused.value) == rules_mismatch(1)
    app = make_app(tmp_path, language=language)
    title = TitleScene(app, seed=1)
    title.notice = Msg.of("title.replay_problem", reason=str(refused.value))  # as main.py passes it on
    assert title._notice_text() == words
    drawn: list[str] = []
    blit = app.text.blit
    monkeypatch.setattr(app.text, "blit", lambda s, text, *a, **k: (drawn.append(text), blit(s, text, *a, **k))[1])
    title._draw_left(canvas()) if not app.layout.portrait else title._draw_side(canvas())
    shown = [t for t in drawn if t and (t in words)]
    assert " ".join(shown).split() == words.split(), "the whole line is on the title, none of it cut"


def test_a_finished_replay_names_its_outcome(tmp_path):
    app = make_app(tmp_path)
    scene = ReplayScene.__new__(ReplayScene)  # only the banner's words: no console drawn
    scene.app, scene.claimed, scene.label, scene.paused, scene.speed = app, 10, "paged", False, 1
    scene.replay = type("R", (), {"daily": None})()
    for outcome, words in (("oom", "CUDA OOM"), ("overload", "OVERLOADED"), ("victory", "WORKLOAD COMPLETE")):
        scene.game = type("G", (), {"result": type("Rep", (), {"outcome": outcome})(), "score": 10})()
        scene.done, scene.verdict = True, None
        assert words in scene.banner_text()[1] and "verified" in scene.banner_text()[1]
