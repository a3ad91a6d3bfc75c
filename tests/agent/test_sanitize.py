"""sanitize: the seven output steps, and streaming that matches the whole-text result."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tether.agent.sanitize import PARAGRAPH_CAP, StreamSanitizer, sanitize


def stream(deltas: list[str]) -> tuple[str, str, list[tuple[str, str]]]:
    """Feed the deltas; return all text, all thought and what each call emitted."""
    sanitizer = StreamSanitizer()
    calls = [sanitizer.feed(delta) for delta in deltas]
    calls.append(sanitizer.finish())
    return "".join(c[0] for c in calls), "".join(c[1] for c in calls), calls


# -- the steps, on whole messages --------------------------------------------------------


def test_step1_garbled_tool_call_xml_is_removed_with_its_content() -> None:
    assert sanitize('Let me look.\n<tool_call>\n{"name": "read_file"}\n</tool_call>') == ("Let me look.\n", "")
    qwen = "<function=read_file>\n<parameter=path>\na.py\n</parameter>\n</function>\nDone."
    assert sanitize(qwen) == ("Done.", "")
    assert sanitize('<minimax:tool_call><invoke name="x"/></minimax:tool_call>ok') == ("ok", "")
    assert sanitize('A<parameter name="path">a.py</parameter>B') == ("AB", "")


def test_step1_special_tool_tokens_of_kimi_and_deepseek() -> None:
    kimi = "<|tool_calls_section_begin|> <|tool_call_begin|> functions.read:0 <|tool_call_argument_begin|> {} <|tool_call_end|> <|tool_calls_section_end|>after"
    assert sanitize(kimi) == ("after", "")
    deepseek = "x<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>y"
    assert sanitize(deepseek) == ("xy", "")


def test_step1_an_unclosed_call_runs_to_the_end_and_stray_closers_go() -> None:
    assert sanitize('<tool_call>{"name": "read_file", "argu') == ("", "")
    assert sanitize("done</tool_call></tool_use>") == ("done", "")


def test_step1_ordinary_markup_is_kept() -> None:
    for text in (
        "x < y and <b>bold</b>",
        "<function>bare xml</function>",
        "List<String> a = f(<parameter>);",
        "if a<b and c>d: pass",
    ):
        assert sanitize(text) == (text, "")


def test_step2_downgraded_tool_call_text_runs_to_the_next_blank_line() -> None:
    text = 'Checking.\n[Tool Call: read_file]\n{"path": "a"}\n[Tool Result for read_file]\nbody\n\nThe file is empty.'
    assert sanitize(text) == ("Checking.\n\nThe file is empty.", "")
    assert sanitize("[Historical context: earlier]\n\nNow.") == ("Now.", "")
    # only at the start of a line: mentioning the format in prose is fine
    assert sanitize("Models emit [Tool Call: x] as text.") == ("Models emit [Tool Call: x] as text.", "")


def test_step3_thinking_moves_to_the_thought_channel() -> None:
    assert sanitize("<think>plan it</think>\n\nAnswer") == ("Answer", "plan it")
    assert sanitize("<THINKING>a</THINKING>b<thought>c</thought>d") == ("bd", "ac")
    assert sanitize("<antThinking>x</antThinking>y") == ("y", "x")
    assert sanitize("<thought>still going") == ("", "still going")  # cut off mid-thought
    assert sanitize("<thinking>mixed</think>answer") == ("answer", "mixed")
    assert sanitize("stray</think> close") == ("stray close", "")


def test_step3_tags_in_code_are_text() -> None:
    inline = "Models wrap reasoning in `<think>` tags."
    assert sanitize(inline) == (inline, "")
    fenced = "Example:\n```xml\n<think>x</think>\n<tool_call>y</tool_call>\n```\nok"
    assert sanitize(fenced) == (fenced, "")


@pytest.mark.parametrize(
    "code",
    [
        "Wrap the reply in `<final>...</final>` tags.",
        "It returns a `List<Thought>` sorted by time. Call `flush()` after.",
        "The parser yields `Optional<Answer>` values.",
        "Inline `a <think> b` here, then ``x ` <tool_call>y`` too.",
        "````markdown\n```\n<think>example</think>\n```\n````\nAfter the block.",
        "Here:\n~~~html\n<answer>42</answer>\n<think>not thought</think>\n~~~\nDone.",
        "```\n~~~\n<think>a tilde line does not close a backtick fence</think>\n```",
    ],
)
def test_code_spans_and_fences_of_any_kind_are_text(code: str) -> None:
    assert sanitize(code) == (code, "")
    assert stream(list(code))[:2] == (code, "")


def test_a_span_ends_with_its_line_and_a_fence_with_its_match() -> None:
    # an unclosed backtick does not make the rest of the message code
    assert sanitize("a lone ` here\n<think>plan</think>Answer.") == ("a lone ` here\nAnswer.", "plan")
    # a fence closes only with its own character, at least as long
    assert sanitize("````\n```\n````\n<think>t</think>x") == ("````\n```\n````\nx", "t")
    assert sanitize("~~~\n<think>t</think>\n~~~~\n<think>u</think>x") == ("~~~\n<think>t</think>\n~~~~\nx", "u")


def test_steps_run_in_order_so_thoughts_lose_tool_xml_too() -> None:
    assert sanitize("<think>a<tool_call>x</tool_call>b</think>c") == ("c", "ab")


def test_a_generic_type_in_prose_is_not_a_tag() -> None:
    """`List<Thought>` outside backticks is a type: it hid the rest of the answer as thought."""
    text = "Return a List<Thought> from plan(), or an Option<Answer> if none; Map<String, Final> too."
    assert sanitize(text) == (text, "")
    assert sanitize("Use Vec<Thinking>.\n<thinking>real</thinking>ok") == ("Use Vec<Thinking>.\nok", "real")
    assert sanitize("b<thought>c</thought>d<Think>e</Think>") == ("bd<Think>e", "c")  # lower case: a tag


def test_step4_final_wrappers_go_and_their_content_stays() -> None:
    assert sanitize("<final>Done.</final>") == ("Done.", "")
    assert sanitize("<think>t</think><answer>42</answer>") == ("42", "t")


def test_step5_echoed_system_messages_go() -> None:
    assert sanitize("Hi\n[System Message] You must\nmore\n\nBye") == ("Hi\n\nBye", "")
    assert sanitize("[system message]\nx") == ("", "")


def test_step6_consecutive_duplicate_paragraphs_collapse() -> None:
    assert sanitize("Same.\n\nSame.\n\nOther.") == ("Same.\n\nOther.", "")
    assert sanitize("A\nb\n\n\nA\nb\n") == ("A\nb\n", "")
    assert sanitize("A\n\nB\n\nA") == ("A\n\nB\n\nA", "")  # not consecutive
    assert sanitize("A\n\nAB") == ("A\n\nAB", "")  # a prefix is not a repeat


def test_step6_keeps_repeats_in_code_and_long_paragraphs() -> None:
    code = "```py\nx = 1\n\nx = 1\n```"
    assert sanitize(code) == (code, "")
    long = "w" * (PARAGRAPH_CAP + 1)
    assert sanitize(f"{long}\n\n{long}") == (f"{long}\n\n{long}", "")


def test_step7_leading_blank_lines_go_and_indentation_stays() -> None:
    assert sanitize("\n \n\n  indented\nx") == ("  indented\nx", "")
    assert sanitize(" \n\t\n") == ("", "")


# -- streaming ---------------------------------------------------------------------------

FRAGMENTS = [
    "<think>",
    "</think>",
    "<thinking>",
    "</THINKING>",
    "<thought>",
    "<tool_call>",
    "</tool_call>",
    "<function=f>",
    "</function>",
    "<parameter=p>",
    "<|tool_call_begin|>",
    "<|tool_call_end|>",
    "<final>",
    "</final>",
    "<answer>",
    "[Tool Call: x]",
    "[Tool Result]",
    "[System Message]",
    "[Sys",
    "[",
    "<",
    ">",
    "<thi",
    "</",
    "`",
    "``",
    "```",
    "```py",
    "````",
    "~~~",
    "\n",
    "\n\n",
    "  ",
    " \n",
    "\t",
    "hello",
    "world",
    "A",
    "A\n\nA",
    "x < y",
    "<b>",
    "same para",
    "same para\n\nsame para",
    "｜",
]
texts = st.one_of(
    st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join),
    st.text(alphabet=st.sampled_from(list("<>[]/`~|\n ab")), max_size=120),
    st.text(max_size=80),
)


@settings(max_examples=600, deadline=None)
@given(text=texts, data=st.data())
def test_streaming_equals_whole_text_for_any_split(text: str, data: st.DataObject) -> None:
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=12)))
    deltas = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    streamed_text, streamed_thought, _ = stream(deltas)
    assert (streamed_text, streamed_thought) == sanitize(text)
    # one character at a time is the hardest split
    assert stream(list(text))[:2] == sanitize(text)


def test_plain_deltas_come_out_in_the_same_call() -> None:
    deltas = ["Hello", " world,", " this is", " plain prose."]
    _, _, calls = stream(deltas)
    assert [c[0] for c in calls[:4]] == deltas
    # a new paragraph: its blank line waits for the next character, then both come out
    sanitizer = StreamSanitizer()
    sanitizer.feed("First paragraph.")
    assert sanitizer.feed("\n\n") == ("\n", "")
    assert sanitizer.feed("Second") == ("\nSecond", "")
    assert sanitizer.feed(" one.") == (" one.", "")


def test_only_a_possible_tag_is_held() -> None:
    sanitizer = StreamSanitizer()
    assert sanitizer.feed("a <") == ("a ", "")
    assert sanitizer.feed("b> c") == ("<b> c", "")
    assert sanitizer.feed("<thi") == ("", "")
    assert sanitizer.feed("nk>ponder") == ("", "ponder")  # thought streams as it arrives
    assert sanitizer.feed(" more</th") == ("", " more")
    assert sanitizer.feed("ink>Answer") == ("Answer", "")
    assert sanitizer.feed(" 1 <") == (" 1 ", "")
    assert sanitizer.finish() == ("<", "")  # the end decides: not a tag


def test_a_repeated_paragraph_is_held_only_while_it_repeats() -> None:
    sanitizer = StreamSanitizer()
    assert sanitizer.feed("The plan is simple.\n\n") == ("The plan is simple.\n", "")
    assert sanitizer.feed("The plan") == ("", "")
    assert sanitizer.feed(" changed.") == ("\nThe plan changed.", "")
    stutter = StreamSanitizer()
    stutter.feed("Same.\n\n")
    assert stutter.feed("Same.") == ("", "")
    assert stutter.feed("\n\nNext.") == ("\nNext.", "")
    assert stutter.finish() == ("", "")


def test_a_long_paragraph_is_never_held() -> None:
    long = "w" * (PARAGRAPH_CAP + 10)
    sanitizer = StreamSanitizer()
    # nothing can repeat it, so even its blank line is not held
    assert sanitizer.feed(long + "\n\n") == (long + "\n\n", "")
    assert sanitizer.feed(long[:100]) == (long[:100], "")


def test_twenty_thousand_small_deltas_go_through() -> None:
    # not a timing assert: a regression to whole-buffer rescans would make this crawl
    base = "Some prose <b>x</b> and [a] list\n\n<think>hm</think>more text `code` here.\n"
    text = (base * (80_000 // len(base) + 1))[:80_000]
    deltas = [text[i : i + 4] for i in range(0, len(text), 4)]
    assert len(deltas) == 20_000
    streamed_text, streamed_thought, _ = stream(deltas)
    assert (streamed_text, streamed_thought) == sanitize(text)


# What each stage holds between deltas: an open thought, a dropped tool-call line, an open
# fence, a paragraph a repeat of which would go, leading blank lines.
_HELD = (
    "<think>still thinking",
    '<tool_call>{"path": ',
    "[tool call: read_file]\nargs",
    "```\ncode <think> in a fence",
    "Same paragraph.\n\n",
    "\n\n   ",
    "text <fin",
    "<final>the answer",
    "[system message]\nnot the model's",
)


_NEXT = (*_HELD, "Same paragraph.\n\nnext", "more args\n\nnext", "more code\n```\nafter", "it is 4")


@pytest.mark.parametrize("before", _HELD)
@pytest.mark.parametrize("finished", [True, False])
def test_a_kept_sanitizer_takes_each_message_as_a_new_one_would(before: str, finished: bool) -> None:
    """A session's turns keep one sanitizer (reset after each step, a broken-off one too):
    the next reply comes out as from a new one, whatever the last left held."""
    for after in _NEXT:
        kept = StreamSanitizer()
        kept.feed(before)
        if finished:
            kept.finish()
        kept.reset()
        got, end = kept.feed(after), kept.finish()
        assert (got[0] + end[0], got[1] + end[1]) == sanitize(after), (before, after)
