"""The command line's help formatter: the terminal's width asked only when help is printed.

Owns: `HelpFormatter` (argparse's, with its width looked up in `format_help`). Why: argparse
makes a formatter for every `add_argument` (to check its metavar), and each asks `shutil` for
the width; `shutil` imports zlib, bz2 and lzma (~7M instructions before `tether acp` can
answer `initialize`). Must not: change what help looks like.
"""

from __future__ import annotations

import argparse


class HelpFormatter(argparse.HelpFormatter):
    def __init__(
        self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None
    ) -> None:
        super().__init__(prog, indent_increment, max_help_position, 80 if width is None else width)
        self._asked_position = max_help_position if width is None else None

    def format_help(self) -> str:
        if self._asked_position is not None:  # argparse's own default, from the terminal
            import shutil

            self._width = shutil.get_terminal_size().columns - 2
            self._max_help_position = min(self._asked_position, max(self._width - 20, self._indent_increment * 2))
        return super().format_help()
