"""Workspace tools the agent can call, and the sandbox that confines them to the workspace.

Owns: nothing of its own: import from the modules (`tether.tools.base`, `.registry`, `.sandbox`, one module
per tool), so a session opens with the sandbox and the read ledger, not every tool.
Must not: hold logic, or import anything.
"""
