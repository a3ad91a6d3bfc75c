"""Network by domain: the proxy a sandboxed command reaches in `network = "allowlist"`.

Owns: the allowlist's rules (rules.py), the daemon-side proxy (proxy.py), TLS for hosts
with a credential (tls.py), asking about a refused host (asking.py), one command's proxy
(serving.py), doctor's lines (summary.py), the in-sandbox bridge (bridge.py).
Must not: decide whether a command may run (the approval gate does), or let a command
reach anything but the proxy (the sandbox backends do the confining).
"""

from __future__ import annotations
