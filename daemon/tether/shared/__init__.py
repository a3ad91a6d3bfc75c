"""The shared per-user daemon: one background daemon per user (and settings) on a Unix socket.

Owns: proxy.py (is this `serve|acp` shared; finding or starting the daemon; the relay), daemon.py
(the detached process, its socket and its end), stream.py, approvals.py, watchers.py, control.py
(SPEC §11; docs/decisions/0016-shared-daemon.md). Must not: listen on anything but a Unix socket,
or take settings from a client's environment.
"""
