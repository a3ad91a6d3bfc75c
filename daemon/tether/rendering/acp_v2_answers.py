"""ACP v2's answers' shapes and message ids, apart from the update model (cheap to import).

Owns: the message ids of a turn's prompt and steered messages (SPEC §12.2, §12.7), and v1's
config options and `session/new` answer in v2's names. Must not: import the generated v2
model (`session/new` and a prompt's answer do not need it loaded), or build an update.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tether_protocol import JsonObject


def config_options_v2(options: list[JsonObject]) -> list[JsonObject]:
    """v1's config options (JSON) in v2's names: `id` -> `configId`, `group` -> `groupId`."""
    renamed = {"id": "configId", "group": "groupId"}
    out = []
    for option in options:
        choices = option.get("options")
        if isinstance(choices, list):
            option = {**option, "options": [{renamed.get(k, k): v for k, v in c.items()} for c in choices]}
        out.append({renamed.get(k, k): v for k, v in option.items()})
    return out


def new_session_result(v1: JsonObject) -> JsonObject:
    """`session/new`'s answer on v2: no `modes` (v2 removed them: the mode is a config option)."""
    result = {key: value for key, value in v1.items() if key != "modes"}
    if "configOptions" in result:
        result["configOptions"] = config_options_v2(result["configOptions"])
    return result


def prompt_message_id(turn_id: str) -> str:
    """The id of a turn's prompt: what `session/prompt` answers and `user_message` carries."""
    return f"{turn_id}.0"


def steered_message_id(turn_id: str, seq: int) -> str:
    """The id of a message steered into turn `turn_id`, stored as message `seq` (SPEC §12.7)."""
    return f"{turn_id}.s{seq}"
