"""Network by domain: the proxy a sandboxed command reaches in `network = "allowlist"`.

Owns: which hosts and ports a command may reach (`rules.py`: domain patterns, the
shipped registry list, refused address ranges), the proxy that enforces it from inside
the daemon (`proxy.py`: HTTP CONNECT and absolute-URI HTTP over a private unix socket,
credential headers), TLS interception for hosts with a credential only (`tls.py`: the
daemon's own CA), asking the user about a refused host (`asking.py`), one command's
proxy and its report (`serving.py`), doctor's lines (`summary.py`), and the in-sandbox bridge (`bridge.py`: a loopback
port in the command's own network namespace forwarded to that socket).
Must not: decide whether a command may run (the approval gate does), or let a command
reach anything but the proxy (the sandbox backends do the confining).
"""

from __future__ import annotations
