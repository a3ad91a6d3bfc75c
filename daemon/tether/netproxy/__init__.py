"""Network by domain: the proxy a sandboxed command reaches in `network = "allowlist"`.

Owns: rules.py, proxy.py, tls.py, asking.py, serving.py, summary.py and bridge.py
(docs/decisions/0013-netproxy.md). Must not: decide whether a command may run (the
approval gate does), or let a command reach anything but the proxy (the sandbox does).
"""

from __future__ import annotations
