"""The streamed Markdown is cut into blocks where Markdown allows it, whatever the chunks."""

from __future__ import annotations

from tether_chat.render import Blocks

TEXT = (
    "## Title\n\nA paragraph\nover two lines.\n\n```python\ndef f():\n\n    return 1\n```\n"
    "After the code.\n\n- one\n- two\n\ntail without end"
)


def _cut(chunks: list[str]) -> list[str]:
    blocks = Blocks()
    out = [done for chunk in chunks if (done := blocks.add(chunk))]
    return [*out, blocks.take()]


def test_blocks_end_at_blank_lines_and_closing_fences_never_inside_code():
    assert _cut([TEXT]) == [
        "## Title\n\nA paragraph\nover two lines.\n\n```python\ndef f():\n\n    return 1\n```\n"
        "After the code.\n\n- one\n- two\n\n",
        "tail without end",
    ]
    one_by_one = _cut(list(TEXT))
    assert "".join(one_by_one) == TEXT
    assert "```python\ndef f():\n\n    return 1\n```\n" in one_by_one  # the code block whole, once
    assert one_by_one[-1] == "tail without end"


def test_any_chunking_gives_the_same_text_and_keeps_code_blocks_whole():
    for cut in range(1, len(TEXT)):
        parts = _cut([TEXT[:cut], TEXT[cut:]])
        assert "".join(parts) == TEXT
        assert not any(p.count("```") == 1 for p in parts[:-1]), (cut, parts)
