"""What a user types after `/<server>:<prompt>` becomes the prompt's named arguments."""

from __future__ import annotations

import pytest

from tether.services.mcp_prompts import arguments


@pytest.mark.parametrize(
    ("names", "typed", "given"),
    [
        (["focus"], "error handling and tests", {"focus": "error handling and tests"}),
        (["repo", "focus"], "tether the error paths", {"repo": "tether", "focus": "the error paths"}),
        (["repo", "focus"], "focus=speed tether", {"focus": "speed", "repo": "tether"}),
        (["repo", "focus"], "", {}),
        (["a"], 'x="quoted words"', {"a": "x=quoted words"}),
        ([], "ignored words", {}),
    ],
)
def test_typed_words_fill_the_prompt_arguments(names, typed, given):
    assert arguments(names, typed) == given
