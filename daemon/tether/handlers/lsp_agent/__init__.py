"""The agent front of a stock LSP client (eglot, Helix, kak-lsp, Sublime LSP, `vim.lsp`; SPEC §3.33-§3.35).

Owns: `tether.*` commands (`commands.py`), code actions and their prompts (`actions.py`), a session
per workspace root (`front.py`), a turn as progress, messages and a transcript (`watch.py`, `transcript.py`).
Must not: be imported on the ACP start path (the method table imports it on first call), parse
ACP JSON, or write anything inside the workspace.
"""
