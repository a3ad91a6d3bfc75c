"""The agent loop: one user turn as a sequence of model steps and tool calls.

Owns: the live session, each model request, the turn (`loop.py` over `step_runner.py`,
`executor.py`, `journal.py`), the run report, memory, sub-agents and the hook port (the
module map: docs/decisions/0011-agent.md). Must not: speak JSON-RPC or know ACP shapes
(typed events go to a `TurnSink`, `sink.py`), nor import `tether.hooks` (it implements the port).
"""
