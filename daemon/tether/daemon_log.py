"""The daemon's log on stderr.

Owns: its one format and `start_log` (tether's own loggers at the settings' level; libraries
stay at warnings). Must not: be called before it is needed: `tether serve` answers
`initialize` before `logging` is imported (~6M instructions), unless a workspace-config key
was refused first (`workspace_config` starts the log to warn about it).
"""

from __future__ import annotations

import sys

FORMAT = "tether %(levelname)s %(name)s: %(message)s"


def start_log(level: str | None = None) -> None:
    """The log on stderr (once; later calls only set ``level``, tether's loggers' level)."""
    import logging

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format=FORMAT)
    if level is not None:
        # Libraries stay at warnings: their debug lines carry what is sent and stored
        # (aiosqlite logs every SQL parameter, so whole messages: a key pasted into a
        # prompt, a .env file a tool read).
        logging.getLogger("tether").setLevel(level.upper())
