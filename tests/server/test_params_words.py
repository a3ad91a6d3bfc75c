"""The params of the methods whose classes moved to msgspec last (sessions, LSP, steer,
`$/cancel_request`'s kin) are refused with the words main's attrs converter gave: every
field that is wrong named in field order (up to three), a `Literal`'s values for a value
of the wrong type. The texts were taken from main at the branch point."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from server_harness import Answered, running, settings_for

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.parametrize(
    ("method", "params", "message"),
    [
        (
            "_tether/session/steer",
            {},
            "invalid params for _tether/session/steer: params.sessionId: required field missing; "
            "params.prompt: required field missing",
        ),
        (
            "tool_call/cancel",
            {},
            "invalid params for tool_call/cancel: params.sessionId: required field missing; "
            "params.toolCallId: required field missing",
        ),
        (
            "session/set_mode",
            {"sessionId": "s", "modeId": None},
            "invalid params for session/set_mode: params.modeId: must be one of: read-only, ask, auto-edit, full-auto",
        ),
        (
            "session/new",
            {"cwd": 3, "mcpServers": {}},
            "invalid params for session/new: params.cwd: expected a string, got an integer; "
            "params.mcpServers: expected an array, got an object",
        ),
        (
            "session/fork",
            {"sessionId": ""},
            "invalid params for session/fork: sessionId (a non-empty string) is required",
        ),
    ],
)
async def test_a_moved_method_refuses_bad_params_in_mains_words(
    tmp_path: Path, workspace: Path, method: str, params: dict[str, Any], message: str
) -> None:
    async with running(settings_for(tmp_path), workspace) as daemon:
        with pytest.raises(Answered) as found:
            await daemon.call(method, params)
    assert (found.value.code, found.value.message) == (-32602, message)
