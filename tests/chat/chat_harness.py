"""What the chat tests share: the scripted model's script, and a real terminal: a private tmux server (80x24) running one command,
driven with `send-keys` and read with `capture-pane`.

Waits are on screen content with a deadline (polling every 50 ms), never fixed sleeps.
`save` keeps a screen (plain and with its colours) under the test's tmp dir.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import time
import uuid
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent / "chat-script.json"


class Term:
    def __init__(
        self, argv: list[str], *, env: dict[str, str], cwd: Path, artifacts: Path, width: int = 80, height: int = 24
    ) -> None:
        self.socket = f"tether-chat-test-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.artifacts = artifacts
        command = f'{shlex.join(argv)}; echo "[exited $?]"; sleep 3600'
        self._tmux(
            "new-session", "-d", "-s", "chat", "-x", str(width), "-y", str(height), "-c", str(cwd), command, env=env
        )
        self.socket_path = Path(self._tmux("display-message", "-p", "#{socket_path}").strip())

    def _tmux(self, *args: str, env: dict[str, str] | None = None) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=20,
        )
        if done.returncode != 0:
            raise AssertionError(f"tmux {args[0]} failed: {done.stderr.strip()}")
        return done.stdout

    def screen(self, *, colours: bool = False) -> str:
        """The visible 80x24 screen (with its escape sequences when ``colours``)."""
        return self._tmux("capture-pane", "-p", "-t", "chat", *(["-e"] if colours else []))

    def everything(self) -> str:
        """The screen and its scrollback, wrapped lines joined."""
        return self._tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "chat")

    def wait_for(self, text: str, *, timeout: float = 30.0, absent: str | None = None) -> str:
        deadline = time.monotonic() + timeout
        while True:
            seen = self.everything()
            if text in seen and (absent is None or absent not in seen):
                return seen
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} not on the screen within {timeout} s; the screen:\n{seen}")
            time.sleep(0.05)

    def wait_on_screen(self, text: str, *, regex: bool = False, colours: bool = False, timeout: float = 15.0) -> str:
        """The visible screen once it shows ``text`` (a regular expression when ``regex``;
        with its escape sequences when ``colours``). A redraw (text written above the live
        area erases it, writes, then draws it again) can be caught half-way, so a check of
        what is on the screen polls instead of capturing once."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen(colours=colours)
            if re.search(text, screen) if regex else text in screen:
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} not on the visible screen within {timeout} s; the screen:\n{screen}")
            time.sleep(0.05)

    def count(self, text: str) -> int:
        return self.everything().count(text)

    def wait_count(self, text: str, n: int, *, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        while self.count(text) < n:
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} not {n} times on the screen; the screen:\n{self.everything()}")
            time.sleep(0.05)
        return self.everything()

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-t", "chat", "-l", text)

    def keys(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", "chat", *keys)

    def send(self, text: str) -> None:
        self.type(text)
        self.keys("Enter")

    def save(self, name: str) -> Path:
        self.artifacts.mkdir(parents=True, exist_ok=True)
        path = self.artifacts / f"{name}.txt"
        path.write_text(self.screen())
        (self.artifacts / f"{name}.ansi").write_text(self.screen(colours=True))
        print(f"screen saved: {path}")
        return path

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=20)
        self.socket_path.unlink(missing_ok=True)  # tmux leaves it behind
