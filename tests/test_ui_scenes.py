"""Scene flow: title, pause (Esc and focus loss), help, crash report, victory, settings."""
from __future__ import annotations

import itertools
import json
import sys

import pygame
import pytest
from tests.uikit import canvas, centre, click, key, make_app, pump

from engine import Input
from ui import theme
from ui.app import FixedStep
from ui.headless import build, force_oom
from ui.lab_scene import LabScene
from ui.cli import Options
from ui.overlays import HelpScene, PauseScene, ResultScene
from ui.play_scene import END_DELAY_MS, PlayScene
from ui.storage import Settings
from ui.title_scene import TitleScene

pytestmark = pytest.mark.usefixtures("clean_event_queue")


def start_play(app, mode="paged", seed=5):
    scene = PlayScene(app, mode=mode, seed=seed)
    app.reset(scene)
    pump(app, 1)
    return scene


def test_title_enter_starts_a_game_in_the_chosen_mode(tmp_path):
    app = make_app(tmp_path)
    app.reset(TitleScene(app, seed=1))
    pump(app, 30)
    title = app.top
    click(app, centre(title.mode_buttons[0].rect))
    assert app.settings.mode == "contiguous"
    key(app, pygame.K_RETURN)
    assert isinstance(app.top, PlayScene)
    assert app.top.game.mode == "contiguous"


def test_the_goal_is_chosen_on_the_title_and_persists(tmp_path):
    from engine import rules as R

    app = make_app(tmp_path)
    app.reset(TitleScene(app, seed=1))
    pump(app, 5)
    assert app.settings.goal == "serve" and R.GOALS == ("serve", "endless")
    goal = next(b for b in app.top.side_buttons if b.name == "endless")  # the goal switch
    click(app, centre(goal.rect))
    assert app.settings.goal == "endless"
    key(app, pygame.K_e)
    assert app.settings.goal == "serve"
    key(app, pygame.K_e)
    app2 = make_app(tmp_path)
    assert app2.settings.goal == "endless"
    app2.reset(TitleScene(app2, seed=1))
    key(app2, pygame.K_RETURN)
    assert isinstance(app2.top, PlayScene) and app2.top.game.endless and app2.top.game.goal == "endless"


def test_title_start_button_and_attract_bot(tmp_path):
    app = make_app(tmp_path)
    title = TitleScene(app, seed=1)
    app.reset(title)
    pump(app, 600)
    assert title.demo.game.pieces > 0, "the bot plays behind the title"
    click(app, centre(title.start_button.rect))
    assert isinstance(app.top, PlayScene)


@pytest.mark.parametrize("where", ["board", "slot"])
def test_clicking_or_tapping_the_demo_starts(tmp_path, where):
    app = make_app(tmp_path)
    app.reset(TitleScene(app, seed=1))
    pump(app, 5)
    click(app, centre(app.layout.board if where == "board" else app.layout.title["demo_slot"]))
    assert isinstance(app.top, PlayScene)


def test_clicking_empty_title_panel_does_not_start(tmp_path):
    app = make_app(tmp_path)
    title = TitleScene(app, seed=1)
    app.reset(title)
    pump(app, 5)
    click(app, (150, 60))  # the game's name, top left
    assert app.top is title


def test_escape_pauses_and_time_stops(tmp_path):
    app = make_app(tmp_path)
    play = start_play(app)
    key(app, pygame.K_ESCAPE)
    assert isinstance(app.top, PauseScene)
    t = play.game.time_ms
    pump(app, 30)
    assert play.game.time_ms == t
    key(app, pygame.K_ESCAPE)
    assert app.top is play
    pump(app, 1)
    assert play.game.time_ms > t


@pytest.mark.parametrize("event", [
    pygame.event.Event(pygame.WINDOWFOCUSLOST),
    pygame.event.Event(pygame.WINDOWHIDDEN),
    pygame.event.Event(pygame.WINDOWMINIMIZED),
    pygame.event.Event(pygame.ACTIVEEVENT, gain=0, state=pygame.APPINPUTFOCUS),
    pygame.event.Event(pygame.ACTIVEEVENT, gain=0, state=pygame.APPACTIVE),
])
def test_focus_loss_pauses(tmp_path, event):
    app = make_app(tmp_path)
    play = start_play(app)
    pygame.event.post(event)
    pump(app, 1)
    assert isinstance(app.top, PauseScene)
    assert app.scenes[-2] is play


def test_mouse_leaving_the_window_does_not_pause(tmp_path):
    app = make_app(tmp_path)
    play = start_play(app)
    pygame.event.post(pygame.event.Event(pygame.ACTIVEEVENT, gain=0, state=pygame.APPMOUSEFOCUS))
    pump(app, 1)
    assert app.top is play


def test_focus_loss_releases_held_keys(tmp_path):
    app = make_app(tmp_path)
    play = start_play(app)
    pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=pygame.K_LEFT, mod=0, unicode="", scancode=0))
    pump(app, 1)
    pygame.event.post(pygame.event.Event(pygame.WINDOWFOCUSLOST))
    pump(app, 1)
    key(app, pygame.K_ESCAPE)  # resume
    x = play.game.active.x
    pump(app, 30)
    assert play.game.active.x == x, "a key held when focus went away must not keep repeating"


def test_mute_toggles_and_persists(tmp_path):
    app = make_app(tmp_path)
    start_play(app)
    key(app, pygame.K_m)
    assert app.sound.muted and app.settings.muted
    again = make_app(tmp_path)
    assert again.settings.muted and again.sound.muted
    start_play(again)
    key(again, pygame.K_m)
    assert not make_app(tmp_path).settings.muted


def test_corrupt_save_file_is_survived(tmp_path):
    (tmp_path / "settings.json").write_text("{not json at all", encoding="utf-8")
    app = make_app(tmp_path)
    assert app.settings.cards_enabled and not app.settings.muted
    play = start_play(app)
    assert any(e.level == "WARN" and "[STORE]" in e.text for e in play.session.log.entries)
    key(app, pygame.K_m)
    assert json.loads((tmp_path / "settings.json").read_text())["muted"] is True


def test_help_opens_and_closes(tmp_path):
    app = make_app(tmp_path)
    play = start_play(app)
    key(app, pygame.K_h)
    assert isinstance(app.top, HelpScene)
    t = play.game.time_ms
    pump(app, 10)
    assert play.game.time_ms == t, "help pauses the game"
    key(app, pygame.K_ESCAPE)
    assert isinstance(app.top, PauseScene), "closing help leaves the game paused, not running"
    key(app, pygame.K_ESCAPE)
    assert app.top is play


def test_audio_failure_is_logged_once_in_the_running_game(tmp_path, monkeypatch):
    from ui.app import GameApp
    from ui.sound import Sound
    from ui.storage import Storage

    def no_device(self):
        return "audio unavailable (no device); running silent"
        yield  # a generator, like the real one

    monkeypatch.setattr(Sound, "start_steps", no_device)
    app = GameApp(canvas(), storage=Storage(directory=tmp_path), seed=1, audio=True)
    play = start_play(app)
    for _ in range(5):  # the game loop asks once per frame
        app.pump_audio()
        pump(app, 1)
    lines = [e for e in play.session.log.entries if "[AUDIO]" in e.text]
    assert len(lines) == 1 and lines[0].level == "WARN" and "silent" in lines[0].text
    assert not app.notices


def test_sound_effects_are_made_one_per_frame(tmp_path):
    from ui.app import GameApp
    from ui.sound import NAMES
    from ui.storage import Storage

    app = GameApp(canvas(), storage=Storage(directory=tmp_path), seed=1, audio=True)
    frames = 0
    while app.pump_audio():
        frames += 1
        assert frames <= len(NAMES)
    assert frames == len(NAMES) and app.sound.available and not app.notices
    assert not app.pump_audio()  # done: nothing more to do, ever
    pygame.mixer.quit()


def test_oom_shows_the_engine_crash_report_then_restart(tmp_path):
    app = make_app(tmp_path)
    play = start_play(app, mode="contiguous")
    force_oom(play)
    assert play.game.over and play.game.result.outcome == "oom"
    pump(app, int(END_DELAY_MS / theme.STEP_MS) + 2)
    top = app.top
    assert isinstance(top, ResultScene) and top.report is play.game.result
    assert app.best("contiguous", "serve") == play.game.score > 0
    assert app.storage.load().best["contiguous"] == {"serve": play.game.score, "endless": 0}
    key(app, pygame.K_RETURN)
    assert isinstance(app.top, PlayScene) and app.top is not play
    assert not app.top.game.over and app.top.game.mode == "contiguous"


def test_keys_just_after_the_crash_do_not_act_on_the_run_or_its_report(tmp_path):
    app = make_app(tmp_path)
    play = start_play(app, mode="contiguous")
    force_oom(play)
    key(app, pygame.K_RETURN)  # meant for the game, pressed as it crashed
    assert app.top is play, "no restart before the report has been seen"
    pump(app, int(END_DELAY_MS / theme.STEP_MS) + 2)
    report = app.top
    assert isinstance(report, ResultScene)
    early = ResultScene(app, play, play.game.result, since_end_ms=100.0)
    app.push(early)
    key(app, pygame.K_b)  # 0.1 s after the crash: ignored
    assert not early.peeking
    pump(app, int(400 / theme.STEP_MS) + 1)
    key(app, pygame.K_b)
    assert early.peeking


def test_a_run_that_switched_allocator_is_mixed_and_sets_no_best(tmp_path):
    app = make_app(tmp_path)
    play = start_play(app, mode="contiguous")
    play.session.step(0.0, [Input.HARD_DROP])
    key(app, pygame.K_2)  # switch to PAGED mid-run
    assert play.game.mixed
    play.game.update(0.0, [Input.MODE_CONTIGUOUS])
    force_oom(play)
    pump(app, int(END_DELAY_MS / theme.STEP_MS) + 2)
    assert isinstance(app.top, ResultScene) and app.top.report.record_mode == "mixed"
    assert app.settings.best == Settings().best
    assert app.settings.games_played == 1


def test_new_players_start_in_contiguous(tmp_path):
    app = make_app(tmp_path, mode=None)
    assert app.settings.mode == "contiguous"
    title = TitleScene(app, seed=1)
    app.reset(title)
    key(app, pygame.K_RETURN)
    assert isinstance(app.top, PlayScene) and app.top.game.mode == "contiguous"


def test_on_the_crash_report_escape_shows_the_board_and_q_goes_to_the_title(tmp_path):
    app = make_app(tmp_path)
    play = start_play(app, mode="contiguous")
    force_oom(play)
    pump(app, int(END_DELAY_MS / theme.STEP_MS) + 2)
    report = app.top
    key(app, pygame.K_ESCAPE)  # as everywhere else, Esc puts what is in front aside
    assert app.top is report and report.peeking and report.buttons == []
    key(app, pygame.K_ESCAPE)
    assert app.top is report and not report.peeking
    key(app, pygame.K_q)
    assert isinstance(app.top, TitleScene)


def test_teaching_cards_can_be_turned_off_and_stay_off(tmp_path):
    app = make_app(tmp_path)
    start_play(app, mode="contiguous")
    key(app, pygame.K_t)
    assert not app.settings.cards_enabled
    app2 = make_app(tmp_path)
    assert not app2.settings.cards_enabled
    play = start_play(app2, mode="contiguous")
    key(app2, pygame.K_p)  # a refused split would show a card
    assert play.cards.current is None


def test_each_card_is_shown_once(tmp_path):
    app = make_app(tmp_path)
    play = start_play(app, mode="contiguous")
    key(app, pygame.K_p)
    assert play.cards.current.id == "split_refused"
    play.cards.dismiss()
    key(app, pygame.K_p)
    assert play.cards.current is None
    assert "split_refused" in make_app(tmp_path).settings.seen_cards


def test_q_mid_run_pauses_and_q_in_the_pause_menu_leaves(tmp_path):
    app = make_app(tmp_path)
    play = start_play(app)
    key(app, pygame.K_q)  # a slip of the finger next to W and A must not end the run
    assert isinstance(app.top, PauseScene) and play in app.scenes
    key(app, pygame.K_q)
    assert isinstance(app.top, TitleScene)


def test_back_from_the_lab_the_game_is_paused(tmp_path):
    app = make_app(tmp_path)
    play = start_play(app)
    key(app, pygame.K_l)
    assert isinstance(app.top, LabScene)
    app.pop()
    assert isinstance(app.top, PauseScene) and play in app.scenes


def test_lab_key_opens_the_lab_from_the_game(tmp_path):
    app = make_app(tmp_path)
    start_play(app)
    key(app, pygame.K_l)
    assert isinstance(app.top, LabScene)


def test_a_lab_that_cannot_open_is_an_error_not_a_silent_fallback(tmp_path, monkeypatch):
    def broken(self, app, seed=1):
        raise RuntimeError("broken LAB")

    monkeypatch.setattr(LabScene, "__init__", broken)
    app = make_app(tmp_path)
    start_play(app)
    with pytest.raises(RuntimeError, match="broken LAB"):
        key(app, pygame.K_l)


def test_a_build_without_the_lab_plays_on_and_says_why(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ui.lab_scene", None)  # `import ui.lab_scene` now fails
    app = make_app(tmp_path)
    play = start_play(app)
    key(app, pygame.K_l)
    assert app.top is play and not play.game.over
    assert any("LAB is not part of this build" in entry.text for entry in play.session.log.entries)


def test_stall_is_capped():
    clock = FixedStep()
    assert clock.advance(5000.0) == theme.MAX_STEPS_PER_FRAME
    assert clock.advance(theme.STEP_MS) == 1
    assert clock.advance(theme.STEP_MS / 2) == 0


@pytest.mark.parametrize("scene", ["title", "play", "help", "pause", "oom", "victory"])
def test_every_scene_renders_at_canvas_size(tmp_path, scene):
    app = make_app(tmp_path)
    build(app, Options(headless=True, frames=30, screenshot="x.png", scene=scene, mode="paged",
                       autoplay=scene == "victory"), seed=3)
    expected = {"title": TitleScene, "play": PlayScene, "help": HelpScene, "pause": PauseScene,
                "oom": ResultScene, "victory": ResultScene}[scene]
    assert isinstance(app.top, expected)
    if scene in ("oom", "victory"):
        assert app.top.report.outcome == scene
    surface = pygame.Surface(theme.CANVAS_SIZE)
    surface.fill((255, 0, 255))
    app.draw(surface)
    # Every corner is painted (nothing left of the fill colour at the edges).
    for pos in ((0, 0), (799, 0), (0, 579), (799, 579), (400, 290)):
        assert surface.get_at(pos)[:3] != (255, 0, 255)


def test_number_keys_pick_the_mode_on_the_title(tmp_path):
    app = make_app(tmp_path, mode="paged")
    title = TitleScene(app, seed=1)
    app.reset(title)
    key(app, pygame.K_1)
    assert app.settings.mode == "contiguous" and title.demo.game.mode == "contiguous"
    key(app, pygame.K_TAB)
    assert app.settings.mode == "paged"


def test_a_long_stall_advances_the_game_only_a_few_steps(tmp_path):
    app = make_app(tmp_path)
    play = start_play(app)
    t0 = play.game.time_ms
    assert app.frame(30_000.0) == theme.MAX_STEPS_PER_FRAME  # a tab hidden for half a minute
    assert play.game.time_ms - t0 == pytest.approx(theme.MAX_STEPS_PER_FRAME * theme.STEP_MS)
    assert app.frame(theme.STEP_MS) == 1  # and the backlog is gone


def _record_text(app, monkeypatch) -> list:
    """(text, rect) of every string drawn straight onto the canvas from now on."""
    drawn: list = []
    blit = app.text.blit

    def recording(surface, text, size, colour, pos, anchor="topleft"):
        r = blit(surface, text, size, colour, pos, anchor)
        if surface.get_size() == app.layout.size:
            drawn.append((text, r))
        return r

    monkeypatch.setattr(app.text, "blit", recording)
    return drawn


@pytest.mark.parametrize("layout", ["landscape", "portrait"])
def test_crash_report_with_huge_numbers_stays_inside_its_dialog(tmp_path, monkeypatch, layout):
    import dataclasses

    app = make_app(tmp_path, layout=layout)
    play = start_play(app, mode="contiguous")
    force_oom(play)
    report = dataclasses.replace(
        play.game.result, score=123_456_789, tokens=987_654_321, pieces=1_234_567,
        requests_served=1_234_560, time_ms=98_765_432.0, free_cells=199, sealed_holes=187,
        cause=play.game.result.cause + ", and the scheduler had nothing left to preempt either")
    app.push(ResultScene(app, play, report, new_best=True))
    app.draw()
    drawn = _record_text(app, monkeypatch)
    app.top.draw(app.surface)  # the report alone, not the console under it
    dialog = pygame.Rect(app.top.rect)
    buttons_top = min(b.rect[1] for b in app.top.buttons)
    buttons = [pygame.Rect(b.rect) for b in app.top.buttons]
    texts = [(t, r) for t, r in drawn if not any(b.contains(r) for b in buttons)]
    assert any("123,456,789" in t for t, _ in texts)
    for text, r in texts:
        assert dialog.contains(r), (text, r)
        assert r.bottom <= buttons_top, (text, r)
    for (ta, a), (tb, b) in zip(texts, texts[1:]):
        assert not a.inflate(0, -4).colliderect(b.inflate(0, -4)), (ta, tb)  # line boxes may touch


def test_a_huge_score_shrinks_instead_of_running_into_the_labels(tmp_path, monkeypatch):
    from ui import layout as L

    app = make_app(tmp_path)
    play = start_play(app)
    play.game.score = 123_456_789
    play.state.best = 987_654_321
    drawn = _record_text(app, monkeypatch)
    app.draw()
    score = next(r for t, r in drawn if t == "123,456,789")
    assert score.right < L.SCORE[0] + 160  # LINES / LEVEL / BEST labels start there
    best = next(r for t, r in drawn if t[0].isdigit() and t.endswith("M"))
    assert best.left > L.SCORE[0] + 160 + 36


@pytest.mark.parametrize("language", ["en", "ko"])
@pytest.mark.parametrize("scene", ["title", "help", "pause", "oom", "victory"])
def test_screen_text_never_overlaps_or_leaves_the_canvas(tmp_path, monkeypatch, scene, language):
    app = make_app(tmp_path, language=language)
    build(app, Options(headless=True, frames=30, screenshot="x.png", scene=scene, seed=2), 2)
    app.draw()  # overlays snapshot the game below on their first frame: not part of this check
    drawn = _record_text(app, monkeypatch)
    if isinstance(app.top, HelpScene):
        app.top._page = None  # rendered once: render it again under the recorder
    if isinstance(app.top, TitleScene):  # its panels cover the demo console: check the panels
        app.top._draw_left(canvas())
        app.top._draw_right(canvas())
    else:
        app.top.draw(canvas())
    assert len(drawn) > 8
    inside = canvas().get_rect().inflate(-4, -4)
    for text, r in drawn:
        assert inside.contains(r), (text, r)
    for (ta, a), (tb, b) in itertools.combinations(drawn, 2):
        if a != b:  # the same string drawn twice in one place (a pulsing label) is fine
            assert not a.inflate(0, -4).colliderect(b.inflate(0, -4)), (ta, a, tb, b)


@pytest.mark.parametrize("language", ["en", "ko"])
@pytest.mark.parametrize("mode", ["paged", "contiguous"])
def test_play_console_text_never_overlaps(tmp_path, monkeypatch, mode, language):
    app = make_app(tmp_path, language=language)
    build(app, Options(headless=True, frames=545, screenshot="x.png", scene="play", autoplay=True,
                       mode=mode, seed=2), 2)
    play = app.top
    play.game.score, play.state.best = 1_234_567, 9_876_543
    drawn = _record_text(app, monkeypatch)
    app.draw()
    assert len(drawn) > 20
    for text, r in drawn:
        assert canvas().get_rect().contains(r), (text, r)
    for (ta, a), (tb, b) in itertools.combinations(drawn, 2):
        if a != b:
            assert not a.inflate(0, -4).colliderect(b.inflate(0, -4)), (ta, a, tb, b)


def test_overlays_draw_the_frozen_game_from_one_snapshot(tmp_path, monkeypatch):
    app = make_app(tmp_path)
    play = start_play(app)
    key(app, pygame.K_ESCAPE)
    pause = app.top
    calls = []
    monkeypatch.setattr(play, "draw", lambda surface: calls.append(1))
    for _ in range(5):
        app.draw()
    assert len(calls) == 1, "the game below is drawn once, not every frame"
    key(app, pygame.K_m)  # the header's sound switch must show the change
    app.draw()
    assert len(calls) == 2 and app.settings.muted
    key(app, pygame.K_h)
    key(app, pygame.K_ESCAPE)  # back from help
    assert app.top is pause
    app.draw()
    assert len(calls) == 3


def test_title_redraws_its_panels_only_when_they_change(tmp_path, monkeypatch):
    app = make_app(tmp_path)
    title = TitleScene(app, seed=1)
    app.reset(title)
    renders = []
    real = title._render_layer
    monkeypatch.setattr(title, "_render_layer", lambda: (renders.append(1), real()))
    for _ in range(10):
        pump(app, 1)
        app.draw()
    assert len(renders) == 1, "the bot plays on, the panels around it stay cached"
    key(app, pygame.K_2)  # the allocator choice is shown on the left panel
    app.draw()
    assert len(renders) == 2 and app.settings.mode == "paged"
    app.settings.best["paged"]["serve"] = 4321
    app.draw()
    assert len(renders) == 3


def test_the_report_can_be_put_aside_to_see_the_crashed_board(tmp_path):
    app = make_app(tmp_path)
    play = start_play(app, mode="contiguous")
    force_oom(play)
    pump(app, int(END_DELAY_MS / theme.STEP_MS) + 2)
    report = app.top
    assert isinstance(report, ResultScene) and not report.peeking
    app.draw()
    board = pygame.Rect(10, 42, 140, 26)  # a stat card, outside the dialog
    shaded = pygame.transform.average_color(canvas(), board)
    key(app, pygame.K_SPACE)  # Space is the hard drop: it never acts on the report
    assert not report.peeking and app.top is report
    key(app, pygame.K_b)
    assert report.peeking and app.top is report
    app.draw()
    plain = pygame.transform.average_color(canvas(), board)
    assert sum(plain[:3]) > sum(shaded[:3]) + 20, "the game shows unshaded"
    click(app, (400, 300))  # any tap brings the report back
    assert not report.peeking
    click(app, centre(next(b for b in report.buttons if b.name == "board").rect))
    assert report.peeking
    key(app, pygame.K_RETURN)  # Enter still restarts, report shown or not
    assert isinstance(app.top, PlayScene) and app.top is not play


def test_a_long_toast_stays_over_the_board(tmp_path):
    from ui import layout as L

    app = make_app(tmp_path)
    play = start_play(app)
    text = "4 ROWS FREED  +800 tok"
    assert theme.font(theme.LARGE).size(text)[0] + 18 > L.BOARD[2]  # too wide at the usual size
    play.session.toast(text, theme.GREEN)
    app.draw()
    size = app.view._score_sizes[text]
    assert theme.font(size).size(text)[0] + 18 <= L.BOARD[2]  # its plate (text + 18 px) fits


def test_victory_tip_counts_the_requests_the_run_really_served(tmp_path):
    import dataclasses

    app = make_app(tmp_path)
    play = start_play(app, mode="contiguous")
    force_oom(play)
    won = dataclasses.replace(play.game.result, outcome="victory", cause_code="victory", requests_served=301)
    tip = ResultScene(app, play, won).tip()
    assert tip.startswith("301 requests served"), tip


def test_ceiling_tip_says_when_free_blocks_in_reach_could_still_take_the_request(tmp_path):
    import dataclasses

    from engine import rules as R

    app = make_app(tmp_path)
    play = start_play(app, mode="contiguous")
    force_oom(play)
    crash = dataclasses.replace(play.game.result, cause_code="ceiling", free_cells=130, sealed_holes=2)
    roomy = dataclasses.replace(crash, usable_blocks=120, open_unusable=8)
    tip = ResultScene(app, play, roomy).tip()
    assert "120 free blocks in this request's reach could still take it whole" in tip
    assert "lock above" not in tip  # no engine jargon for a newcomer
    short = dataclasses.replace(crash, usable_blocks=R.BLOCKS_PER_REQUEST - 1, open_unusable=125)
    tip = ResultScene(app, play, short).tip()
    assert tip.startswith("130 blocks were free, but 125 of them in gaps too small for this shape")


CAUSES = {"memory_full": "oom", "no_free_range": "oom", "spawn_blocked": "oom", "ceiling": "oom",
          "queue_full": "overload", "deadline": "overload", "victory": "victory"}


@pytest.mark.parametrize("layout", ["landscape", "portrait"])
@pytest.mark.parametrize("cause", sorted(CAUSES))
def test_the_report_tip_is_never_cut_short(tmp_path, monkeypatch, layout, cause):
    import dataclasses

    app = make_app(tmp_path, layout=layout)
    play = start_play(app, mode="contiguous")
    force_oom(play)
    report = dataclasses.replace(play.game.result, cause_code=cause, usable_blocks=120, outcome=CAUSES[cause])
    scene = ResultScene(app, play, report)
    assert " ".join(scene.tips).split() == scene.tip().split()
    app.push(scene)
    drawn = _record_text(app, monkeypatch)
    scene.draw(app.surface)
    texts = [text for text, _ in drawn]
    assert all(line in texts for line in scene.tips), "every line of the tip is on screen"


def test_help_states_the_paged_oom_rule_the_engine_applies():
    from ui.help_content import concepts
    from ui.i18n import catalogue

    paged = dict(concepts(catalogue("en")))["PAGED mode"]
    # engine.memory: a paged run ends when fewer blocks are free than the request needs,
    # not only when none is left.
    assert "fewer are free than a request needs" in paged and "none is left" not in paged
