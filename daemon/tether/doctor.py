"""`tether doctor`: what Tether would use here, and why.

Prints the version, every setting with the layer it came from (secrets masked), the
provider that would be chosen and the reason, where the history lives, and whether
ripgrep is available. Exits 0 when a provider is available, 1 when not.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from . import __version__
from .config import ConfigError, describe, load_settings


def doctor_main(workspace: Path, flags: dict[str, object]) -> int:
    out = sys.stdout
    out.write(f"tether {__version__} (Python {sys.version.split()[0]})\n")
    out.write(f"workspace: {workspace}\n\nsettings (later layers win):\n")
    try:
        settings = load_settings(workspace, flags=flags, env=os.environ)
    except ConfigError as exc:
        out.write(f"  configuration error: {exc}\n")
        return 1
    for key, shown, source in describe(settings):
        out.write(f"  {key:<18} {shown or '-':<40} {source}\n")

    from tether_protocol._errors import TetherError

    from .providers.select import choose_provider
    from .store import database_path
    from .tools.grep_rg import find_rg

    out.write("\nprovider:\n")
    ok = True
    try:
        choice = asyncio.run(choose_provider(settings))
        out.write(f"  {choice.provider} · model {choice.model or '-'} · {choice.base_url or '-'}\n")
        out.write(f"  why: {choice.reason}\n")
        if choice.key_env:
            out.write(f"  key: {'set' if choice.api_key else 'not set'} ({choice.key_env} or TETHER_API_KEY)\n")
    except TetherError as exc:
        ok = False
        out.write(f"  none: {exc.message}\n")
    home = Path(settings.home) if settings.home else None
    out.write(f"\nhistory: {database_path(workspace, home)}\n")
    rg = find_rg()
    out.write(f"ripgrep: {rg or 'not found (grep uses its pure-Python twin)'}\n")
    return 0 if ok else 1
