"""Workspace tools the agent can call, and the sandbox that confines them to the workspace.

Each tool declares its arguments as a frozen attrs class (tools/args.py: `arg()` gives a
field its description and bounds); the JSON Schema the model sees is generated from it,
and `validate_args(tool, raw)` turns the model's JSON into that typed object.

Owns: nothing of its own: import from the modules (`tether.tools.base`, `.registry`,
`.sandbox`, one module per tool). The package imports nothing, so a session opens with
the sandbox and the read ledger, not every tool.
Must not: hold logic.
"""
