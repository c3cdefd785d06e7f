"""Sound effects synthesized at start-up: no audio files to ship, no numpy in the browser.

Every effect is computed with the standard library (math, random, array) at the exact rate,
sample format and channel count the mixer reports, then handed to pygame as a raw buffer.
If the mixer cannot start (no audio device, or a browser that has not been clicked yet) the
game runs silent: `start()` returns one line for the log and every `play()` is a no-op.

`python -m ui.sound` prints how long synthesis takes; `--wav DIR` writes the effects as WAV.
"""

from __future__ import annotations

import math
import operator
import random
import sys
import time
from array import array
from collections.abc import Callable, Generator, Iterable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

TAU = 2.0 * math.pi
PEAK = 0.85  # full-scale fraction the loudest sample of any effect may reach: never clip
EDGE_MS = 4.0  # fade in/out at both ends so no effect starts or stops with a click
MIXER_BUFFER = 1024  # samples; small enough to feel immediate, large enough for wasm

Samples = list[float]


# --------------------------------------------------------------------------- building blocks
# Pure Python runs roughly one operation per sample per pass, so the effects are built from a
# few cheap passes: fixed-pitch tones repeat one precomputed period (list repetition runs in C),
# envelopes grow block by block, and only glides evaluate sin() per sample.

Partials = tuple[tuple[int, float], ...]  # (harmonic number, amplitude)


def _n(rate: int, ms: float) -> int:
    return int(rate * ms / 1000.0)


def _periodic(rate: int, base: float, ms: float, partials: Partials = ((1, 1.0),),
              drive: float = 0.0) -> Samples:
    """A steady tone: a whole number of periods of `base` computed once, then repeated.

    The table spans as many cycles (up to 8) as it takes to land within 0.1 % of the pitch,
    so chords stay in tune at any rate. `partials` are integer harmonics of `base`; `drive` > 0
    pushes the wave through tanh for a square-ish buzz.
    """
    n = _n(rate, ms)
    exact = rate / base
    cycles, length = 1, max(2, round(exact))
    for c in range(1, 9):
        candidate = max(2, round(c * exact))
        if abs(candidate / c - exact) < abs(length / cycles - exact):
            cycles, length = c, candidate
        if abs(length / cycles - exact) <= 0.001 * exact:
            break
    sin, tanh = math.sin, math.tanh
    step = TAU * cycles / length
    table = [sum(a * sin(step * h * k) for h, a in partials) for k in range(min(length, n))]
    if drive:
        table = [tanh(drive * v) for v in table]
    return (table * (n // len(table) + 1))[:n] if table else []


def _glide(rate: int, f0: float, f1: float, ms: float, partials: Partials = ((1, 1.0),),
           drive: float = 0.0) -> Samples:
    """A tone whose pitch moves linearly from f0 to f1 (phase = integral of frequency)."""
    n = _n(rate, ms)
    a = TAU * f0 / rate
    b = math.pi * (f1 - f0) / (rate * max(n, 1))
    sin, tanh = math.sin, math.tanh
    phases = [k * (a + b * k) for k in range(n)]
    (h0, a0), *rest = partials
    wave = [a0 * sin(h0 * p) for p in phases] if (h0, a0) != (1, 1.0) else [sin(p) for p in phases]
    for h, amp in rest:
        wave = [w + amp * sin(h * p) for w, p in zip(wave, phases)]
    if drive:
        wave = [tanh(drive * v) for v in wave]
    return wave


def _decay(rate: int, n: int, tau_ms: float) -> Samples:
    """exp(-t/tau) for n samples, built 256 samples at a time by multiplication."""
    factor = math.exp(-1000.0 / (rate * tau_ms))
    block = [factor ** k for k in range(min(n, 256))]
    out = block[:]
    step = factor ** len(block) if block else 1.0
    while len(out) < n:
        block = [v * step for v in block]
        out += block
    return out[:n]


def _shaped(samples: Samples, envelope: Samples) -> Samples:
    return list(map(operator.mul, samples, envelope))


def _ping(rate: int, base: float, ms: float, tau_ms: float, partials: Partials = ((1, 1.0),),
          drive: float = 0.0) -> Samples:
    """A struck tone: steady pitch, exponential decay."""
    tone = _periodic(rate, base, ms, partials, drive)
    return _shaped(tone, _decay(rate, len(tone), tau_ms))


def _mix(*parts: tuple[Samples, float, float], rate: int) -> Samples:
    """Sum (samples, gain, start_ms) parts into one buffer long enough for all of them."""
    n = max(_n(rate, start) + len(s) for s, _, start in parts)
    out = [0.0] * n
    add = operator.add
    for samples, gain, start in parts:
        if gain != 1.0:
            samples = [gain * v for v in samples]
        off = _n(rate, start)
        end = off + len(samples)
        out[off:end] = list(map(add, out[off:end], samples))
    return out


def _noise(n: int, seed: int) -> Samples:
    rnd = random.Random(seed).random
    return [2.0 * rnd() - 1.0 for _ in range(n)]


def _lowpass(samples: Samples, rate: int, f_start: float, f_end: float) -> Samples:
    """One-pole low-pass whose cutoff glides exponentially from f_start to f_end."""
    n = len(samples)
    block = 64  # the cutoff moves per block: inaudible, and one exp() per 64 samples
    ratio = (f_end / f_start) ** (block / max(1, n))
    f = f_start
    y = 0.0
    out: Samples = []
    append = out.append
    for begin in range(0, n, block):
        a = 1.0 - math.exp(-TAU * f / rate)
        for x in samples[begin:begin + block]:
            y += a * (x - y)
            append(y)
        f *= ratio
    return out


def _edges(samples: Samples, rate: int) -> Samples:
    """Short linear fade at both ends, in place, so nothing starts or stops with a click."""
    m = min(len(samples) // 2, _n(rate, EDGE_MS))
    for k in range(m):
        g = k / m
        samples[k] *= g
        samples[-1 - k] *= g
    return samples


# --------------------------------------------------------------------------- the effects

def move(rate: int) -> Samples:
    """A short blip: a request's candidate range shifted one column."""
    return _ping(rate, 880, 45, 14, ((1, 1.0), (2, 0.25)))


def rotate(rate: int) -> Samples:
    """Two quick rising tones."""
    lo = _ping(rate, 620, 55, 30, drive=1.6)
    hi = _ping(rate, 930, 65, 30, drive=1.6)
    return _mix((lo, 1.0, 0), (hi, 1.0, 50), rate=rate)


def drop(rate: int) -> Samples:
    """A thud: a falling low sine plus a brief filtered noise hit."""
    body = _glide(rate, 170, 40, 190)
    body = _shaped(body, _decay(rate, len(body), 60))
    hit = _lowpass(_noise(_n(rate, 25), 7), rate, 900, 900)
    hit = _shaped(hit, _decay(rate, len(hit), 8))
    return _mix((body, 1.0, 0), (hit, 0.6, 0), rate=rate)


def land(rate: int) -> Samples:
    """A soft low tap (G3 with a fifth above): the request was committed."""
    return _ping(rate, 98, 90, 28, ((2, 1.0), (3, 0.5)))


def split(rate: int) -> Samples:
    """A rising sweep with a shimmer on top: one request scattering into pages."""
    tone = _glide(rate, 280, 1500, 360, ((1, 1.0), (2, 0.3)))
    n = len(tone)
    shimmer = _periodic(rate, 24, 360)  # tremolo
    rise, fall = n // 4, (2 * n) // 5  # swell in over the first quarter, taper over the last 40 %
    swell = ([k / rise for k in range(rise)] + [1.0] * (n - rise - fall)
             + [1.0 - k / fall for k in range(fall)])
    env = [w * (1.0 - 0.175 * (1.0 + s)) for w, s in zip(swell, shimmer)]
    return _shaped(tone, env)


def clear(rate: int) -> Samples:
    """A C-major chord arpeggiated into place: a batch finished, its memory came back."""
    notes = (523.25, 659.25, 783.99, 1046.50)  # C5 E5 G5 C6
    parts = [(_ping(rate, f, 520 - 45 * i, 190, ((1, 1.0), (2, 0.2))), 1.0, 45.0 * i)
             for i, f in enumerate(notes)]
    return _mix(*parts, rate=rate)


def warning(rate: int) -> Samples:
    """Two buzzing square pulses: something was refused, but the game goes on."""
    pulse = _periodic(rate, 147, 120, drive=6.0)
    beat = _periodic(rate, 30, 120)  # amplitude flutter: the buzz
    pulse = _edges([p * (0.75 + 0.25 * b) for p, b in zip(pulse, beat)], rate)
    return _mix((pulse, 1.0, 0), (pulse, 1.0, 170), rate=rate)


def oom(rate: int) -> Samples:
    """A noisy descending crash: the allocator ran out of memory."""
    n = _n(rate, 600)
    noise = _lowpass(_noise(n, 13), rate, 5000, 150)
    growl = _glide(rate, 220, 35, 600, drive=3.0)
    body = _mix((noise, 1.0, 0), (growl, 0.45, 0), rate=rate)
    return _shaped(body, _decay(rate, len(body), 230))


def hold(rate: int) -> Samples:
    """Two falling notes: the request was preempted to the hold queue."""
    a = _ping(rate, 784, 50, 25)
    b = _ping(rate, 523, 60, 25)
    return _mix((a, 1.0, 0), (b, 1.0, 40), rate=rate)


def levelup(rate: int) -> Samples:
    """A quick rising arpeggio: the request rate went up (also the victory jingle)."""
    notes = (523.25, 659.25, 783.99, 1046.50)
    parts = [(_ping(rate, f, 110, 60, drive=1.4), 1.0, 70.0 * i) for i, f in enumerate(notes)]
    return _mix(*parts, rate=rate)


# name -> (synthesizer, loudness relative to PEAK). Rules are data: every effect lives here.
DESIGNS: MappingProxyType[str, tuple[Callable[[int], Samples], float]] = MappingProxyType({
    "move": (move, 0.30),
    "rotate": (rotate, 0.28),
    "drop": (drop, 0.95),
    "land": (land, 0.45),
    "split": (split, 0.50),
    "clear": (clear, 0.60),
    "warning": (warning, 0.38),
    "oom": (oom, 0.90),
    "hold": (hold, 0.35),
    "levelup": (levelup, 0.45),
})
NAMES: tuple[str, ...] = tuple(DESIGNS)
MAX_SECONDS = 0.6


def _raw(name: str, rate: int) -> tuple[Samples, float]:
    """The shaped, click-free effect and the gain that brings its peak to PEAK * its level."""
    synth, level = DESIGNS[name]
    samples = _edges(synth(rate), rate)
    peak = max(max(samples), -min(samples)) or 1.0
    return samples, PEAK * level / peak


def render(name: str, rate: int) -> Samples:
    """The finished mono effect as floats in [-PEAK, PEAK]."""
    samples, gain = _raw(name, rate)
    return [v * gain for v in samples]


# --------------------------------------------------------------------------- sample formats

# pygame.mixer.get_init() size -> (array typecode, full scale, offset). pygame reports signed
# formats as negative bit counts and float32 as -32.
FORMATS: MappingProxyType[int, tuple[str, float, float]] = MappingProxyType({
    8: ("B", 127.0, 128.0),
    -8: ("b", 127.0, 0.0),
    16: ("H", 32767.0, 32768.0),
    -16: ("h", 32767.0, 0.0),
    32: ("f", 1.0, 0.0),
    -32: ("f", 1.0, 0.0),
})

# Adding 1.5 * 2**52 to a float of magnitude < 2**31 leaves that number, rounded to an integer,
# in the low bits of the double's mantissa; reading those bytes back is a C-speed float->int
# conversion, several times faster than int() per sample.
_ROUNDER = 1.5 * 2.0 ** 52


def _to_ints(values: Samples, code: str) -> array:
    doubles = array("d", values)
    narrow = array(code, doubles.tobytes())
    per = doubles.itemsize // narrow.itemsize
    first = 0 if sys.byteorder == "little" else per - 1
    return narrow[first::per]


def encode(samples: Samples, size: int, channels: int, gain: float = 1.0) -> bytes:
    """Raw interleaved PCM in the mixer's own format (native byte order, as SDL's *SYS formats).

    `gain` scales on the way, saving a pass over the samples.
    """
    try:
        code, scale, offset = FORMATS[size]
    except KeyError:
        raise ValueError(f"unsupported mixer sample size {size}") from None
    if channels < 1:
        raise ValueError(f"channel count must be positive, not {channels}")
    mono: array[Any]
    if code == "f":
        mono = array("f", samples if gain == 1.0 else [v * gain for v in samples])
    else:
        scale *= gain
        shift = offset + _ROUNDER
        mono = _to_ints([v * scale + shift for v in samples], code)
    if channels == 1:
        return mono.tobytes()
    out: array[Any] = array(code, bytes(mono.itemsize * len(mono) * channels))
    for c in range(channels):
        out[c::channels] = mono
    return out.tobytes()


def synthesize_all(rate: int, size: int, channels: int) -> dict[str, bytes]:
    """Every effect as raw PCM for a mixer running at (rate, size, channels)."""
    out = {}
    for name in NAMES:
        samples, gain = _raw(name, rate)
        out[name] = encode(samples, size, channels, gain)
    return out


# --------------------------------------------------------------------------- events -> sounds


def _horizontal(event: Any) -> bool:
    return getattr(event, "dx", 0) != 0  # gravity and soft drop move down silently


def _hard_dropped(event: Any) -> bool:
    return getattr(getattr(event, "result", None), "drop_cells", 0) > 0


# (event class name, condition or None, sound); the first matching row wins. Names rather than
# classes keep this module free of the engine: any event type with these names will do.
EVENT_SOUNDS: tuple[tuple[str, Callable[[Any], bool] | None, str], ...] = (
    ("Moved", _horizontal, "move"),
    ("Rotated", None, "rotate"),
    ("Locked", _hard_dropped, "drop"),
    ("Locked", None, "land"),
    ("PageSplit", None, "split"),
    ("Finished", None, "clear"),  # a request done: its blocks are freed (the old line-clear chime)
    ("Preempted", None, "warning"),
    ("PreemptModeSwitched", None, "hold"),
    ("Alert", None, "warning"),
    ("Oom", None, "oom"),
    ("Overloaded", None, "oom"),
    ("Held", None, "hold"),
    ("LevelUp", None, "levelup"),
    ("Victory", None, "levelup"),
)


def sound_for(event: object) -> str | None:
    """The effect an engine event should make, or None for silent events."""
    type_name = type(event).__name__
    for name, condition, sound in EVENT_SOUNDS:
        if name == type_name and (condition is None or condition(event)):
            return sound
    return None


# --------------------------------------------------------------------------- the player


def plain_reason(exc: Exception) -> str:
    """Why the mixer could not start, in words a player reads ("no audio device"), not the audio
    driver's own line ("ALSA: Couldn't open audio device: No such file or directory")."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    low = text.lower()
    if "audio device" in low or "no available audio" in low or "alsa" in low or "pulse" in low:
        return "no audio device"
    return text


class Sound:
    """The game's sound effects; silent (never failing) when no mixer is available."""

    def __init__(self, muted: bool = False) -> None:
        self._muted = muted
        self._sounds: dict[str, Any] = {}
        self.spec: tuple[int, int, int] | None = None
        self.synth_ms: float | None = None  # measured synthesis time of all effects

    def start(self) -> str | None:
        """Open the mixer if needed and synthesize every effect; a log line if audio is off.

        Safe to call again, e.g. on the first click in a browser that refused audio before it:
        once the effects exist it does nothing, while silent it tries again.
        """
        steps = self.start_steps()
        while True:
            try:
                next(steps)
            except StopIteration as done:
                return done.value

    def start_steps(self) -> Generator[None, None, str | None]:
        """start(), one effect per step: the game loop advances it once a frame, so a slow
        interpreter (the browser's) never freezes a frame for the whole synthesis.

        Returns (as StopIteration.value) what start() returns.
        """
        if self._sounds:
            return None
        try:
            import pygame

            if not pygame.mixer.get_init():
                pygame.mixer.init(buffer=MIXER_BUFFER)
            spec = pygame.mixer.get_init()
            if not spec:
                raise RuntimeError("mixer did not initialise")
        except Exception as exc:  # pygame.error, missing module: play on silent
            return self._silent(exc)
        rate, size, channels = spec
        sounds: dict[str, Any] = {}
        spent = 0.0
        for name in NAMES:
            yield
            begin = time.perf_counter()
            try:
                samples, gain = _raw(name, rate)
                sounds[name] = pygame.mixer.Sound(buffer=encode(samples, size, channels, gain))
            except Exception as exc:  # an odd sample format: play on silent
                return self._silent(exc)
            spent += time.perf_counter() - begin
        self.synth_ms = spent * 1000.0
        self.spec = (rate, size, channels)
        self._sounds = sounds
        return None

    def _silent(self, exc: Exception) -> str:
        self._sounds = {}
        return f"audio unavailable ({plain_reason(exc)}); running silent"

    @property
    def available(self) -> bool:
        return bool(self._sounds)

    @property
    def muted(self) -> bool:
        return self._muted

    @muted.setter
    def muted(self, value: bool) -> None:
        self._muted = bool(value)
        if self._muted:
            self._stop_all()

    def toggle_mute(self) -> bool:
        """Flip mute; returns the new state (True = muted) for the caller to persist."""
        self.muted = not self._muted
        return self._muted

    @property
    def effects(self) -> Mapping[str, Any]:
        """The mixer sounds made by start(), by effect name (empty while silent); read-only."""
        return MappingProxyType(self._sounds)

    def play(self, name: str) -> None:
        if name not in DESIGNS:
            raise ValueError(f"unknown sound {name!r}; known: {', '.join(NAMES)}")
        if self._muted or not self._sounds:
            return
        try:
            self._sounds[name].play()
        except Exception:  # a device that vanished mid-game must not end it
            pass

    def play_for(self, event: object) -> str | None:
        """Play the sound an engine event calls for; returns its name (None if silent)."""
        name = sound_for(event)
        if name is not None:
            self.play(name)
        return name

    def play_events(self, events: Iterable[object]) -> list[str]:
        """Play one step's events, each distinct effect once (a tetris is one chord, not four)."""
        played: list[str] = []
        for event in events:
            name = sound_for(event)
            if name is not None and name not in played:
                played.append(name)
                self.play(name)
        return played

    def _stop_all(self) -> None:
        for snd in self._sounds.values():
            try:
                snd.stop()
            except Exception:
                pass


# --------------------------------------------------------------------------- command line


# The suffix is kept apart from its dot: pygbag's optimiser (plain `pygbag .`) rewrites every
# module with a dot-wav string literal into a "-pygbag" copy beside it, in the source tree.
WAV = "wav"


def _write_wav(path: Path, samples: Samples, rate: int) -> None:
    import wave  # command line only: the browser's trimmed stdlib need not have it

    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(array("h", [int(s * 32767) for s in samples]).tobytes())


MAX_REPEAT = 1000  # timed runs of the whole set (each a few tens of milliseconds)


def main(argv: list[str] | None = None) -> int:
    from engine import cli_args  # command line only

    parser = cli_args.parser(
        "python -m ui.sound", "Synthesize every sound effect and print how long it takes.")
    parser.add_argument("--rate", type=cli_args.whole(8000, 192000), default=44100, help="sample rate in Hz")
    parser.add_argument("--size", type=cli_args.whole(), default=-16, choices=sorted(FORMATS),
                        help="pygame sample size (-16: signed 16-bit)")
    parser.add_argument("--channels", type=cli_args.whole(1, 8), default=2, help="channel count")
    parser.add_argument("--repeat", type=cli_args.whole(1, MAX_REPEAT), default=5,
                        help=f"timed runs, at most {MAX_REPEAT}")
    parser.add_argument("--wav", type=cli_args.output_dir(), help="also write each effect into DIR as a NAME.wav file")
    args = parser.parse_args(argv)
    if args.wav is not None:
        try:
            args.wav.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            parser.error(f"argument --wav: cannot make folder {str(args.wav)!r}: {exc.strerror or exc}")

    wall: list[float] = []
    cpu: list[float] = []  # process time: what a busy machine's other jobs do not inflate
    progress = cli_args.Progress("timed runs", args.repeat)
    for n in range(args.repeat):
        begin, begin_cpu = time.perf_counter(), time.process_time()
        synthesize_all(args.rate, args.size, args.channels)
        wall.append((time.perf_counter() - begin) * 1000.0)
        cpu.append((time.process_time() - begin_cpu) * 1000.0)
        progress.update(n + 1)
    progress.close()
    wall.sort()
    cpu.sort()
    mid = args.repeat // 2
    print(f"synthesized {len(NAMES)} effects at {args.rate} Hz, size {args.size}, "
          f"{args.channels} ch over {args.repeat} runs: wall median {wall[mid]:.1f} ms "
          f"(best {wall[0]:.1f}), cpu median {cpu[mid]:.1f} ms")
    for name in NAMES:
        begin = time.perf_counter()
        samples = render(name, args.rate)
        ms = (time.perf_counter() - begin) * 1000.0
        print(f"  {name:<8} {len(samples) / args.rate * 1000:6.0f} ms long  {ms:6.1f} ms to make")
        if args.wav:
            try:
                _write_wav(args.wav / f"{name}.{WAV}", samples, args.rate)
            except OSError as exc:
                print(f"python -m ui.sound: error: cannot write {args.wav / name}.{WAV}: {exc.strerror or exc}",
                      file=sys.stderr)
                return 1
    if args.wav:
        print(f"wrote {len(NAMES)} WAV files to {args.wav}")
    return 0


if __name__ == "__main__":
    from engine.cli_args import run

    sys.exit(run(main, prog="python -m ui.sound"))
