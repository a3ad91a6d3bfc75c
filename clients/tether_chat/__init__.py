"""`tether chat`: an interactive terminal client of the Tether daemon (prompt_toolkit + rich).

Owns: app.py, layout.py, render.py, approval.py, complete.py, sessions.py, rules.py,
outbox.py and daemon.py (what each shows and why these libraries:
docs/decisions/0014-clients.md). Must not: import `tether.*` (tests/chat/test_imports.py).
"""

from __future__ import annotations

from .main import add_chat_arguments, chat_main

__all__ = ["add_chat_arguments", "chat_main"]
