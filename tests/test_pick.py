"""Cache-aware scheduling is the player's (features.pick): any of the first NEXT_QUEUE waiting
requests can be picked to run next; and the step's token budget is theirs to set."""
from __future__ import annotations

from engine import Game, Input, Kind
from engine import events as ev
from engine import rules as R
from engine.features import RULES3, RULES4, Features
from engine.workload import Arrival, Scripted
from tests.enginekit import of

PICKING = Features(pick=True)


def queued(features: Features, n: int = 4) -> Game:
    """A game with a falling request and `n` waiting behind it."""
    g = Game(seed=3, mode="paged", endless=True, features=features)
    g.set_workload(Scripted([Arrival(10 + i, Kind.O, 0.0, 8, 8) for i in range(n)]))
    g.update(0.001)
    assert len(g.serving.waiting) == n
    return g


def test_a_picked_request_falls_next() -> None:
    g = queued(PICKING)
    events = g.update(0, [Input.PICK_3])
    third = 12
    assert g.picked == third and of(events, ev.Picked)[0].place == 2
    g.update(0, [Input.HARD_DROP])
    assert g.falling is not None and g.falling.id == third
    assert [r.id for r in g.serving.waiting] == [10, 11, 13]  # the others keep their order
    g.update(0, [Input.HARD_DROP])
    assert g.falling.id == 10  # a pick is for one request: first come, first served again


def test_a_pick_follows_its_request_when_the_queue_changes() -> None:
    g = queued(PICKING)
    g.update(0, [Input.PICK_2])
    preempted = g.serving.waiting[3]
    g.serving.waiting.remove(preempted)
    g.serving.waiting.appendleft(preempted)  # a preempted request goes back to the front
    g.update(0, [Input.HARD_DROP])
    assert g.falling.id == 11


def test_picking_is_refused_past_the_queue_and_without_the_switch() -> None:
    short = queued(PICKING, n=1)
    assert short.update(0, [Input.PICK_2]) == [] and short.picked is None
    plain = queued(RULES3)
    plain.update(0, [Input.PICK_2, Input.HARD_DROP])
    assert plain.picked is None and plain.falling.id == 10


def test_the_budget_steps_through_its_choices() -> None:
    g = Game(seed=1, mode="paged", features=RULES4)
    p = g.serving.prefill
    assert p.budget == R.DEFAULT_BUDGET
    seen = [p.budget]
    for _ in range(len(R.BUDGETS)):
        g.update(0, [Input.BUDGET_UP])
        seen.append(p.budget)
    assert seen[-1] == max(R.BUDGETS) and sorted(set(seen)) == [b for b in R.BUDGETS if b >= R.DEFAULT_BUDGET]
    events = g.update(0, [Input.BUDGET_DOWN])
    assert p.budget == R.BUDGETS[-2] and of(events, ev.BudgetSet)[0].budget == p.budget
    for _ in range(len(R.BUDGETS)):
        g.update(0, [Input.BUDGET_DOWN])
    assert p.budget == min(R.BUDGETS)
    plain = Game(seed=1, features=RULES3)
    plain.update(0)
    assert plain.update(0, [Input.BUDGET_UP]) == [] and plain.serving.prefill is None


def test_a_run_with_the_new_inputs_is_written_in_share_code_format_2() -> None:
    from engine import sharecode
    from engine.replay import Recorder

    rec = Recorder(seed=4, mode="paged")
    rec.update(16.0, [Input.LEFT])
    assert sharecode.encode(rec.finish()).startswith("vt1")  # the older format while it will do
    rec = Recorder(seed=4, mode="paged")
    rec.update(16.0, [Input.BUDGET_UP, Input.LEFT])
    rec.update(16.0, [Input.PICK_2])
    code = sharecode.encode(rec.finish())
    assert code.startswith("vt2")
    back = sharecode.decode(code)
    assert back.steps == rec.replay.steps and back.check()[1] is None
