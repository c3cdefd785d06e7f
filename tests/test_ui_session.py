"""The UI's reading of engine events: cards, log, block-table tracking, the fixed-step clock."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engine import Game, Input, Kind
from engine import events as ev
from tests.uikit import canvas
from ui import theme
from ui.app import FixedStep
from ui.cards import CARDS, MIN_SHOW_MS, CardDeck, card_for
from ui.log_console import LogConsole, stamp
from ui.session import GameSession
from ui.text import TextCache


def lock(holes: int) -> ev.Locked:
    sealed = tuple((0, 21 - i) for i in range(holes))
    return ev.Locked(ev.LockResult(1, Kind.T, ((0, 21),), 0, 0, 0, holes, 0, sealed))


def table() -> ev.BlockTable:
    cells = ((0, (1, 21)), (1, (2, 20)), (2, (3, 19)), (3, (4, 18)))
    return ev.BlockTable(5, Kind.L, cells, cells)


def test_each_teaching_card_has_its_trigger_and_points_at_its_cells():
    assert card_for(lock(2)) == ("sealed_hole", ((0, 21), (0, 20)))
    assert card_for(lock(0)) is None
    assert card_for(ev.LinesCleared((21,), 1, 160, 100)) == ("gc_row", ())
    pages = tuple(c for _, c in table().resident)
    assert card_for(ev.PageSplit(table(), 1)) == ("split", pages)
    assert card_for(ev.PageSplit(table(), 1, auto=True)) == ("paged_on_demand", pages)
    assert card_for(ev.Reserved(3, Kind.T, ((4, 17),))) == ("reservation", ((4, 17),))
    assert card_for(ev.Released(3, ((4, 17),))) == ("released", ((4, 17),))
    assert card_for(ev.Alert("vram_high", "x")) == ("vram_high", ())
    assert card_for(ev.Alert("split_refused", "x")) == ("split_refused", ())
    assert card_for(ev.Alert("hold_used", "x")) is None
    assert set(CARDS) == {"sealed_hole", "gc_row", "split", "vram_high", "split_refused",
                          "reservation", "released", "paged_on_demand"}


def test_a_card_outlines_its_cells_and_follows_them_through_a_clear():
    canvas()
    seen: set[str] = set()
    deck = CardDeck(lambda: True, lambda: seen, seen.add)
    deck.observe(lock(2))
    assert deck.cells == ((0, 21), (0, 20))
    deck.follow((21,))  # the bottom row cleared: its cell is gone, the one above drops
    assert deck.cells == ((0, 21),)
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
    deck.observe(ev.LinesCleared((21,), 1, 160, 100))
    assert deck.current is None and "gc_row" not in seen


def test_two_firsts_at_once_show_one_after_the_other():
    canvas()
    seen: set[str] = set()
    deck = CardDeck(lambda: True, lambda: seen, seen.add)
    deck.observe(ev.PageSplit(table(), 1))
    deck.observe(ev.LinesCleared((21,), 1, 160, 100))  # the split completed a row
    assert deck.current.id == "split" and seen == {"split"}  # gc_row not seen before it shows
    steps = 0
    while deck.current is not None and deck.current.id == "split":
        deck.update(theme.STEP_MS)
        steps += 1
    assert steps * theme.STEP_MS >= MIN_SHOW_MS  # the first card stayed readable
    assert deck.current is not None and deck.current.id == "gc_row" and "gc_row" in seen
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
    deck.observe(ev.LinesCleared((21,), 1, 160, 100))
    enabled[0] = False
    deck.update(theme.STEP_MS)
    assert deck.current is None and not deck.waiting and "gc_row" not in seen


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


def test_block_table_shows_where_the_engine_says_the_pages_live_now():
    canvas()
    session = GameSession(Game(seed=1, mode="paged"))
    bt = table()
    session.consume([ev.PageSplit(bt, 0, origin=((3, 0), (4, 0), (5, 0), (6, 0)))])
    assert dict(session.table_pages)[0] == (1, 21)
    cascade = session.effects.cascades[0]
    assert [start for _, start, _, _ in cascade.pages] == [(3, 0), (4, 0), (5, 0), (6, 0)]
    moved = ev.BlockTable(5, Kind.L, bt.entries, ((0, None), (1, (2, 21)), (2, (3, 20)), (3, (4, 19))))
    session.consume([ev.LinesCleared((21,), 1, 160, 100, ((5,) * 10,), moved, (5,))])
    assert session.table_pages == moved.resident
    assert sorted(c for _, c in session.effects.highlight.cells) == [(2, 21), (3, 20), (4, 19)]


def test_a_cleared_row_is_drawn_in_its_owners_colours_from_the_event():
    canvas()
    session = GameSession(Game(seed=1, mode="contiguous"))
    session.kinds[7] = Kind.S
    session.consume([ev.LinesCleared((21,), 1, 144, 100, ((7,) * 9 + (0,),), None, (7,))])
    clear = session.effects.clears[0]
    from engine import PIECES
    assert clear.cells[21][:9] == [PIECES[Kind.S].colour] * 9 and clear.cells[21][9] is None


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


def test_refused_and_uncharged_splits_say_so_over_the_board():
    canvas()
    contiguous = GameSession(Game(seed=1, mode="contiguous"))
    contiguous.step(0.0, [Input.SPLIT])
    assert [t.text for t in contiguous.effects.toasts] == ["PAGED MODE ONLY"]
    paged = GameSession(Game(seed=1, mode="paged"))
    paged.step(0.0, [Input.SPLIT])  # spends the meter
    assert paged.game.charge < 1.0
    paged.step(0.0, [Input.SPLIT])
    assert [t.text for t in paged.effects.toasts] == ["SPLIT NOT CHARGED"]


def test_every_card_body_fits_its_card():
    canvas()
    from ui.cards import PAD
    from ui.layout import CARD
    from ui.text import wrap
    for card in CARDS.values():  # title row, four body lines, then the dismiss hint
        assert len(wrap(card.body, theme.SMALL, CARD[2] - 2 * PAD)) <= 4, card.id


def test_mode_buttons_follow_the_engine_registry(monkeypatch):
    from engine import modes
    from ui import layout as L
    from ui.console_view import mode_buttons
    two = mode_buttons()
    assert [b.name for b in two] == list(modes.NAMES)
    assert two[0].rect == L.MODE_CONTIGUOUS_BTN and two[1].rect == L.MODE_PAGED_BTN
    third = modes.Mode("buddy", "BUDDY", "Power-of-two blocks.", "a buddy allocator",
                       reserves_max_length=True, pages_on_demand=False, player_split=False)
    monkeypatch.setattr(modes, "MODES", (*modes.MODES, third))
    three = mode_buttons()
    assert [b.name for b in three] == ["contiguous", "paged", "buddy"]
    left, right = L.MODE_CONTIGUOUS_BTN[0], L.MODE_PAGED_BTN[0] + L.MODE_PAGED_BTN[2]
    assert three[0].rect[0] == left and three[-1].rect[0] + three[-1].rect[2] <= right
