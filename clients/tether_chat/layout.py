"""The screen of `tether chat`: the live area, the input editor, the status line, the keys.

Owns: the prompt_toolkit layout (the bottom of the terminal only; finished output goes to
the scrollback) and every key binding (docs/decisions/0014-clients.md lists them), the
status line fitted to the width (`fit_status`).
Must not: talk to the daemon (it calls the `ChatApp`'s methods).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prompt_toolkit.filters import Condition, has_completions
from prompt_toolkit.formatted_text import ANSI, StyleAndTextTuples
from prompt_toolkit.key_binding import KeyBindings, KeyBindingsBase, KeyPressEvent, merge_key_bindings
from prompt_toolkit.key_binding.bindings.basic import load_basic_bindings
from prompt_toolkit.key_binding.bindings.emacs import load_emacs_bindings
from prompt_toolkit.layout import (
    ConditionalContainer,
    Float,
    FloatContainer,
    FormattedTextControl,
    HSplit,
    Layout,
    Window,
)
from prompt_toolkit.layout.controls import BufferControl
from prompt_toolkit.layout.dimension import Dimension
from prompt_toolkit.layout.menus import CompletionsMenu
from prompt_toolkit.layout.processors import BeforeInput

from . import sessions

if TYPE_CHECKING:
    from .app import ChatApp

PROMPT = "› "


def _prefix(line_number: int, wrap_count: int) -> StyleAndTextTuples:
    """The editor's lines after the first are indented under the prompt."""
    return [] if line_number == 0 and wrap_count == 0 else [("", "  ")]


def build_layout(chat: ChatApp) -> Layout:
    def live_height() -> Dimension:
        rows = chat.app.output.get_size().rows if chat.app_started else 24
        return Dimension(max=max(3, rows - 4))

    live = ConditionalContainer(
        Window(FormattedTextControl(lambda: ANSI(chat.live_text())), height=live_height, wrap_lines=True),
        filter=Condition(lambda: bool(chat.live_text())),
    )

    def editor_height() -> Dimension:
        # room under the cursor for the completion menu while it is open
        lines = chat.buffer.document.line_count
        menu = 8 if chat.buffer.complete_state is not None else 0
        return Dimension(min=min(10, lines + menu), max=max(10, lines + menu))

    editor = Window(
        BufferControl(chat.buffer, input_processors=[BeforeInput(PROMPT, style="class:prompt")]),
        height=editor_height,
        wrap_lines=True,
        get_line_prefix=_prefix,
        dont_extend_height=True,
    )
    status = Window(FormattedTextControl(chat.status_text), height=1, style="class:status")
    body = HSplit([live, editor, status])
    menu = Float(xcursor=True, ycursor=True, content=CompletionsMenu(max_height=8, scroll_offset=1))
    return Layout(FloatContainer(body, floats=[menu]), focused_element=editor)


def build_keys(chat: ChatApp) -> KeyBindings:
    keys = KeyBindings()
    asking = Condition(lambda: chat.approval is not None)
    picking = Condition(lambda: chat.picker is not None)
    typing = ~asking & ~picking

    @keys.add("enter", filter=typing & ~has_completions)
    def _send(event: KeyPressEvent) -> None:
        chat.submit()

    @keys.add("enter", filter=typing & has_completions)
    def _take_completion(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        state = buffer.complete_state
        if state is not None and state.current_completion is None and state.completions:
            buffer.apply_completion(state.completions[0])
        elif state is not None and state.current_completion is not None:
            buffer.complete_state = None
        else:
            chat.submit()

    @keys.add("c-s", filter=typing)
    def _steer(event: KeyPressEvent) -> None:
        chat.submit(steer=True)

    @keys.add("escape", "enter", filter=typing)
    @keys.add("c-j", filter=typing)
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    @keys.add("s-tab")
    def _mode(event: KeyPressEvent) -> None:
        chat.cycle_mode()

    @keys.add("c-c")
    def _interrupt(event: KeyPressEvent) -> None:
        chat.interrupt()

    @keys.add("c-d", filter=Condition(lambda: not chat.buffer.text))
    def _quit(event: KeyPressEvent) -> None:
        chat.quit()

    @keys.add("c-o")
    def _thought(event: KeyPressEvent) -> None:
        chat.show_thought()

    for key in ("y", "a", "n", "N", "w"):
        keys.add(key, filter=asking, eager=True)(lambda event, key=key: chat.answer(key))
    for number in range(1, 10):
        keys.add(str(number), filter=asking, eager=True)(lambda event, n=number: chat.toggle_hunk(n))
    keys.add("up", filter=picking, eager=True)(lambda event: sessions.pick_move(chat, -1))
    keys.add("down", filter=picking, eager=True)(lambda event: sessions.pick_move(chat, 1))
    keys.add("enter", filter=picking, eager=True)(lambda event: sessions.pick_done(chat, True))
    keys.add("escape", filter=picking, eager=True)(lambda event: sessions.pick_done(chat, False))
    return keys


def all_keys(chat: ChatApp) -> KeyBindingsBase:
    """Editing as in a shell's line editor (emacs keys, history on Up/Down), then ours."""
    return merge_key_bindings([load_basic_bindings(), load_emacs_bindings(), build_keys(chat)])


_BAR = " │ "


def fit_status(mode: str, state: str, context: str, title: str, width: int) -> str:
    """The status line within ``width`` columns: the context facts stay whole; the title,
    then the mode's key hint, then the state's key hints give way, in that order."""

    def line(*parts: str) -> str:
        return _BAR.join(p for p in parts if p)

    full_mode = f" {mode} (Shift+Tab)"
    without_title = line(full_mode, state, context)
    room = width - len(without_title) - len(_BAR)
    if title and room >= 4:
        return line(full_mode, state, context, _elided(title, room))
    if len(without_title) <= width:
        return without_title
    hints = state.split(" · ")  # "working… Ctrl-C cancels", "Enter queues", ...: the last go first
    while len(hints) > 1 and len(line(f" {mode}", " · ".join(hints), context)) > width:
        hints.pop()
    shortest = line(f" {mode}", " · ".join(hints), context)
    return shortest if len(shortest) <= width else line(f" {mode}", state.split(" ", 1)[0], context)[:width]


def _elided(text: str, room: int) -> str:
    return text if len(text) <= room else text[: room - 1] + "…"
