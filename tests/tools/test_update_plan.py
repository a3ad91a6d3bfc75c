"""update_plan: the whole plan each call, validated field by field, summarised in one line."""

from __future__ import annotations

from typing import Any

import pytest

from tether.tools.base import ToolContext, ToolError, validate_args
from tether.tools.update_plan import UpdatePlanTool, plan_entries

TOOL = UpdatePlanTool()

PLAN: dict[str, Any] = {
    "entries": [
        {"content": "Read the failing test", "status": "completed", "priority": "high"},
        {"content": "  Fix the parser  ", "status": "completed"},
        {"content": "Run the suite", "status": "in_progress"},
        {"content": "Update the changelog", "status": "pending", "priority": "low"},
        {"content": "Open a PR", "status": "pending", "priority": None},
    ]
}


def test_the_schema_passes_validate_args() -> None:
    assert TOOL.kind == "think" and TOOL.read_only
    clean = validate_args(TOOL, PLAN)
    assert [entry.content for entry in clean.entries] == [e["content"] for e in PLAN["entries"]]
    assert [entry.priority for entry in clean.entries] == ["high", "medium", "medium", "low", "medium"]


async def test_summary_counts_progress(ctx: ToolContext) -> None:
    result = await TOOL.call(PLAN, ctx)
    assert result.text == "Plan updated: 2 of 5 done; in progress: Run the suite"
    assert not result.is_error and result.locations == []


async def test_summary_names_the_next_step_or_clears(ctx: ToolContext) -> None:
    pending = {"entries": [{"content": "a", "status": "completed"}, {"content": "b", "status": "pending"}]}
    assert (await TOOL.call(pending, ctx)).text == "Plan updated: 1 of 2 done; next: b"
    done = {"entries": [{"content": "a", "status": "completed"}]}
    assert (await TOOL.call(done, ctx)).text == "Plan updated: 1 of 1 done"
    assert (await TOOL.call({"entries": []}, ctx)).text == "Plan cleared."


def test_plan_entries_are_normalised_acp_entries() -> None:
    assert plan_entries(PLAN) == [
        {"content": "Read the failing test", "priority": "high", "status": "completed"},
        {"content": "Fix the parser", "priority": "medium", "status": "completed"},
        {"content": "Run the suite", "priority": "medium", "status": "in_progress"},
        {"content": "Update the changelog", "priority": "low", "status": "pending"},
        {"content": "Open a PR", "priority": "medium", "status": "pending"},
    ]


def test_entries_sent_as_a_json_string_are_accepted() -> None:
    assert plan_entries({"entries": '[{"content": "a", "status": "pending"}]'}) == [
        {"content": "a", "priority": "medium", "status": "pending"}
    ]


@pytest.mark.parametrize(
    ("entries", "names"),
    [
        ([{"content": "a", "status": "done"}], ["entries[0].status", '"pending"', '"in_progress"', '"completed"']),
        (
            [{"content": "a", "status": "pending"}, {"content": "b", "status": "pending", "priority": "urgent"}],
            ["entries[1].priority", '"high"', '"medium"', '"low"'],
        ),
        ([{"content": "a", "status": "pending"}, {"status": "pending"}], ["entries[1].content"]),
        ([{"content": "   ", "status": "pending"}], ["entries[0].content", "non-empty"]),
        ([{"content": "a", "status": "pending", "id": 3}], ["entries[0].id"]),
        (["just text"], ["entries[0]", "object"]),
        ("not json", ["entries", "array"]),
        ({"content": "a", "status": "pending"}, ["entries", "array"]),
    ],
)
async def test_bad_entries_name_the_field(ctx: ToolContext, entries: Any, names: list[str]) -> None:
    with pytest.raises(ToolError) as caught:
        await TOOL.call({"entries": entries}, ctx)
    for name in names:
        assert name in str(caught.value)


async def test_entries_are_required(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="entries"):
        await TOOL.call({}, ctx)
