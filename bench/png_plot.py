"""Line plots written as PNG with the standard library only (the benches' figures).

Owns: a white canvas with stacked panels, each one or more series drawn as lines over a
shared x axis, its y range labelled (min and max) and its title, in a 3x5 pixel font
(digits, letters, a few signs) scaled up; written as an 8-bit RGB PNG (zlib + struct).
Must not: be imported by the daemon (matplotlib is not a dependency, and a bench plot
does not need one) or compute what it draws.
"""

from __future__ import annotations

import itertools
import struct
import zlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

Color = tuple[int, int, int]
Series = tuple[str, Color, Sequence[tuple[float, float]]]  # (label, colour, [(x, y)])

# 3x5 glyphs, rows top to bottom, 3 bits each (4 = left column)
_FONT = {
    "0": (7, 5, 5, 5, 7),
    "1": (2, 6, 2, 2, 7),
    "2": (7, 1, 7, 4, 7),
    "3": (7, 1, 7, 1, 7),
    "4": (5, 5, 7, 1, 1),
    "5": (7, 4, 7, 1, 7),
    "6": (7, 4, 7, 5, 7),
    "7": (7, 1, 1, 1, 1),
    "8": (7, 5, 7, 5, 7),
    "9": (7, 5, 7, 1, 7),
    ".": (0, 0, 0, 0, 2),
    "-": (0, 0, 7, 0, 0),
    " ": (0, 0, 0, 0, 0),
    ":": (0, 2, 0, 2, 0),
    "/": (1, 1, 2, 4, 4),
    "(": (2, 4, 4, 4, 2),
    ")": (2, 1, 1, 1, 2),
    "=": (0, 7, 0, 7, 0),
    ",": (0, 0, 0, 2, 4),
    "A": (2, 5, 7, 5, 5),
    "B": (6, 5, 6, 5, 6),
    "C": (7, 4, 4, 4, 7),
    "D": (6, 5, 5, 5, 6),
    "E": (7, 4, 6, 4, 7),
    "F": (7, 4, 6, 4, 4),
    "G": (7, 4, 5, 5, 7),
    "H": (5, 5, 7, 5, 5),
    "I": (7, 2, 2, 2, 7),
    "J": (1, 1, 1, 5, 7),
    "K": (5, 5, 6, 5, 5),
    "L": (4, 4, 4, 4, 7),
    "M": (5, 7, 7, 5, 5),
    "N": (6, 5, 5, 5, 5),
    "O": (7, 5, 5, 5, 7),
    "P": (7, 5, 7, 4, 4),
    "Q": (7, 5, 5, 7, 1),
    "R": (6, 5, 6, 5, 5),
    "S": (7, 4, 7, 1, 7),
    "T": (7, 2, 2, 2, 2),
    "U": (5, 5, 5, 5, 7),
    "V": (5, 5, 5, 5, 2),
    "W": (5, 5, 7, 7, 5),
    "X": (5, 5, 2, 5, 5),
    "Y": (5, 5, 2, 2, 2),
    "Z": (7, 1, 2, 4, 7),
}
_SCALE = 2
_BLACK, _GREY, _WHITE = (0, 0, 0), (200, 200, 200), (255, 255, 255)


class Canvas:
    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.rows = [bytearray(_WHITE * width) for _ in range(height)]

    def dot(self, x: int, y: int, color: Color) -> None:
        if 0 <= x < self.width and 0 <= y < self.height:
            self.rows[y][3 * x : 3 * x + 3] = bytes(color)

    def line(self, x0: int, y0: int, x1: int, y1: int, color: Color) -> None:
        steps = max(abs(x1 - x0), abs(y1 - y0), 1)
        for i in range(steps + 1):
            x, y = x0 + (x1 - x0) * i // steps, y0 + (y1 - y0) * i // steps
            self.dot(x, y, color)
            self.dot(x, y + 1, color)  # two pixels thick: readable when scaled down

    def text(self, x: int, y: int, text: str, color: Color = _BLACK) -> None:
        for n, char in enumerate(text.upper()):
            glyph = _FONT.get(char, _FONT[" "])
            for row, bits in enumerate(glyph):
                for col in range(3):
                    if bits & (4 >> col):
                        for dy in range(_SCALE):
                            for dx in range(_SCALE):
                                self.dot(x + n * 4 * _SCALE + col * _SCALE + dx, y + row * _SCALE + dy, color)

    def png(self) -> bytes:
        raw = b"".join(b"\x00" + bytes(row) for row in self.rows)

        def chunk(kind: bytes, data: bytes) -> bytes:
            return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

        header = struct.pack(">IIBBBBB", self.width, self.height, 8, 2, 0, 0, 0)
        return (
            b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")
        )


def _panel(
    canvas: Canvas,
    top: int,
    height: int,
    title: str,
    series: Sequence[Series],
    x_range: tuple[float, float],
    marks: Sequence[tuple[float, str]],
) -> None:
    left, right = 90, canvas.width - 20
    ys = [y for _label, _c, points in series for _x, y in points]
    lo, hi = (min(ys), max(ys)) if ys else (0.0, 1.0)
    if hi - lo < 1e-9:
        lo, hi = lo - 1, hi + 1
    x0, x1 = x_range
    plot_top, plot_bottom = top + 24, top + height - 24

    def px(x: float) -> int:
        return left + round((x - x0) / ((x1 - x0) or 1) * (right - left))

    def py(y: float) -> int:
        return plot_bottom - round((y - lo) / (hi - lo) * (plot_bottom - plot_top))

    canvas.text(left, top + 4, title)
    canvas.line(left, plot_bottom, right, plot_bottom, _BLACK)
    canvas.line(left, plot_top, left, plot_bottom, _BLACK)
    canvas.text(4, plot_top, f"{hi:.1f}")
    canvas.text(4, plot_bottom - 10, f"{lo:.1f}")
    for x, label in marks:
        for y in range(plot_top, plot_bottom, 4):
            canvas.dot(px(x), y, _GREY)
        canvas.text(px(x) + 3, plot_bottom + 6, label)
    for n, (label, color, points) in enumerate(series):
        canvas.text(right - 200, top + 4 + n * 14, label, color)
        for (xa, ya), (xb, yb) in itertools.pairwise(points):
            canvas.line(px(xa), py(ya), px(xb), py(yb), color)


def write_plot(
    path: Path,
    panels: Sequence[tuple[str, Sequence[Series]]],
    marks: Sequence[tuple[float, str]] = (),
    width: int = 900,
    panel_height: int = 220,
) -> None:
    """Stacked panels over one x axis; ``marks``: dotted vertical lines with a label."""
    xs = [x for _t, series in panels for _l, _c, points in series for x, _y in points]
    x_range = (min(xs), max(xs)) if xs else (0.0, 1.0)
    canvas = Canvas(width, panel_height * len(panels))
    for n, (title, series) in enumerate(panels):
        _panel(canvas, n * panel_height, panel_height, title, series, x_range, marks)
    path.write_bytes(canvas.png())
