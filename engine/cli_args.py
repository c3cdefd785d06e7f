"""Conventions shared by every command-line tool (standard library only).

- Parsing: `parser()` gives an OneLineParser: argparse with abbreviations refused (`--seed` never
  silently becomes `--seeds`) and defaults shown in --help. Bad input is one line on stderr,
  `PROG: error: WHAT (try PROG --help)`, naming the option the user gave, exit status 2, never a
  traceback (`usage_error` says the same for a check a tool makes after parsing).
- Failures: a run that cannot go on (a file that cannot be read, a build that cannot start) is
  one line, `PROG: error: WHAT`, exit status 1 (`failure`).
- Values: `whole`, `number`, `listing` check type and bounds; `output_file` and `output_dir`
  check that a path can be written *before* the work starts, so a long run never ends in an
  error about where its result should go.
- Bounds: counts and sizes have documented maxima (each tool names its own); `Progress` shows how
  far a long run is on a terminal (and stays silent when the output is a file or a pipe).
- Signals: `run()` stops a tool within a second on SIGINT or SIGTERM with exit status 130 or 143
  and no traceback; a closed pipe or a full disk on standard output ends it with one line.
"""

from __future__ import annotations

import argparse
import errno
import os
import re
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TextIO, TypeVar

EXIT_FAILURE = 1
EXIT_USAGE = 2
T = TypeVar("T")
SIGINT, SIGTERM = 2, 15  # the same numbers on every platform Python runs on
# (getattr: a WebAssembly build of Python may lack some of them; there the page stops the game)
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM") if hasattr(signal, name))


# --------------------------------------------------------------------------- parsing


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help, with "(default: X)" after every option that has a meaningful default."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if ("default" in text.lower() or default is None or default is argparse.SUPPRESS
                or isinstance(default, bool) or action.nargs == 0 or not action.option_strings):
            return text
        shown = ",".join(map(str, default)) if isinstance(default, (list, tuple)) else "%(default)s"
        return f"{text} (default: {shown})" if text else f"default: {shown}"


def one_line(message: str, most: int = 400) -> str:
    """`message` as a single line of at most `most` characters."""
    text = " ".join(str(message).split())
    return text if len(text) <= most else text[:most - 3] + "..."


def usage_message(prog: str, message: str) -> str:
    """The one format of a bad command line: `PROG: error: WHAT (try PROG --help)`."""
    return f"{prog}: error: {one_line(message)} (try {prog} --help)"


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose bad input is one line on stderr (no usage block), exit status 2.

    Subcommand parsers made by add_subparsers are OneLineParsers too (argparse makes them of the
    parent's class), each with its own PROG."""

    def error(self, message: str) -> NoReturn:
        print(usage_message(self.prog, message), file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def parser(prog: str, description: str | None = None, **kwargs: Any) -> OneLineParser:
    """The project's one argument parser (an OneLineParser with defaults shown in --help)."""
    kwargs.setdefault("formatter_class", HelpFormatter)
    kwargs.setdefault("allow_abbrev", False)
    return OneLineParser(prog=prog, description=description, **kwargs)


def usage_error(prog: str, message: str) -> SystemExit:
    """Print a bad-command-line error in the one format; return the exit (status 2) to raise."""
    print(usage_message(prog, message), file=sys.stderr)
    return SystemExit(EXIT_USAGE)


def failure(prog: str, message: str, most: int = 400) -> int:
    """Print a runtime failure as one line, `PROG: error: WHAT`; return exit status 1."""
    print(f"{prog}: error: {one_line(message, most)}", file=sys.stderr)
    return EXIT_FAILURE


# --------------------------------------------------------------------------- values


# The one grammar of numbers on every command line: plain decimal digits, an optional minus
# sign, and for numbers that need not be whole one decimal point. No underscores, exponents,
# signs of plus, spaces, other scripts' digits, inf or nan (which int() and float() would take).
_WHOLE = re.compile(r"-?[0-9]+")
_DECIMAL = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")


def whole(lo: int | None = None, hi: int | None = None) -> Callable[[str], int]:
    """A whole number within [lo, hi]."""
    def parse(text: str) -> int:
        if len(text) > 30 or not _WHOLE.fullmatch(text):
            raise argparse.ArgumentTypeError(f"expected a whole number in plain digits, got {text[:40]!r}")
        value = int(text)
        if lo is not None and value < lo:
            raise argparse.ArgumentTypeError(f"must be at least {lo:,}, got {value:,}")
        if hi is not None and value > hi:
            raise argparse.ArgumentTypeError(f"must be at most {hi:,}, got {value:,}")
        return value
    return parse


def number(lo: float | None = None, hi: float | None = None, *,
           above: bool = False) -> Callable[[str], float]:
    """A finite number within [lo, hi] (or (lo, hi] with above=True)."""
    def parse(text: str) -> float:
        if len(text) > 40 or not _DECIMAL.fullmatch(text):
            raise argparse.ArgumentTypeError(f"expected a number in plain digits (such as 2 or 0.5), "
                                             f"got {text[:40]!r}")
        value = float(text) + 0.0  # + 0.0 turns -0 into 0
        if lo is not None and (value <= lo if above else value < lo):
            raise argparse.ArgumentTypeError(
                f"must be {'above' if above else 'at least'} {lo:g}, got {text[:40]}")
        if hi is not None and value > hi:
            raise argparse.ArgumentTypeError(f"must be at most {hi:g}, got {text[:40]}")
        return value
    return parse


def listing(item: Callable[[str], T], most: int | None = None) -> Callable[[str], list[T]]:
    """A comma-separated list of `item` values (at most `most` of them)."""
    def parse(text: str) -> list[T]:
        parts = [p.strip() for p in text.split(",")]
        if not any(parts):
            raise argparse.ArgumentTypeError("expected a comma-separated list, got nothing")
        if not all(parts):
            raise argparse.ArgumentTypeError(f"an empty item in the list {text[:40]!r}")
        if most is not None and len(parts) > most:
            raise argparse.ArgumentTypeError(f"at most {most} values, got {len(parts)}")
        return [item(p) for p in parts]
    return parse


def _writable_folder(folder: Path) -> None:
    if not folder.exists():
        raise argparse.ArgumentTypeError(f"folder {str(folder)!r} does not exist")
    if not folder.is_dir():
        raise argparse.ArgumentTypeError(f"{str(folder)!r} is not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"cannot write in folder {str(folder)!r}")


def check_output_file(text: str, suffixes: tuple[str, ...] = ()) -> Path:
    """The one output-path check: `text` names a file this process can create or replace.

    Raises argparse.ArgumentTypeError with a one-line reason. `suffixes` (lower case, with the
    dot) are the only name endings accepted, so a picture is never written in a format nobody
    asked for because the name ended in .txt.
    """
    if not text or not text.strip() or "\0" in text:
        raise argparse.ArgumentTypeError("expected a file name, got nothing")
    path = Path(text).expanduser()
    if suffixes and path.suffix.lower() not in suffixes:
        raise argparse.ArgumentTypeError(
            f"must name a {' or '.join(suffixes)} file, got {text[:80]!r}")
    if path.is_dir() or text.endswith(("/", os.sep)):
        raise argparse.ArgumentTypeError(f"{text[:80]!r} is a folder, not a file")
    _writable_folder(path.parent if str(path.parent) else Path("."))
    if path.exists() and not os.access(path, os.W_OK):
        raise argparse.ArgumentTypeError(f"cannot replace {text[:80]!r}: not writable")
    return path


def check_output_dir(text: str) -> Path:
    """`text` names a folder that exists or can be made, and files can be written in it."""
    if not text or not text.strip() or "\0" in text:
        raise argparse.ArgumentTypeError("expected a folder name, got nothing")
    path = Path(text).expanduser()
    if path.exists():
        _writable_folder(path)
        return path
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    _writable_folder(parent)
    return path


def output_file(*suffixes: str) -> Callable[[str], Path]:
    """argparse type: a writable output file (see check_output_file)."""
    wanted = tuple(s.lower() for s in suffixes)
    return lambda text: check_output_file(text, wanted)


def output_dir() -> Callable[[str], Path]:
    """argparse type: a writable output folder (see check_output_dir)."""
    return check_output_dir


# --------------------------------------------------------------------------- progress


class Progress:
    """A one-line progress counter on a terminal's standard error; silent otherwise.

    Long runs (thousands of games, millions of frames) say how far they are, so a user can tell a
    slow run from a stuck one. Output redirected to a file or a pipe stays clean.
    """

    def __init__(self, label: str, total: int, *, stream: TextIO | None = None,
                 every_s: float = 0.5, clock: Callable[[], float] = time.monotonic) -> None:
        self.label = label
        self.total = max(1, total)
        self.stream = stream if stream is not None else sys.stderr
        self.every_s = every_s
        self.clock = clock
        self.shown = False
        self._next = clock() + every_s
        try:
            self.enabled = bool(self.stream is not None and self.stream.isatty())
        except (AttributeError, ValueError, OSError):
            self.enabled = False

    def update(self, done: int) -> None:
        if not self.enabled or self.clock() < self._next:
            return
        self._next = self.clock() + self.every_s
        self._write(f"\r{self.label}: {done:,}/{self.total:,} ({done / self.total:.0%}) ")
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self._write("\r" + " " * 60 + "\r")
            self.shown = False

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            self.enabled = False


# --------------------------------------------------------------------------- signals and exits


class Stopped(BaseException):
    """SIGINT or SIGTERM asked the tool to stop. Not an Exception: no `except Exception` eats it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def status(self) -> int:
        """The shell's convention: 128 + signal number (130 for SIGINT, 143 for SIGTERM)."""
        return 128 + self.signum


def exit_status(signum: int) -> int:
    return 128 + int(signum)


def stop_on_signals(on_signal: Callable[[int], None] | None = None) -> None:
    """SIGINT and SIGTERM stop this process: by raising Stopped where it runs (the default), or by
    calling `on_signal(signum)` for a loop that checks a flag each frame and cleans up first.

    Python checks for signals between bytecodes, so a busy loop stops at once. Installed before
    SDL starts, these handlers are left alone by SDL (it only takes signals nobody handles).
    """
    def raise_stop(signum: int, frame: object) -> None:
        # A C library may clear the exception (pygame's init calls do), so the request is repeated
        # every 0.1 s until run() honours it and disarms the timer.
        if hasattr(signal, "setitimer"):
            signal.signal(signal.SIGALRM, lambda _s, _f: raise_stop(signum, None))
            signal.setitimer(signal.ITIMER_REAL, 0.1, 0.1)
        raise Stopped(signum)

    def call(signum: int, frame: object) -> None:
        assert on_signal is not None
        on_signal(signum)

    handler = raise_stop if on_signal is None else call
    if on_signal is None:
        _quiet_lost_stops()
    for sig in STOP_SIGNALS:
        try:
            signal.signal(sig, handler)
        except (ValueError, OSError):  # not the main thread, or no signals (the browser)
            pass


def _quiet_lost_stops() -> None:
    """A Stopped raised where Python cannot pass it on (a weak reference's callback during an
    import, a destructor) is dropped, not printed as "Exception ignored": the timer repeats the
    request until it lands where run() can honour it. Anything else is reported as before."""
    before = sys.unraisablehook
    if getattr(before, "quiet_stops", False):
        return

    def hook(unraisable: Any) -> None:
        if not isinstance(unraisable.exc_value, Stopped):
            before(unraisable)

    hook.quiet_stops = True  # type: ignore[attr-defined]
    sys.unraisablehook = hook


def disarm_stop_repeats() -> None:
    """The stop request was honoured: no more repeats of it (see stop_on_signals)."""
    if hasattr(signal, "setitimer"):
        try:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, signal.SIG_IGN)
        except (ValueError, OSError):
            pass


def quiet_stdout() -> None:
    """Point standard output at /dev/null, so the interpreter's last flush cannot fail too."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, AttributeError, ValueError):
        pass


def run(main: Callable[..., int | None], *args: Any, prog: str | None = None) -> int:
    """Run a tool's main under the shared policy and return its exit status.

    SIGINT/SIGTERM -> 130/143 without a traceback; a reader that went away (`| head`) -> quiet,
    status 1; a full disk or closed stream on standard output -> one line, status 1.
    """
    name = prog or Path(sys.argv[0]).name
    stop_on_signals()
    try:
        code = main(*args)
        if sys.stdout is not None:
            sys.stdout.flush()
        return 0 if code is None else int(code)
    except Stopped as stop:
        disarm_stop_repeats()
        return stop.status
    except KeyboardInterrupt:
        return exit_status(SIGINT)
    except BrokenPipeError:
        quiet_stdout()
        return 1
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EBADF, errno.EFBIG):
            raise
        quiet_stdout()
        try:
            print(f"{name}: error: cannot write output: {exc.strerror or exc}", file=sys.stderr)
        except (OSError, ValueError):
            pass
        return 1
