"""The shared per-user daemon: one background daemon per user (and settings) on a Unix socket.

Owns: `proxy.py` — deciding whether `tether serve|acp` is shared (the `--shared` flag,
`TETHER_SHARED`, or `shared = true` in the user config), finding or starting the daemon
(race-safe, under a lock file) and relaying bytes between stdio and the socket, with the
standard library alone; `daemon.py` — the detached daemon: its socket (0600 in a 0700
directory, the peer's uid checked on every connection), the idle exit; each window a
`ClientConnection` of the one `tether.server.daemon_services.Daemon` (the same hub the stdio
daemon is, with many connections); `approvals.py` — an approval asked of every window that
sees the session; `stream.py` — a client connection over a socket.
Must not: import anything here from `proxy.py` but the standard library (it runs in every
editor window's process and must start fast), listen on anything but a Unix socket, or
take settings from a client's environment (the daemon's are its own: the user config,
the environment it was started with, its flags).
"""
