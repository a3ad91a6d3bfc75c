"""`initialize`: where LSP and ACP meet.

Owns: reading the client's declarations into `ClientProfile` (ACP's half by the generated ACP
Structs, LSP's by LSP's: `read_initialize`), choosing the connection's ACP version (2 when
asked, else v1), merging its narrowing `initializationOptions`, and the answer (decision 0018).
Must not: import the server stack or the turn: the fast start answers `initialize` with it first.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from msgspec import UNSET, Struct, field, to_builtins

from tether_protocol import (
    AgentCapabilities,
    ClientCapabilities,
    ClientCapabilitiesMeta,
    CodeActionOptions,
    ConfigInvalid,
    ExecuteCommandOptions,
    Implementation,
    InitializeResultMeta,
    InitializeTetherMeta,
    InvalidParams,
    JsonObject,
    LspClientCapabilities,
    LspInitializeParams,
    LspInitializeResult,
    McpCapabilities,
    RefusedSetting,
    ServerCapabilities,
    TextDocumentSyncOptions,
    convert,
    read_initialize,
)
from tether_protocol.acp_v1.initialize import AcpInitializeResult  # ACP's half alone (generated)

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

# The answer's parts no client changes: built once, shared by every answer (never changed)
_AGENT_CAPABILITIES = AgentCapabilities(mcp_capabilities=McpCapabilities(http=True, sse=True))
_AGENT_INFO = Implementation(name="tether", title="Tether", version=__version__)
_LSP_HALF = LspInitializeResult(
    capabilities=ServerCapabilities(
        # full and incremental sync, so tools read the editor's unsaved text
        text_document_sync=TextDocumentSyncOptions(open_close=True, change=2, save=False),
        experimental={"tether": {"protocolVersion": PROTOCOL_VERSION}},
        execute_command_provider=ExecuteCommandOptions(commands=list(LSP_COMMANDS)),
        code_action_provider=CodeActionOptions(code_action_kinds=list(CODE_ACTION_KINDS)),
    ),
    server_info=Implementation(name="tether", version=__version__),
)


class ClientProfile(Struct):
    """What the client said it can do; features check this and degrade when absent.
    (A Struct: made before the answer, far cheaper than a dataclass; decision 0010.)"""

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

    @property
    def shows_forms(self) -> bool:
        """It can be asked `elicitation/create` forms (ask-first's question, MCP servers' forms)."""
        return self.wire_version == V2 and self.elicitation_form


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
    acp, lsp = read_initialize(params)
    profile = ClientProfile()
    version = acp.protocol_version
    if version is not None:
        profile.acp = True
        # with v2 off (`acp_v2 = "off"`) a client asking for 2 is answered 1, as a v1-only agent would
        profile.protocol_version = version if version != V2 or offer_v2 else PROTOCOL_VERSION
    v2 = profile.protocol_version == V2
    # v2 renamed the two: `capabilities` is no longer LSP's there
    caps = (
        convert(params.get("capabilities") or {}, ClientCapabilities, method="initialize", at="capabilities")
        if v2
        else acp.client_capabilities
    )
    if params.get("capabilities" if v2 else "clientCapabilities"):  # a non-empty object
        profile.acp = True
    _read_acp_capabilities(profile, caps or ClientCapabilities(), v2)
    info = (acp.info if v2 else acp.client_info) or Implementation(name="", version="")
    profile.name, profile.version = info.name, info.version
    profile.lsp = (not v2 and lsp.capabilities is not UNSET) or lsp.process_id is not UNSET or lsp.root_uri is not UNSET
    # on v2 LSP's keys sit beside ACP's in the one `capabilities` object
    if isinstance(lsp.capabilities, LspClientCapabilities):
        _read_lsp_capabilities(profile, lsp.capabilities)
    if v2:  # v2's elicitation (§12.8): a form-capable client gets ask-first's question as a form
        elicitation = (
            params["capabilities"].get("elicitation") if isinstance(params.get("capabilities"), dict) else None
        )
        profile.elicitation_form = isinstance(elicitation, dict) and isinstance(elicitation.get("form"), dict)
    profile.root = _root(lsp)
    profile.init_options = lsp.initialization_options or {}
    return profile


def _read_acp_capabilities(profile: ClientProfile, caps: ClientCapabilities, v2: bool) -> None:
    # v2 has no fs/* or client terminal/* methods: a v2 client declaring them gets the disk
    profile.fs_read_text_file = not v2 and caps.fs.read_text_file
    profile.fs_write_text_file = not v2 and caps.fs.write_text_file
    profile.terminal = not v2 and caps.terminal
    meta = caps.meta if isinstance(caps.meta, ClientCapabilitiesMeta) else None
    tether = meta.tether if meta is not None else None
    profile.terminal_output_meta = meta is not None and meta.terminal_output is True
    profile.named_permission_options = tether is not None and tether.named_permission_options
    profile.clear_session = tether is not None and tether.clear_session
    profile.step_breaks = profile.acp and tether is None


def _read_lsp_capabilities(profile: ClientProfile, caps: LspClientCapabilities) -> None:
    workspace, window = caps.workspace, caps.window
    edit = workspace.workspace_edit if workspace is not None else None
    profile.lsp_apply_edit = workspace is not None and workspace.apply_edit is True
    profile.lsp_create_file = edit is not None and "create" in (edit.resource_operations or ())
    profile.lsp_show_message_request = window is not None and window.show_message is not None
    profile.lsp_work_done_progress = window is not None and window.work_done_progress is True
    profile.lsp_show_document = window is not None and window.show_document is not None and window.show_document.support


def _root(params: LspInitializeParams) -> Path | None:
    if params.workspace_folders:
        return uri_to_path(params.workspace_folders[0].uri)
    if isinstance(params.root_uri, str):
        return uri_to_path(params.root_uri)
    return Path(params.root_path) if params.root_path else None


def _tether_meta(offered: list[int], refused: list[RefusedSetting] | None) -> InitializeTetherMeta:
    """An ACP-only client's `_meta.tether`: LSP's half, the versions, what was refused."""
    return InitializeTetherMeta(lsp=_LSP_HALF, protocol_versions=offered, config_refused=refused)


def initialize_result(
    profile: ClientProfile, offered: list[int] = OFFERED_VERSIONS, refused: list[RefusedSetting] | None = None
) -> Struct | JsonObject:
    """Both halves for LSP clients; a strict ACP answer (LSP half under `_meta`) for ACP
    clients, since ACP reserves every root-level name of the result. `refused`: the
    workspace-config keys refused (§9), under `_meta.tether.configRefused`."""
    version = profile.protocol_version if profile.protocol_version in SUPPORTED_PROTOCOL_VERSIONS else PROTOCOL_VERSION
    if profile.wire_version == V2:
        return _v2_result(refused)
    acp = AcpInitializeResult(
        protocol_version=version, agent_capabilities=_AGENT_CAPABILITIES, agent_info=_AGENT_INFO, auth_methods=[]
    )
    if profile.lsp or not profile.acp:
        # both halves' objects side by side at the root, `_meta` last: the schema's joined
        # `InitializeResult` names these keys, but making that class costs ~0.2 ms (not at the start)
        both: JsonObject = to_builtins(acp) | to_builtins(_LSP_HALF)
        if profile.acp or refused:  # an ACP client that also speaks LSP learns the versions too
            tether = InitializeTetherMeta(protocol_versions=offered if profile.acp else None, config_refused=refused)
            both["_meta"] = to_builtins(InitializeResultMeta(tether=tether))
        return both
    acp.meta = InitializeResultMeta(tether=_tether_meta(offered, refused))
    return acp


def _v2_result(refused: list[RefusedSetting] | None) -> Struct:
    """ACP v2's answer (the generated v2 types' `initialize` area: loaded on a v2 start only):
    `info` and role-agnostic `capabilities`, support markers as `{}` (`session.delete`:
    `session/delete`; no `auth/*`, so `authMethods` is empty)."""
    from tether_protocol.acp_v2 import initialize as v2

    session = v2.SessionCapabilities(
        prompt=v2.PromptCapabilities(embedded_context=v2.PromptEmbeddedContextCapabilities()),
        mcp=v2.McpCapabilities(stdio=v2.McpStdioCapabilities(), http=v2.McpHttpCapabilities()),
        delete=v2.SessionDeleteCapabilities(),
    )
    answer: Struct = v2.InitializeResponse(
        protocol_version=V2,
        info=v2.Implementation(name=_AGENT_INFO.name, title=_AGENT_INFO.title, version=_AGENT_INFO.version),
        capabilities=v2.AgentCapabilities(session=session),
        auth_methods=[],
        meta={"tether": _tether_meta(OFFERED_VERSIONS, refused)},
    )
    return answer


def handshake(
    params: Any, settings: Settings, default_root: Path
) -> tuple[Struct | JsonObject, ClientProfile, Settings]:
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
    # what the workspace config was refused (§9); LSP clients also get a
    # window/showMessage after `initialized`
    refused = refused_settings(settings) or None
    result = initialize_result(profile, OFFERED_VERSIONS if offer_v2 else [PROTOCOL_VERSION], refused)
    return result, profile, settings


def refused_settings(settings: Settings) -> list[RefusedSetting]:
    """The workspace-config keys Tether refused and ignored, as sent to the client."""
    return [
        RefusedSetting(key=item.key, file=item.file, reason=item.reason, message=item.message())
        for item in settings.refused
    ]
