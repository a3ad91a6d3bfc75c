"""The agent loop: one user turn as a sequence of model steps and tool calls.

Owns: a session's live conversation (`session.py`), building each model request
(`context.py`), the turn itself with its per-step accumulator, tool dispatch,
cancellation and step-boundary commits (`loop.py`, `state.py`), and the run report
(`report.py`). Must not: speak JSON-RPC or know ACP shapes — it reports to a
`TurnSink` (`sink.py`) that the server implements.
"""
