"""`initialize`: where LSP and ACP meet. Standard library only.

Owns: reading what the client declared (ACP `clientCapabilities`, or v2's `info` and
`capabilities`; LSP `capabilities`, the workspace root) into `ClientProfile`, choosing the
ACP version of the connection (2 when asked for, else v1 as always), merging its
`initializationOptions` (they only narrow the user's settings: config/client_limits.py),
and building the answer (v1: the one both kinds of client understand, which lists the
versions Tether speaks; v2: its own shape), with the workspace-config keys and the client's
options that were refused, if any.
Must not: import attrs/cattrs — the fast start answers `initialize` with this
module before the rest of the daemon is imported.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from tether_protocol._errors import ConfigInvalid, InvalidParams
from tether_protocol._json import JsonObject

from .. import __version__
from ..config import SOURCE_INIT_OPTIONS, ConfigError, Settings, apply_overrides, user_config_path
from ..config.client_limits import keep_user_limits

PROTOCOL_VERSION = 1
SUPPORTED_PROTOCOL_VERSIONS = (1,)
# ACP v2 (Preview): only an explicit 2 gets it; anything else accepted today stays v1 (issue 32)
V2 = 2
OFFERED_VERSIONS = [PROTOCOL_VERSION, V2]  # the v1 answer's `_meta.tether.protocolVersions`

# The agent front a stock LSP client drives (SPEC §3.33-§3.35, `server/lsp_agent/`)
LSP_COMMANDS = ("tether.ask", "tether.cancel", "tether.newSession", "tether.setMode")
CODE_ACTION_KINDS = ("quickfix.tether", "refactor.tether")

MODES: tuple[tuple[str, str, str], ...] = (
    ("read-only", "Read-only", "Reads and searches only; nothing is changed."),
    ("ask", "Ask", "Reads are free; every edit and command asks first."),
    ("auto-edit", "Auto-edit", "Edits inside the workspace are free; commands ask."),
    ("full-auto", "Full auto", "Everything is free, still confined to the workspace."),
)


@dataclass(slots=True)
class ClientProfile:
    """What the client said it can do; features check this and degrade when absent."""

    name: str = ""
    version: str = ""
    acp: bool = False
    protocol_version: int | None = None
    fs_read_text_file: bool = False
    fs_write_text_file: bool = False
    terminal: bool = False
    terminal_output_meta: bool = False
    # shows permission options by name, so two of one kind can be told apart (network)
    named_permission_options: bool = False
    lsp_apply_edit: bool = False
    # `workspace.workspaceEdit.resourceOperations` has "create": a new file may be a CreateFile
    lsp_create_file: bool = False
    lsp_show_message_request: bool = False
    lsp_work_done_progress: bool = False
    lsp_show_document: bool = False
    root: Path | None = None
    # The client sent LSP's InitializeParams (`capabilities` is required there)
    lsp: bool = False
    init_options: JsonObject = field(default_factory=dict)
    # `_meta.tether.clearSession`: the client shows the new session `/clear` makes
    clear_session: bool = False
    # an ACP client that declared no `_meta.tether` (not Tether's own): a replay separates
    # the texts of a turn's steps (updates/replay.py STEP_BREAK)
    step_breaks: bool = False
    # ACP v2 `capabilities.elicitation.form`: ask-first's question may be a form (server/elicitation.py)
    elicitation_form: bool = False

    @property
    def wire_version(self) -> int:
        """The ACP version this connection speaks: 2 when the client asked for it, else 1."""
        return V2 if self.protocol_version == V2 else PROTOCOL_VERSION


def _obj(params: JsonObject, key: str) -> JsonObject:
    value = params.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidParams(f"invalid params for initialize: {key} must be an object")
    return value


def _flag(caps: JsonObject, *path: str) -> bool:
    node: Any = caps
    for key in path:
        if not isinstance(node, dict):
            return False
        node = node.get(key)
    return node is True


def uri_to_path(uri: str) -> Path:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        raise InvalidParams(f"invalid params for initialize: rootUri {uri!r} is not a file:// URI")
    path = unquote(parsed.path)
    if "\0" in path or len(os.fsencode(path)) > 4096 or any(len(os.fsencode(n)) > 255 for n in path.split("/")):
        raise InvalidParams(
            f"invalid params for initialize: the workspace folder {uri[:200]!r} is not a usable path "
            f"(a NUL byte, over 4096 bytes, or a name over 255)"
        )
    return Path(path)


def read_profile(params: Any, offer_v2: bool = True) -> ClientProfile:
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise InvalidParams("invalid params for initialize: params must be an object")
    profile = ClientProfile()
    version = params.get("protocolVersion")
    if version is not None:
        if not isinstance(version, int) or isinstance(version, bool):
            raise InvalidParams("invalid params for initialize: protocolVersion must be an integer")
        profile.acp = True
        # with v2 off (`acp_v2 = "off"`) a client asking for 2 is answered 1, as a v1-only agent would
        profile.protocol_version = version if version != V2 or offer_v2 else PROTOCOL_VERSION
    v2 = profile.protocol_version == V2
    # v2 renamed the two: `capabilities` is no longer LSP's there
    acp_caps = _obj(params, "capabilities" if v2 else "clientCapabilities")
    if acp_caps:
        profile.acp = True
    # v2 has no fs/* or client terminal/* methods: a v2 client declaring them gets the disk
    v1_caps = {} if v2 else acp_caps
    profile.fs_read_text_file = _flag(v1_caps, "fs", "readTextFile")
    profile.fs_write_text_file = _flag(v1_caps, "fs", "writeTextFile")
    profile.terminal = _flag(v1_caps, "terminal")
    profile.terminal_output_meta = _flag(acp_caps, "_meta", "terminal_output")
    profile.named_permission_options = _flag(acp_caps, "_meta", "tether", "namedPermissionOptions")
    profile.clear_session = _flag(acp_caps, "_meta", "tether", "clearSession")
    elicitation = acp_caps.get("elicitation") if v2 else None
    profile.elicitation_form = isinstance(elicitation, dict) and isinstance(elicitation.get("form"), dict)
    meta = acp_caps.get("_meta")
    profile.step_breaks = profile.acp and not (isinstance(meta, dict) and isinstance(meta.get("tether"), dict))
    info = _obj(params, "info" if v2 else "clientInfo")
    profile.name = str(info.get("name", ""))
    profile.version = str(info.get("version", ""))
    lsp_caps = _obj(params, "capabilities")  # on v2 LSP's keys sit beside ACP's in one object
    profile.lsp = (not v2 and "capabilities" in params) or "processId" in params or "rootUri" in params
    profile.lsp_apply_edit = _flag(lsp_caps, "workspace", "applyEdit")
    workspace = lsp_caps.get("workspace")
    workspace_edit = workspace.get("workspaceEdit") if isinstance(workspace, dict) else None
    operations = workspace_edit.get("resourceOperations") if isinstance(workspace_edit, dict) else None
    profile.lsp_create_file = isinstance(operations, list) and "create" in operations
    window = lsp_caps.get("window")
    profile.lsp_show_message_request = isinstance(window, dict) and isinstance(
        window.get("showMessage"), dict
    )
    profile.lsp_work_done_progress = _flag(lsp_caps, "window", "workDoneProgress")
    profile.lsp_show_document = _flag(lsp_caps, "window", "showDocument", "support")
    profile.root = _root(params)
    options = params.get("initializationOptions")
    if options is not None and not isinstance(options, dict):
        raise InvalidParams("invalid params for initialize: initializationOptions must be an object")
    profile.init_options = options or {}
    return profile


def _root(params: JsonObject) -> Path | None:
    folders = params.get("workspaceFolders")
    if folders:
        if not isinstance(folders, list) or not isinstance(folders[0], dict) or not isinstance(folders[0].get("uri"), str):
            raise InvalidParams("invalid params for initialize: workspaceFolders must be a list of {uri, name}")
        return uri_to_path(folders[0]["uri"])
    root_uri = params.get("rootUri")
    if root_uri is not None:
        if not isinstance(root_uri, str):
            raise InvalidParams("invalid params for initialize: rootUri must be a string")
        return uri_to_path(root_uri)
    root_path = params.get("rootPath")
    if isinstance(root_path, str) and root_path:
        return Path(root_path)
    return None


def initialize_result(profile: ClientProfile, offered: list[int] = OFFERED_VERSIONS) -> JsonObject:
    """Both halves for LSP clients; a strict ACP answer (LSP half under `_meta`) for ACP
    clients, since ACP reserves every root-level name of the result."""
    version = (
        profile.protocol_version
        if profile.protocol_version in SUPPORTED_PROTOCOL_VERSIONS
        else PROTOCOL_VERSION
    )
    info = {"name": "tether", "title": "Tether", "version": __version__}
    lsp_half = {
        "capabilities": {
            # full and incremental sync, so tools read the editor's unsaved text
            "textDocumentSync": {"openClose": True, "change": 2, "save": False},
            "experimental": {"tether": {"protocolVersion": PROTOCOL_VERSION}},
            "executeCommandProvider": {"commands": list(LSP_COMMANDS)},
            "codeActionProvider": {"codeActionKinds": list(CODE_ACTION_KINDS)},
        },
        "serverInfo": {"name": "tether", "version": __version__},
    }
    result: JsonObject = {
        "protocolVersion": version,
        "agentCapabilities": {
            "loadSession": True,
            "promptCapabilities": {"image": False, "audio": False, "embeddedContext": True},
            "mcpCapabilities": {"http": True, "sse": True},
            "sessionCapabilities": {"list": {}, "resume": {}, "close": {}, "delete": {}},
        },
        "agentInfo": info,
        "authMethods": [],
    }
    if profile.wire_version == V2:
        return _v2_result(info, lsp_half)
    if profile.lsp or not profile.acp:
        result.update(lsp_half)
        if profile.acp:  # an ACP client that also speaks LSP learns the versions too
            result["_meta"] = {"tether": {"protocolVersions": offered}}
    else:
        result["_meta"] = {"tether": {"lsp": lsp_half, "protocolVersions": offered}}
    return result


def _v2_result(info: JsonObject, lsp_half: JsonObject) -> JsonObject:
    """ACP v2's answer: `info` and role-agnostic `capabilities`, support markers as `{}`
    (`session.delete`: `session/delete`; no `auth/*`, so `authMethods` is empty)."""
    session: JsonObject = {
        "prompt": {"embeddedContext": {}},
        "mcp": {"stdio": {}, "http": {}},
        "delete": {},
    }
    return {
        "protocolVersion": V2,
        "info": info,
        "capabilities": {"session": session},
        "authMethods": [],
        "_meta": {"tether": {"lsp": lsp_half, "protocolVersions": OFFERED_VERSIONS}},
    }


def handshake(
    params: Any, settings: Settings, default_root: Path
) -> tuple[JsonObject, ClientProfile, Settings]:
    """Everything `initialize` does: read the client, merge its options, build the answer."""
    offer_v2 = settings.acp_v2 == "on"
    profile = read_profile(params, offer_v2)
    if profile.init_options:
        try:
            merged = apply_overrides(
                settings,
                profile.init_options,
                SOURCE_INIT_OPTIONS,
                base_dir=profile.root or default_root,
            )
        except ConfigError as exc:
            raise ConfigInvalid(f"initializationOptions: {exc}") from None
        # a client only narrows: the sandbox, the mode and the rest are the user's (§9)
        settings = keep_user_limits(settings, merged, str(user_config_path()[0]))
    result = initialize_result(profile, OFFERED_VERSIONS if offer_v2 else [PROTOCOL_VERSION])
    if settings.refused:
        # what the workspace config was refused (§9); LSP clients also get a
        # window/showMessage after `initialized`
        meta = result.setdefault("_meta", {}).setdefault("tether", {})
        meta["configRefused"] = refused_settings(settings)
    return result, profile, settings


def refused_settings(settings: Settings) -> list[dict[str, str]]:
    """The workspace-config keys Tether refused and ignored, as sent to the client."""
    return [
        {"key": item.key, "file": item.file, "reason": item.reason, "message": item.message()}
        for item in settings.refused
    ]
