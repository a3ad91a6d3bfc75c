"""Many tasks (and a second connection) writing at once keep seqs unique and contiguous."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from tether.store import HistoryStore, MessageRecord

if TYPE_CHECKING:
    from pathlib import Path


async def test_concurrent_appends_get_unique_contiguous_seqs(store: HistoryStore) -> None:
    await store.create_session("s1", "/w", "code")
    await store.begin_turn("s1", "t1", MessageRecord("user", {"text": "go"}))

    async def writer(task: int) -> list[list[int]]:
        batches = []
        for call in range(20):
            size = 1 + (task + call) % 4
            batch = [MessageRecord("assistant", {"task": task, "call": call, "i": i}) for i in range(size)]
            batches.append(await store.append_messages("s1", "t1", batch))
        return batches

    results = await asyncio.gather(*(writer(task) for task in range(8)))

    messages = await store.load_messages("s1")
    assert [m.seq for m in messages] == list(range(len(messages)))
    sent = sum(len(batch) for batches in results for batch in batches)
    assert await store.message_count("s1") == len(messages) == 1 + sent
    for task, batches in enumerate(results):
        flat = [seq for batch in batches for seq in batch]
        assert flat == sorted(flat)  # one task's steps land in the order it made them
        for call, batch in enumerate(batches):
            # a batch is one transaction: contiguous, and holding exactly what was sent
            assert batch == list(range(batch[0], batch[0] + len(batch)))
            assert [messages[seq].body for seq in batch] == [
                {"task": task, "call": call, "i": i} for i in range(len(batch))
            ]


async def test_readers_never_see_half_a_step(store: HistoryStore) -> None:
    await store.create_session("s1", "/w", "code")
    await store.begin_turn("s1", "t1", MessageRecord("user", {}))
    done = asyncio.Event()

    async def writer() -> None:
        for n in range(40):
            await store.append_messages(
                "s1", "t1", [MessageRecord("assistant", {"n": n}), MessageRecord("tool", {"n": n})]
            )
        done.set()

    async def reader() -> list[int]:
        seen = []
        while not done.is_set():
            seen.append(await store.message_count("s1"))
            seen.append(len(await store.load_messages("s1")))
        return seen

    _, _, *counts = await asyncio.gather(writer(), writer(), reader(), reader())

    # 1 user message + whole two-message steps: an odd count, always
    assert all(len(seen) > 4 for seen in counts)  # the readers really ran alongside
    assert all(count % 2 == 1 for seen in counts for count in seen)
    assert await store.message_count("s1") == 1 + 2 * 40 * 2


async def test_concurrent_turns_number_uniquely(store: HistoryStore) -> None:
    await store.create_session("s1", "/w", "code")
    turns = await asyncio.gather(*(store.begin_turn("s1", f"t{n}", MessageRecord("user", {"n": n})) for n in range(12)))
    assert sorted(turn.seq for turn in turns) == list(range(1, 13))
    assert [m.seq for m in await store.load_messages("s1")] == list(range(12))


async def test_two_connections_on_one_file_do_not_collide(db_path: Path) -> None:
    async with await HistoryStore.open(db_path) as first, await HistoryStore.open(db_path) as second:
        await first.create_session("s1", "/w", "code")
        await first.begin_turn("s1", "t1", MessageRecord("user", {}))

        async def writer(store: HistoryStore, name: str) -> None:
            for n in range(15):
                await store.append_messages("s1", "t1", [MessageRecord("assistant", {"by": name, "n": n})])

        await asyncio.gather(writer(first, "first"), writer(second, "second"))
        messages = await second.load_messages("s1")

    assert [m.seq for m in messages] == list(range(31))
