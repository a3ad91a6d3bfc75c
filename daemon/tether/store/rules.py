"""Approval rules kept per workspace: add, list, delete.

Owns: the SQL of `approval_rules` (schema v2; v10 adds the network a command rule was granted
under). Must not: decide what a rule means (that is `tether.approvals.rules`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import aiosqlite

    from .database import Database


@dataclass(frozen=True, slots=True)
class RuleRecord:
    id: int
    tool_kind: str  # ACP ToolKind the rule covers: "execute", "edit", "delete", "move"
    pattern: str  # a command prefix ("npm test") or a path glob ("src/**")
    decision: str  # "allow" | "deny"
    created_at: float
    # a command allow rule's network condition, as `tether.approvals.network_reach` stores it
    # ("off", "allowlist DOMAIN...", "on"); "off" for every rule stored before v10
    network: str = "off"


class RuleStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(self, tool_kind: str, pattern: str, decision: str, network: str = "off") -> RuleRecord:
        """Adds the rule; an existing rule of the same words takes the newer answer's network condition."""
        now = time.time()

        async def work(conn: aiosqlite.Connection) -> int:
            await conn.execute(
                "INSERT INTO approval_rules (tool_kind, pattern, decision, created_at, network) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (tool_kind, pattern, decision) DO UPDATE SET network = excluded.network",
                (tool_kind, pattern, decision, now, network),
            )
            cursor = await conn.execute(
                "SELECT id FROM approval_rules WHERE tool_kind = ? AND pattern = ? AND decision = ?",
                (tool_kind, pattern, decision),
            )
            row = await cursor.fetchone()
            assert row is not None
            return int(row[0])

        rule_id = await self._db.write(work)
        return RuleRecord(rule_id, tool_kind, pattern, decision, now, network)

    async def list(self) -> list[RuleRecord]:
        rows = await self._db.read(
            "SELECT id, tool_kind, pattern, decision, created_at, network FROM approval_rules ORDER BY id"
        )
        return [RuleRecord(int(r[0]), r[1], r[2], r[3], float(r[4]), r[5]) for r in rows]

    async def delete(self, rule_id: int) -> bool:
        async def work(conn: aiosqlite.Connection) -> bool:
            cursor = await conn.execute("DELETE FROM approval_rules WHERE id = ?", (rule_id,))
            return cursor.rowcount > 0

        return await self._db.write(work)
