"""Synthesized sound effects: formats, loudness, shapes, silence on failure, mute, event mapping."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from array import array
from pathlib import Path

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import pygame
import pytest

from ui import sound as sound_mod
from ui.sound import DESIGNS, EVENT_SOUNDS, FORMATS, MAX_SECONDS, NAMES, PEAK, Sound, encode, render
from tests.prockit import is_usage_error

ROOT = Path(__file__).resolve().parents[1]
REQUIRED = ("move", "rotate", "drop", "land", "split", "clear", "warning", "oom")


@pytest.fixture
def mixer(request: pytest.FixtureRequest):
    """A real (dummy-driver) mixer opened at the parametrised (rate, size, channels)."""
    rate, size, channels = request.param
    pygame.mixer.quit()
    pygame.mixer.init(frequency=rate, size=size, channels=channels)
    yield pygame.mixer.get_init()
    pygame.mixer.quit()


def decode(raw: bytes, size: int, channels: int) -> list[list[float]]:
    """Bytes in pygame's format -> per-channel floats in [-1, 1]."""
    code, scale, offset = FORMATS[size]
    values = array(code, raw)
    return [[(v - offset) / scale for v in values[c::channels]] for c in range(channels)]


def zero_crossings(samples: list[float]) -> int:
    return sum(1 for a, b in zip(samples, samples[1:]) if (a < 0) != (b < 0))


def goertzel(samples: list[float], rate: int, freq: float) -> float:
    """Energy of one frequency, without numpy."""
    w = 2 * math.pi * freq / rate
    coeff = 2 * math.cos(w)
    s1 = s2 = 0.0
    for x in samples:
        s1, s2 = x + coeff * s1 - s2, s1
    return s1 * s1 + s2 * s2 - coeff * s1 * s2


def test_every_required_effect_is_designed() -> None:
    assert set(REQUIRED) <= set(NAMES)
    assert set(NAMES) == set(DESIGNS)


@pytest.mark.parametrize("mixer", [(22050, -16, 1), (44100, -16, 2)], indirect=True)
def test_start_synthesizes_every_effect_in_the_mixer_format(mixer: tuple[int, int, int]) -> None:
    rate, size, channels = mixer
    snd = Sound(muted=False)
    assert snd.start() is None
    assert snd.available and snd.spec == mixer
    assert snd.synth_ms is not None and snd.synth_ms > 0
    for name in NAMES:
        pg_sound = snd.effects[name]
        raw = pg_sound.get_raw()
        frames = len(raw) // (2 * channels)
        assert len(raw) == frames * 2 * channels
        assert frames == len(render(name, rate))
        assert 0.03 <= pg_sound.get_length() <= MAX_SECONDS + 1e-6, name
        chans = decode(raw, size, channels)
        assert all(c == chans[0] for c in chans), "every channel carries the same signal"
        peak = max(map(abs, chans[0]))
        assert 0.2 <= peak <= PEAK + 1e-3, f"{name} peak {peak}"
        snd.play(name)  # plays on the dummy device without error
    assert pygame.mixer.get_busy()


@pytest.mark.parametrize("mixer", [(22050, 8, 1), (22050, -8, 2), (44100, 16, 2),
                                   (48000, 32, 2), (11025, -16, 1)], indirect=True)
def test_other_mixer_formats(mixer: tuple[int, int, int]) -> None:
    rate, size, channels = mixer
    snd = Sound()
    assert snd.start() is None
    itemsize = array(FORMATS[size][0]).itemsize
    for name in NAMES:
        raw = snd.effects[name].get_raw()
        assert len(raw) == len(render(name, rate)) * itemsize * channels
        peak = max(map(abs, decode(raw, size, channels)[0]))
        assert 0.2 <= peak <= PEAK + 0.01


@pytest.mark.parametrize("rate", [22050, 44100])
def test_effects_are_short_and_never_clip(rate: int) -> None:
    for name in NAMES:
        samples = render(name, rate)
        assert all(math.isfinite(v) for v in samples), name
        assert len(samples) <= MAX_SECONDS * rate, name
        peak = max(map(abs, samples))
        assert peak == pytest.approx(PEAK * DESIGNS[name][1], rel=1e-9), name
        # faded at both ends: no click when a sound starts or is cut off at its end
        assert abs(samples[0]) < 1e-9 and abs(samples[-1]) < 0.02, name


def test_effects_are_distinct() -> None:
    rendered = {name: tuple(render(name, 22050)) for name in NAMES}
    assert len(set(rendered.values())) == len(NAMES)


def test_split_sweep_rises_and_oom_falls() -> None:
    rate = 44100
    s = render("split", rate)
    q = len(s) // 4
    assert zero_crossings(s[-q:]) > 2.5 * zero_crossings(s[:q])
    crash = sound_mod.oom(rate)
    q = len(crash) // 4
    assert zero_crossings(crash[:q]) > zero_crossings(crash[-q:])


def test_clear_is_a_major_chord() -> None:
    rate = 22050
    s = render("clear", rate)
    tail = s[len(s) // 4:]  # all four notes sounding
    chord = [goertzel(tail, rate, f) for f in (523.25, 659.25, 783.99)]
    off_key = [goertzel(tail, rate, f) for f in (554.37, 622.25, 698.46, 739.99)]  # C# D# F F#
    assert min(chord) > 10 * max(off_key)


def test_warning_is_a_low_buzz_with_two_pulses() -> None:
    rate = 22050
    s = render("warning", rate)
    assert goertzel(s, rate, 147) > 10 * goertzel(s, rate, 600)
    quiet = [abs(v) < 1e-3 for v in s[int(0.125 * rate):int(0.165 * rate)]]
    assert all(quiet), "a gap separates the two pulses"


@pytest.mark.parametrize("size", sorted(FORMATS))
def test_encode_matches_reference_conversion(size: int) -> None:
    samples = [-PEAK, -0.5, -0.123, 0.0, 1e-6, 0.25, 0.6, PEAK]
    code, scale, offset = FORMATS[size]
    raw = encode(samples, size, 1)
    got = list(array(code, raw))
    if code == "f":
        assert got == pytest.approx(samples, abs=1e-7)
    else:
        assert got == [round(v * scale + offset) for v in samples]
    stereo = array(code, encode(samples, size, 2))
    assert list(stereo[0::2]) == got and list(stereo[1::2]) == got


def test_encode_gain_and_bad_format() -> None:
    assert encode([0.5], -16, 1, gain=0.5) == encode([0.25], -16, 1)
    with pytest.raises(ValueError):
        encode([0.0], 24, 1)
    with pytest.raises(ValueError):
        encode([0.0], -16, 0)


def test_no_numpy_needed() -> None:
    """The browser build starts without numpy: block it outright and play everything."""
    code = (
        "import os, sys\n"
        "os.environ['SDL_AUDIODRIVER'] = 'dummy'\n"
        "sys.modules['numpy'] = None  # any import of numpy now raises ImportError\n"
        "import pygame\n"
        "pygame.mixer.init(22050, -16, 2)\n"
        "import ui.sound as s\n"
        "snd = s.Sound()\n"
        "assert snd.start() is None, 'start failed'\n"
        "for name in s.NAMES: snd.play(name)\n"
        "print('ok', sorted(m for m in sys.modules if m.startswith('numpy')))\n"
    )
    env = dict(os.environ, PYGAME_HIDE_SUPPORT_PROMPT="1")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok ['numpy']"  # only our blocking sentinel
    source = (ROOT / "ui" / "sound.py").read_text(encoding="utf-8")
    assert "numpy" not in source.replace("no numpy", "").replace("without numpy", "")


def test_mixer_failure_means_silence_and_one_message(monkeypatch: pytest.MonkeyPatch) -> None:
    pygame.mixer.quit()

    def no_device(*args: object, **kwargs: object) -> None:
        raise pygame.error("No available audio device")

    monkeypatch.setattr(pygame.mixer, "init", no_device)
    snd = Sound(muted=False)
    message = snd.start()
    assert message is not None and "\n" not in message
    assert message == "audio unavailable (no audio device); running silent"
    assert not snd.available
    for name in NAMES:
        snd.play(name)  # no-ops, no exceptions
    assert snd.toggle_mute() is True and snd.toggle_mute() is False


def test_the_audio_drivers_own_words_become_a_players():
    from ui.sound import plain_reason

    assert plain_reason(pygame.error("ALSA: Couldn't open audio device: No such file or directory")) == "no audio device"
    assert plain_reason(RuntimeError("odd sample format")) == "odd sample format"


def test_mixer_reporting_nothing_is_a_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    pygame.mixer.quit()
    monkeypatch.setattr(pygame.mixer, "init", lambda *a, **k: None)
    msg = Sound().start()
    assert msg is not None and "silent" in msg


class RecordingSound:
    """Stands in for pygame.mixer.Sound to count plays."""

    plays: list[int] = []

    def __init__(self, buffer: bytes) -> None:
        self.buffer = buffer
        self.stopped = 0

    def play(self) -> None:
        RecordingSound.plays.append(id(self))

    def stop(self) -> None:
        self.stopped += 1


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch):
    pygame.mixer.quit()
    pygame.mixer.init(22050, -16, 1)
    RecordingSound.plays = []
    monkeypatch.setattr(pygame.mixer, "Sound", RecordingSound)
    yield RecordingSound.plays
    pygame.mixer.quit()


def test_mute_toggling(recorded: list[int]) -> None:
    snd = Sound(muted=True)
    assert snd.start() is None
    assert snd.muted is True
    snd.play("move")
    assert recorded == []
    assert snd.toggle_mute() is False and snd.muted is False
    snd.play("move")
    assert len(recorded) == 1
    assert snd.toggle_mute() is True
    assert all(s.stopped for s in snd.effects.values()), "muting silences what is playing"
    snd.play("clear")
    assert len(recorded) == 1
    snd.muted = False
    snd.play("clear")
    assert len(recorded) == 2


def test_unknown_sound_name_is_an_error(recorded: list[int]) -> None:
    snd = Sound()
    snd.start()
    with pytest.raises(ValueError):
        snd.play("explosion")


def test_start_twice_keeps_the_sounds(recorded: list[int]) -> None:
    snd = Sound()
    assert snd.start() is None
    first = dict(snd.effects)
    assert snd.start() is None
    assert dict(snd.effects) == first


# ------------------------------------------------------------------ engine events -> sounds


def test_event_table_covers_the_brief() -> None:
    types_in_table = {row[0] for row in EVENT_SOUNDS}
    assert {"Moved", "Rotated", "Locked", "PageSplit", "Finished", "Preempted", "Alert",
            "Oom", "Overloaded"} <= types_in_table
    assert {row[2] for row in EVENT_SOUNDS} <= set(NAMES)


def test_play_for_engine_events(recorded: list[int]) -> None:
    from engine import Kind
    from engine import events as ev

    snd = Sound()
    snd.start()
    lock = ev.LockResult(1, Kind.T, ((4, 20),), 0, drop_cells=0)
    hard = ev.LockResult(1, Kind.T, ((4, 20),), 0, drop_cells=12)
    table = ev.BlockTable(1, Kind.T, ((0, (1, 2)),))
    cases = [
        (ev.Moved(1, 0), "move"),
        (ev.Moved(-1, 0), "move"),
        (ev.Moved(0, 1), None),  # gravity and soft drop fall silently
        (ev.Rotated(1, 0), "rotate"),
        (ev.Locked(lock), "land"),
        (ev.Locked(hard), "drop"),
        (ev.PageSplit(table, 1), "split"),
        (ev.Finished(1, Kind.T, ((4, 20),), 30, 0), "clear"),  # the old line-clear chime
        (ev.Preempted(1, Kind.T, ((4, 20),), "swap", 3), "warning"),
        (ev.PreemptModeSwitched("swap"), "hold"),
        (ev.Grew(1, Kind.T, 2, (4, 19)), None),  # every 16 tokens of every request: silent
        (ev.Arrived(2, Kind.O, 20, 1), None),
        (ev.Alert("split_refused", "no"), "warning"),
        (ev.Held(Kind.T, None), "hold"),
        (ev.LevelUp(2), "levelup"),
        (ev.Spawned(3, Kind.I), None),
        (ev.ModeSwitched("paged"), None),
    ]
    for event, expected in cases:
        assert snd.play_for(event) == expected, event
    assert len(recorded) == sum(1 for _, e in cases if e)


def test_play_for_a_real_game(recorded: list[int]) -> None:
    from engine import Game, Input

    game = Game(seed=3, mode="paged")
    snd = Sound()
    snd.start()
    heard: list[str] = []
    for inputs in ([Input.LEFT], [Input.ROTATE_CW], [Input.HARD_DROP]):
        heard += snd.play_events(game.update(1000 / 60, inputs))
    assert heard[:3] == ["move", "rotate", "drop"]
    while game.active is None and not game.over:  # the next request arrives on its own clock
        heard += snd.play_events(game.update(100.0))
    heard += snd.play_events(game.update(0.0, [Input.SPLIT]))
    assert "split" in heard
    while not game.serving.served and not game.over:  # a request finishes by itself
        heard += snd.play_events(game.update(500.0))
    assert "clear" in heard


def test_play_events_plays_each_effect_once(recorded: list[int]) -> None:
    from engine import events as ev

    snd = Sound()
    snd.start()
    played = snd.play_events([ev.Moved(1, 0), ev.Moved(1, 0), ev.Rotated(1, 0), ev.Moved(0, 1)])
    assert played == ["move", "rotate"]
    assert len(recorded) == 2


# ------------------------------------------------------------------ command line


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ui.sound", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_cli_prints_figures_and_writes_wavs(tmp_path: Path) -> None:
    out = run_cli("--rate", "22050", "--channels", "1", "--repeat", "1", "--wav", str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert "ms" in out.stdout and "synthesized" in out.stdout
    assert sorted(p.stem for p in tmp_path.glob("*.wav")) == sorted(NAMES)


@pytest.mark.parametrize("args", [("--rate", "5"), ("--size", "24"), ("--channels", "0"),
                                  ("--repeat", "x"), ("--bogus",)])
def test_cli_bad_arguments_exit_2(args: tuple[str, ...]) -> None:
    out = run_cli(*args)
    assert out.returncode == 2
    assert is_usage_error(out.stderr), out.stderr


@pytest.mark.parametrize("args", [("--wav", ""), ("--wav", "/proc/version/x"), ("--repeat", "1000001"),
                                  ("--rep", "2"), ("--wav", "README.md")])
def test_cli_bad_outputs_and_bounds_exit_2_before_work(args: tuple[str, ...]) -> None:
    out = run_cli(*args)
    assert out.returncode == 2, out.stdout + out.stderr
    assert "Traceback" not in out.stderr and out.stdout == ""
    assert out.stderr.strip().splitlines()[-1].startswith("python -m ui.sound: error: ")


def test_cli_help_shows_defaults_and_maxima() -> None:
    out = run_cli("--help")
    assert out.returncode == 0 and "(default: 44100)" in out.stdout and "at most 1000" in out.stdout
    assert "pygame" not in out.stdout.split("usage")[0].lower()
