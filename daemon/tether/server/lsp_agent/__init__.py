"""The agent front of a stock LSP client: an editor that only runs `tether serve` as a
language server (Emacs eglot, Helix, Kakoune's kak-lsp, Sublime LSP, bare `vim.lsp`)
starts, watches and steers turns with LSP's own messages (SPEC §3.33-§3.35).

Owns: `workspace/executeCommand` (`tether.ask`, `tether.cancel`, `tether.newSession`,
`tether.setMode`; `commands.py`), `textDocument/codeAction` and the prompts built from a
selection or a diagnostic (`actions.py`), the one session per workspace root and the
background turn it runs (`front.py`), and the renderer of a turn's typed events as work-done
progress, `window/showMessage`/`window/logMessage` and a Markdown transcript
(`watch.py`, `transcript.py`). Approvals and edits are the server's own
(`window/showMessageRequest`, `workspace/applyEdit`).
Must not: be imported on the ACP start path (the method table names its handlers with
`later(...)`), parse ACP JSON, or write anything inside the workspace.
"""
