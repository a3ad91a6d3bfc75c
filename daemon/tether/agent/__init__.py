"""The agent loop: one user turn as a sequence of model steps and tool calls.

Owns: a session's live conversation (`session.py`), building each model request
(`context.py`), the turn (`loop.py`, a coordinator of three parts: the step runner
that streams a model step and assembles its calls, `step_runner.py`; the tool
executor that validates, approves and runs them and returns structured results,
`executor.py`; the journal that commits steps and owns crash-safety, `journal.py`),
the per-step accumulator (`state.py`), the run report (`report.py`), and memory across
sessions (`memory_files.py`: the MEMORY.md files; `memory.py`: retrieved memory;
`memory_edit.py`: a memory change Tether proposes itself), and how a call looks before it
runs (`tool_view.py`), and sub-agents (`subagent.py`: the `delegate` tool's child turns,
with `subagent_parts.py`: their sink, budgeted provider and asker), and the hook port
(`hook_port.py`: the calls the turn makes at its hook points, given to it in
`TurnServices.hooks` like the asker and the sink; `NO_HOOKS` when none are configured).
Must not: speak JSON-RPC or know ACP shapes — it reports typed events to a
`TurnSink` (`sink.py`) that the server's update layer renders; nor import `tether.hooks`
(the user's hooks, the reviewer and ask-first live there and implement the port).
"""
