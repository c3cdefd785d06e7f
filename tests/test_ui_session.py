"""The UI's reading of engine events: cards, log, block-table tracking, the fixed-step clock."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine import Game, Input, Kind
from engine import events as ev
from engine import rules as R
from engine.board import Board
from tests.uikit import canvas
from ui import theme
from ui.app import FixedStep
from ui.cards import CARDS, MIN_SHOW_MS, CardDeck, card_for
from ui.log_console import LogConsole, stamp
from ui.effects import FADE_MS
from ui.session import ARRIVAL_LOG_QUEUE, DEADLINE_CARD, GameSession
from ui.text import TextCache


def lock(holes: int) -> ev.Locked:
    sealed = tuple((0, 21 - i) for i in range(holes))
    return ev.Locked(ev.LockResult(1, Kind.T, ((0, 21),), holes, 0, sealed))


def table() -> ev.BlockTable:
    cells = ((0, (1, 21)), (1, (2, 20)), (2, (3, 19)), (3, (4, 18)))
    return ev.BlockTable(5, Kind.L, cells)


FREED = ((1, 21), (2, 21), (3, 20), (3, 19))


def finished(wasted: int = 0) -> ev.Finished:
    return ev.Finished(9, Kind.S, FREED, 30, wasted)


def test_each_teaching_card_has_its_trigger_and_points_at_its_cells():
    assert card_for(lock(2)) == ("sealed_hole", ((0, 21), (0, 20)))
    assert card_for(lock(2), fragments=False) is None  # paged: no external fragmentation
    assert card_for(lock(0)) is None
    pages = tuple(c for _, c in table().entries)
    assert card_for(ev.PageSplit(table(), 1)) == ("split", pages)
    assert card_for(ev.PageSplit(table(), 1, auto=True)) == ("paged_on_demand", pages)
    reserved = ev.BlockTable(3, Kind.T, ((0, (4, 18)), (1, (5, 18)), (2, (4, 17)), (3, (5, 17))), 2, 20)
    assert card_for(ev.Admitted(reserved, "whole", 0.0)) == ("reservation", ((4, 17), (5, 17)))
    assert card_for(ev.Admitted(table(), "split", 0.0)) is None
    assert card_for(finished()) == ("finished", FREED)
    assert card_for(finished(wasted=2)) == ("reservation_wasted", FREED[-2:])
    assert card_for(ev.Grew(9, Kind.S, 2, (7, 12))) == ("paged_grow", ((7, 12),))
    assert card_for(ev.Preempted(9, Kind.S, FREED, "swap", 5)) == ("preempted", FREED)
    assert card_for(ev.Arrived(9, Kind.S, 20, R.QUEUE_MAX - 2)) == ("queue_filling", ())
    assert card_for(ev.Arrived(9, Kind.S, 20, 1)) is None
    assert card_for(ev.Alert("vram_high", "x")) == ("vram_high", ())
    assert card_for(ev.Alert("split_refused", "x")) == ("split_refused", ())
    assert card_for(ev.Alert("hold_used", "x")) is None
    assert set(CARDS) == {"finished", "reservation", "reservation_wasted", "sealed_hole", "paged_grow",
                          "preempted", "queue_filling", "deadline", "vram_high", "split", "paged_on_demand",
                          "split_refused", "prefix_hit", "chunked_prefill", "picked"}
    # rules 4: a prompt found cached points at the blocks it maps; one prefilled in chunks at its
    # table; a pick out of turn at nothing (first come, first served picks nothing)
    assert card_for(ev.Admitted(table(), "split", 0.0, cached=2, chunked=True)) == ("prefix_hit", pages[:2])
    assert card_for(ev.Admitted(table(), "split", 0.0, chunked=True)) == ("chunked_prefill", pages)
    assert card_for(ev.Admitted(table(), "split", 0.0, resumed="recompute", chunked=True)) is None
    assert card_for(ev.Picked(9, Kind.S, 2)) == ("picked", ())
    assert card_for(ev.Picked(9, Kind.S, 0)) is None


def test_no_card_speaks_of_rows():
    for card in CARDS.values():
        assert "row" not in (card.title + card.body).lower(), card.id


def test_a_card_outlines_its_cells_until_it_goes():
    canvas()
    seen: set[str] = set()
    deck = CardDeck(lambda: True, lambda: seen, seen.add)
    deck.observe(lock(2))
    assert deck.cells == ((0, 21), (0, 20))
    deck.dismiss()
    assert deck.cells == ()


def test_card_deck_shows_once_and_respects_the_switch():
    canvas()
    seen: set[str] = set()
    enabled = [True]
    deck = CardDeck(lambda: enabled[0], lambda: seen, seen.add)
    deck.observe(lock(1))
    assert deck.current is not None and deck.current.id == "sealed_hole" and "sealed_hole" in seen
    deck.dismiss()
    deck.observe(lock(1))
    assert deck.current is None
    enabled[0] = False
    deck.observe(finished())
    assert deck.current is None and "finished" not in seen


def test_two_firsts_at_once_show_one_after_the_other():
    canvas()
    seen: set[str] = set()
    deck = CardDeck(lambda: True, lambda: seen, seen.add)
    deck.observe(ev.PageSplit(table(), 1))
    deck.observe(finished())  # another request finished in the same step
    assert deck.current.id == "split" and seen == {"split"}  # "finished" not seen before it shows
    steps = 0
    while deck.current is not None and deck.current.id == "split":
        deck.update(theme.STEP_MS)
        steps += 1
    assert steps * theme.STEP_MS >= MIN_SHOW_MS  # the first card stayed readable
    assert deck.current is not None and deck.current.id == "finished" and "finished" in seen
    assert deck.cells == FREED
    deck.dismiss()
    assert deck.current is None


def test_dismiss_shows_the_waiting_card_and_switching_off_drops_it():
    canvas()
    enabled = [True]
    seen: set[str] = set()
    deck = CardDeck(lambda: enabled[0], lambda: seen, seen.add)
    deck.observe(ev.Alert("vram_high", "x"))
    deck.observe(lock(1))
    deck.observe(lock(1))  # already waiting: not queued twice
    assert [c.id for c in deck.waiting] == ["sealed_hole"]
    deck.dismiss()
    assert deck.current.id == "sealed_hole" and not deck.waiting
    deck.observe(finished())
    enabled[0] = False
    deck.update(theme.STEP_MS)
    assert deck.current is None and not deck.waiting and "finished" not in seen


def test_a_request_near_its_deadline_raises_its_card_once():
    canvas()
    seen: set[str] = set()
    deck = CardDeck(lambda: True, lambda: seen, seen.add)
    session = GameSession(Game(seed=1, mode="paged"), cards=deck)
    req = session.game.falling
    assert req is not None
    session.step(theme.STEP_MS)
    assert "deadline" not in seen
    req.queued_ms -= DEADLINE_CARD * R.DEADLINE_MS  # it has waited most of its deadline
    session.step(theme.STEP_MS)
    assert deck.current is not None and deck.current.id == "deadline" and "deadline" in seen


def test_card_goes_away_by_itself():
    canvas()
    deck = CardDeck(lambda: True, set, lambda _: None)
    deck.show("split")
    for _ in range(int(10_000 / theme.STEP_MS)):
        deck.update(theme.STEP_MS)
    assert deck.current is None


def test_log_keeps_newest_last_and_wraps_to_the_panel():
    canvas()
    log = LogConsole((0, 0, 270, 214))
    for i in range(60):
        log.add(i * 1000.0, "INFO" if i % 3 else "WARN", f"[GC] entry {i} " + "word " * (i % 7))
    lines = log.shown_lines()
    assert lines[-1][0].text.startswith("[GC] entry 59")
    assert len(lines) <= (214 - 22 - 7) // 16
    assert log.entries.maxlen == len(log.entries) == 40
    assert stamp(83_500.0) == "01:23"


def test_log_makes_room_for_a_card_and_marks_a_cut_entry():
    canvas()
    log = LogConsole((0, 0, 270, 214))
    for i in range(6):
        log.add(i * 1000.0, "WARN", f"[ALLOC] req#{i} " + "could not allocate a contiguous range " * 2)
    full = log.shown_lines()
    log.draw(canvas(), TextCache(), covered=132)  # a teaching card over the top of the panel
    lines = log.shown_lines()
    assert len(lines) <= (214 - 134 - 7) // 16 < len(full)
    assert lines[-1][0] is log.entries[-1]  # the newest entry is still whole, at the bottom
    first_shown = lines[0][0]
    shown = [text for entry, _, text in lines if entry is first_shown]
    if len(shown) < len(log.wrapped(first_shown)):
        assert shown[-1].endswith("...")
    log.draw(canvas(), TextCache(), covered=0)
    assert len(log.shown_lines()) == len(full)


def test_unknown_log_level_is_shown_as_info():
    canvas()
    log = LogConsole((0, 0, 270, 214))
    log.add(0.0, "DEBUG", "x")
    assert log.entries[-1].level == "INFO"


def test_a_split_cascades_from_where_the_piece_was_and_outlines_its_pages():
    canvas()
    session = GameSession(Game(seed=1, mode="paged"))
    bt = table()
    session.consume([ev.PageSplit(bt, 0, origin=((3, 0), (4, 0), (5, 0), (6, 0)))])
    cascade = session.effects.cascades[0]
    assert [start for _, start, _, _ in cascade.pages] == [(3, 0), (4, 0), (5, 0), (6, 0)]
    assert [end for _, _, end, _ in cascade.pages] == [c for _, c in bt.entries]
    assert sorted(c for _, c in session.effects.highlight.cells) == sorted(c for _, c in bt.entries)


def test_finished_and_preempted_blocks_fade_where_they_were():
    canvas()
    from engine import PIECES
    session = GameSession(Game(seed=1, mode="paged"))
    session.consume([finished(), ev.Preempted(4, Kind.Z, ((6, 21),), "swap", 3, "swap")])
    done, gone = session.effects.fades
    assert done.cells == list(FREED) and done.colour == PIECES[Kind.S].colour and done.kind == "finished"
    assert gone.cells == [(6, 21)] and gone.kind == "swap"
    assert [t.text for t in session.effects.toasts] == ["PREEMPTED: SWAPPED TO CPU"]
    for _ in range(int(FADE_MS / theme.STEP_MS) + 2):
        session.effects.advance(theme.STEP_MS)
    assert not session.effects.fades


def test_the_block_table_follows_the_engine_and_a_pick_only_reads_it():
    canvas()
    game = Game(seed=2, mode="paged")
    session = GameSession(game)
    for _ in range(6):  # a few requests admitted, split into pages
        session.step(0.0, [Input.SPLIT])
        session.step(2500.0)
    running = game.serving.running
    assert len(running) >= 2
    assert session.focus_table() == game.block_table  # the last admitted, read from the engine
    other = min(running.values(), key=lambda r: r.order)
    before = (game.focus, game.board.version, game.serving.step, [row[:] for row in game.board.grid])
    assert session.pick(other.blocks[-1]) == other.id  # its own last block
    assert session.focus_table() == game.table_of(other.id) == game.serving.table(other)
    assert (game.focus, game.board.version, game.serving.step, game.board.grid) == before
    shared = next(r for r in running.values() if r.mapped)  # a shared prompt's block: its oldest mapper's
    mappers = [r for r in running.values() if shared.blocks[0] in r.blocks]
    assert session.pick(shared.blocks[0]) == min(mappers, key=lambda r: r.order).id
    free = next((x, y) for y in range(R.HIDDEN, R.HEIGHT) for x in range(R.WIDTH) if not game.board.grid[y][x])
    assert session.pick(free) is None and session.focus_table() == game.block_table


def test_the_log_hears_of_arrivals_only_once_the_queue_grows():
    canvas()
    session = GameSession(Game(seed=1, mode="paged"))
    session.consume([ev.Arrived(7, Kind.T, 20, 1)])
    assert not any("arrives" in e.text for e in session.log.entries)
    half = R.QUEUE_MAX // ARRIVAL_LOG_QUEUE
    session.consume([ev.Arrived(8, Kind.T, 20, half - 1)])
    assert not any("req#8" in e.text for e in session.log.entries)
    session.consume([ev.Arrived(9, Kind.T, 20, half)])
    assert any("req#9" in e.text and "arrives" in e.text for e in session.log.entries)
    # A longer queue (a chapter's) is half full later.
    session.consume([ev.Arrived(10, Kind.T, 20, half, queue_max=2 * R.QUEUE_MAX)])
    assert not any("req#10" in e.text for e in session.log.entries)


def test_a_paged_session_never_logs_external_fragmentation():
    canvas()
    paged = GameSession(Game(seed=1, mode="paged"))
    paged.consume([lock(3)])
    contiguous = GameSession(Game(seed=1, mode="contiguous"))
    contiguous.consume([lock(3)])
    assert "external fragmentation" in contiguous.log.entries[-1].text
    assert "fragmentation" not in paged.log.entries[-1].text
    paged.consume([ev.ModeSwitched("contiguous"), lock(3)])  # the line follows the allocator in use
    assert "external fragmentation" in paged.log.entries[-1].text


@given(st.lists(st.floats(min_value=0.0, max_value=10_000.0), min_size=1, max_size=60))
def test_fixed_step_never_runs_more_than_the_cap(frames):
    clock = FixedStep()
    total_steps = 0
    for ms in frames:
        n = clock.advance(ms)
        assert 0 <= n <= theme.MAX_STEPS_PER_FRAME
        assert 0.0 <= clock.acc < clock.step_ms + 1e-9
        total_steps += n
    # Time is never invented: steps * step <= wall time.
    assert total_steps * clock.step_ms <= sum(frames) + 1e-6


def test_refused_splits_say_so_over_the_board():
    canvas()
    contiguous = GameSession(Game(seed=1, mode="contiguous"))
    contiguous.step(0.0, [Input.SPLIT])
    assert [t.text for t in contiguous.effects.toasts] == ["PAGED MODE ONLY"]
    paged = GameSession(Game(seed=1, mode="paged"))
    full = Board.from_strings(["#" * R.WIDTH] * R.VISIBLE)
    paged.game.set_board(full)
    events = paged.step(0.0, [Input.SPLIT])
    assert any(isinstance(e, ev.Alert) and e.code == "split_no_room" for e in events)
    assert [t.text for t in paged.effects.toasts] == ["NO ROOM TO SPLIT"]
    assert "split refused" in paged.log.entries[-1].text


@pytest.mark.parametrize("language", ["en", "ko"])
@pytest.mark.parametrize("name", ["landscape", "portrait"])
def test_every_card_body_fits_its_card(name, language):
    canvas()
    from ui.cards import CARD_IDS, PAD, card_in
    from ui.i18n import catalogue
    from ui.layout import layout_for
    from ui.text import wrap
    lay = layout_for(name)
    size = lay.text.small
    line_h = theme.font(size).get_linesize()
    # Landscape: title row, the body, the dismiss hint; portrait: the hint shares the title's row.
    room = (lay.card[3] - 28 - (line_h + 6 if name == "landscape" else 0)) // line_h
    for card_id in CARD_IDS:
        card = card_in(catalogue(language), card_id)
        assert len(wrap(card.body, size, lay.card[2] - 2 * PAD)) <= room, card.id


def test_mode_buttons_follow_the_engine_registry(monkeypatch):
    from engine import modes
    from ui import layout as L
    from ui.console_view import mode_buttons
    two = mode_buttons()
    assert [b.name for b in two] == list(modes.NAMES)
    assert two[0].rect == L.MODE_CONTIGUOUS_BTN and two[1].rect == L.MODE_PAGED_BTN
    from engine.allocators import Contiguous
    third = modes.Mode("buddy", "BUDDY", "Power-of-two blocks.", "a buddy allocator", Contiguous())
    monkeypatch.setattr(modes, "MODES", (*modes.MODES, third))
    three = mode_buttons()
    assert [b.name for b in three] == ["contiguous", "paged", "buddy"]
    left, right = L.MODE_CONTIGUOUS_BTN[0], L.MODE_PAGED_BTN[0] + L.MODE_PAGED_BTN[2]
    assert three[0].rect[0] == left and three[-1].rect[0] + three[-1].rect[2] <= right
