"""A session being loaded is not held whole (`registry.StoredTail`): what it keeps, read a
page at a time, gives the model exactly the view the whole history gives, and the ledger
learns the same files, whatever the compactions, their `kept`, the hidden messages and
the page size."""

from __future__ import annotations

import random

import pytest

from tether.services.registry import StoredTail, model_view


def _history(rng: random.Random, count: int) -> list[tuple[str, dict, str]]:
    views: list[tuple[str, dict, str]] = []
    shown = 0  # visible messages since the last summary (it included): what a compaction can keep
    for n in range(count):
        pick = rng.random()
        status = rng.choice(["complete"] * 8 + ["cancelled", "interrupted", "error", "incomplete"])
        if pick < 0.08:
            kept = {"kept": rng.randint(0, min(6, shown))} if rng.random() < 0.8 else {}
            body = {
                "role": "user",
                "content": [{"type": "text", "text": f"summary {n}"}],
                "compaction": {"replaced": n, **kept},
            }
            views.append(("user", body, "complete"))
            shown = 0
        elif pick < 0.3:
            views.append(("user", {"role": "user", "content": [{"type": "text", "text": f"ask {n}"}]}, status))
        elif pick < 0.55:  # some say nothing (a turn interrupted before its answer): never shown to the model
            text = "" if rng.random() < 0.15 else f"answer {n}"
            views.append(("assistant", {"role": "assistant", "text": text}, status))
        elif pick < 0.75:
            call = f"c{n}"
            views.append(
                (
                    "assistant",
                    {
                        "role": "assistant",
                        "text": "",
                        "tool_calls": [{"id": call, "name": "read_file", "arguments": {"path": "a"}}],
                    },
                    "complete",
                )
            )
            body = {"role": "tool", "tool_call_id": call, "name": "read_file", "content": f"read {n}"}
            if rng.random() < 0.5:
                body["ledger"] = {f"f{n % 7}.py": f"digest{n}"}
            views.append(("tool", body, status))
        else:
            views.append(("assistant", {"role": "assistant", "text": f"more {n}"}, "complete"))
        role, body, status = views[-1]
        shown += status in ("complete", "cancelled", "interrupted") and bool(
            role != "assistant" or body.get("text") or body.get("tool_calls")
        )
    return views


def _ledger(views) -> list[dict]:
    return [body["ledger"] for role, body, _status in views if role == "tool" and body.get("ledger")]


@pytest.mark.parametrize("seed", range(40))
def test_the_kept_tail_gives_the_same_model_view_and_ledger_as_the_whole_history(seed: int) -> None:
    rng = random.Random(seed)
    whole = _history(rng, rng.randint(1, 400))
    page = rng.choice([1, 3, 17, 128, 1024])
    tail = StoredTail()
    for start in range(0, len(whole), page):
        tail.extend(whole[start : start + page])
    kept = tail.views()

    assert model_view(kept) == model_view(whole)
    assert _ledger(kept) == _ledger(whole)
    summaries = [i for i, (role, body, _s) in enumerate(whole) if role == "user" and "compaction" in body]
    if summaries and summaries[-1] > 50:  # a long history before its last summary is let go
        assert len(kept) < len(whole)


@pytest.mark.parametrize("seed", range(40))
def test_told_where_the_last_summary_is_it_lets_the_messages_before_it_go_as_they_are_read(seed: int) -> None:
    rng = random.Random(1000 + seed)
    whole = _history(rng, rng.randint(1, 400))
    page = rng.choice([1, 3, 17, 128])
    summaries = [i for i, (role, body, _s) in enumerate(whole) if role == "user" and "compaction" in body]
    tail = StoredTail()
    held = 0
    for start in range(0, len(whole), page):
        tail.extend(whole[start : start + page])
        if start == 0:  # as session/load asks, once the first page is on its way
            tail.expect((summaries[-1], whole[summaries[-1]][1]["compaction"].get("kept")) if summaries else None)
        held = max(held, len(tail.views()))
    kept = tail.views()

    assert model_view(kept) == model_view(whole)
    assert _ledger(kept) == _ledger(whole)
    if summaries:  # never more than a page, the kept messages and the ledger's stand-ins beyond the tail
        assert held <= max(page, len(whole) - summaries[-1]) + 2 * page + 6 + len(_ledger(whole))
