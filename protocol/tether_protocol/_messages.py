"""Every typed message of the Tether protocol, in one namespace.

Owns: nothing of its own: it re-exports the message modules and `_methods`'s tables, so
`tether_protocol.PromptParams` is `_messages.PromptParams` (snake_case here, camelCase on the wire).
Must not: define a shape (each lives in the module of its area, none over 400 lines).
"""

from __future__ import annotations

from . import (
    _client_requests,
    _common,
    _config_options,
    _extensions,
    _initialize,
    _lsp,
    _queue,
    _rewind,
    _sessions,
    _snapshots,
    _updates,
)
from ._client_requests import *  # noqa: F403
from ._common import *  # noqa: F403
from ._config_options import *  # noqa: F403
from ._extensions import *  # noqa: F403
from ._initialize import *  # noqa: F403
from ._lsp import *  # noqa: F403
from ._methods import (
    AGENT_NOTIFICATIONS,
    AGENT_REQUESTS,
    CLIENT_NOTIFICATIONS,
    CLIENT_REQUESTS,
    METHODS,
    V1,
    EmptyParams,
)
from ._queue import *  # noqa: F403
from ._rewind import *  # noqa: F403
from ._sessions import *  # noqa: F403
from ._snapshots import *  # noqa: F403
from ._updates import *  # noqa: F403

MESSAGE_MODULES = (
    _client_requests,
    _common,
    _config_options,
    _extensions,
    _initialize,
    _lsp,
    _queue,
    _rewind,
    _sessions,
    _snapshots,
    _updates,
)
"""The modules whose every `__all__` name is re-exported here."""

__all__ = [
    "AGENT_NOTIFICATIONS",
    "AGENT_REQUESTS",
    "CLIENT_NOTIFICATIONS",
    "CLIENT_REQUESTS",
    "METHODS",
    "V1",
    "EmptyParams",
]
__all__ += _client_requests.__all__
__all__ += _common.__all__
__all__ += _config_options.__all__
__all__ += _extensions.__all__
__all__ += _initialize.__all__
__all__ += _lsp.__all__
__all__ += _rewind.__all__
__all__ += _queue.__all__
__all__ += _sessions.__all__
__all__ += _snapshots.__all__
__all__ += _updates.__all__
