"""`tether chat`: an interactive terminal client of the Tether daemon.

A third thin client, beside the VS Code and Neovim plugins: it starts `tether serve` and
speaks the protocol through `tether_client`; it never imports the daemon (`tether.*`;
tests/chat/test_imports.py checks). The transcript streams into the terminal's own
scrollback (Markdown with highlighted code, thinking collapsed, tool calls as cards with
live command output, plans, each turn's usage); the bottom of the screen holds what is
still running, approvals (the coloured diff with per-hunk choice, the command with its
directory and reason), the input editor and a status line with the mode. A message typed
while a turn runs goes to the daemon's queue (SPEC §3.37; listed above the input,
`/dequeue` withdraws the last) or, with Ctrl-S / `/steer`, into the running turn, shown
where it landed. `/search` offers the hits' sessions to resume; a resumed session shows
each old turn's end line and usage (from its stored run report).

Library: prompt_toolkit (the editor, keys, completion; `create_pipe_input` drives it in
tests) + rich (Markdown and code highlighting, imported at the first answer, not before the
prompt). Measured on this machine (2 cores, busy; medians of 7, tmux 80x24, to the first
prompt on screen, `env -u PYTHONDONTWRITEBYTECODE`): a minimal Textual app 162-174 ms
(`import textual.app` alone 156-238 ms; in a bare pty that answers no terminal queries
its first frame took 1,160-1,180 ms), prompt_toolkit + rich 140-154 ms (`import
prompt_toolkit` 102-134 ms, rich 75-89 ms), `python -c print` 14-16 ms. prompt_toolkit
also leaves the output in the terminal's scrollback (no alternate screen), which is what
SSH users and tmux's capture-pane see. `bench/chat_startup.py` measures `tether chat`
side by side with those: to its prompt it takes 0.67-0.73x the minimal prompt_toolkit +
rich app (rich and `tether_client` are imported after the prompt shows), i.e. ~100-110 ms
on the machine above when quiet; under a load of 8-11 on its 2 cores, medians 440-564 ms
(min 191 ms) against 616-776 ms for that app and 760-802 ms for Textual's.

Owns: the chat (app.py), its screen and keys (layout.py), the transcript's rendering
(render.py), approvals (approval.py), completion and attachments (complete.py), sessions
(sessions.py), queued and steered messages (outbox.py), the daemon connection (daemon.py). Must not: import `tether.*`.
"""

from __future__ import annotations

from .main import add_chat_arguments, chat_main

__all__ = ["add_chat_arguments", "chat_main"]
