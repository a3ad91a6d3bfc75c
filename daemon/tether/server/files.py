"""Where tools read and write files: the editor when it can, the disk otherwise.

Owns: the choice by the client's `initialize`: reads (open buffer, ACP `fs/read_text_file`, disk),
writes (ACP `fs/write_text_file`, LSP `workspace/applyEdit`, atomic write on disk), deletes
and moves (the disk); the editors' quirks it absorbs are in docs/decisions/0018.
Must not: decide whether a change is allowed (the approval gate did) or bypass the sandbox.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, TypeVar

from tether_protocol import DEFAULT_MAX_MESSAGE, InvalidParams, structure, unstructure

from ..tools.base import ToolError
from ..tools.disk_io import DiskFileIO
from ..transport.rpc import ClientRequestFailed
from .documents import end_position

if TYPE_CHECKING:
    from pathlib import Path

    from ..services.ports import ClientAbilities, OpenBuffers
    from ..tools.sandbox import WorkspaceSandbox
    from ..transport.rpc import TetherRPC


# A file larger than this on disk is read from the disk, not asked of the editor: its whole text,
# JSON-escaped (up to 6 times as long), must fit in one message under the daemon's frame limit
# (at least DEFAULT_MAX_MESSAGE), or the answer is skipped unread and the tool waits for ever.
_EDITOR_READ_MAX = DEFAULT_MAX_MESSAGE // 8


def _too_large_to_ask(path: Path) -> bool:
    try:
        return os.stat(path).st_size > _EDITOR_READ_MAX
    except OSError:  # not on disk (a new buffer): the editor may still have it
        return False


class EditorFiles:
    def __init__(
        self,
        *,
        session_id: str,
        sandbox: WorkspaceSandbox,
        documents: OpenBuffers,
        client: ClientAbilities | None,
        rpc: TetherRPC,
    ) -> None:
        self.session_id = session_id
        self.disk = DiskFileIO(sandbox)
        self.documents = documents
        self.client = client
        self.rpc = rpc

    async def editor_text(self, path: Path) -> str | None:
        """The editor's text of `path` when the editor has one to give, else None (also
        for an empty text of a path that is not on disk: nothing there to keep)."""
        text = await self._editor_text(path)
        if text == "" and not os.path.lexists(path):
            return None
        return text

    async def _editor_text(self, path: Path) -> str | None:
        doc = self.documents.get(path)
        if doc is not None:
            return doc.text
        if self.client is not None and self.client.fs_read_text_file and not _too_large_to_ask(path):
            from tether_protocol import ReadTextFileParams, ReadTextFileResult

            try:
                result = await self._ask("fs/read_text_file", ReadTextFileParams(self.session_id, str(path)), str(path))
            except ToolError:
                return None  # the editor could not read it: the disk answers (and explains)
            read = _answer(result, ReadTextFileResult, "fs/read_text_file")
            if read is not None:
                return read.content
        return None

    async def read_text(self, path: Path) -> str:
        text = await self.editor_text(path)
        return text if text is not None else await self.disk.read_text(path)

    async def write_text(self, path: Path, text: str) -> None:
        self.disk.sandbox.check_not_under_git(path)  # as it is now, after the approval
        client = self.client
        if client is not None and client.fs_write_text_file:
            # avante writes with io.open, which needs the directory: a new file's parents
            # are made here (approved with the file; the disk is where editors look)
            await self.disk.make_parents(path)
            from tether_protocol import WriteTextFileParams

            params = WriteTextFileParams(self.session_id, str(path), text)
            result = await self._ask("fs/write_text_file", params, str(path))
            if isinstance(result, str):  # avante answers a failed write with its message as the result
                raise ToolError(f"the editor could not write {path.name}: {result}; nothing was written")
            return
        if (
            client is not None
            and client.lsp_apply_edit
            and (client.lsp_create_file or self.documents.get(path) is not None or path.exists())
        ):
            await self._apply_edit(path, text)
            return
        # on disk; also a new file for an LSP client that declared no "create" (eglot 1.9),
        # as no WorkspaceEdit it takes can make a file
        await self.disk.write_text(path, text)

    async def delete(self, path: Path) -> None:
        await self.disk.delete(path)

    async def move(self, source: Path, target: Path) -> None:
        await self.disk.move(source, target)

    async def _apply_edit(self, path: Path, text: str) -> None:
        # LSP message types: imported only when a client uses LSP's side (never on ACP's start path)
        from tether_protocol import (
            ApplyWorkspaceEditParams,
            ApplyWorkspaceEditResult,
            CreateFile,
            CreateFileOptions,
            OptionalVersionedTextDocumentIdentifier,
            Position,
            Range,
            TextDocumentEdit,
            TextEdit,
            WorkspaceEdit,
        )

        doc = self.documents.get(path)
        uri = doc.uri if doc is not None else path.as_uri()
        changes: list[TextDocumentEdit | CreateFile] = []
        if doc is not None:
            current = doc.text
        elif path.exists():
            current = await self.disk.read_text(path)
        else:
            current = ""
            # the folder first: with `ignoreIfExists` Neovim makes neither folder nor file
            # (only a buffer), and a buffer in a missing folder cannot be saved
            await self.disk.make_parents(path)
            changes.append(CreateFile(uri=uri, options=CreateFileOptions(ignore_if_exists=True)))
        whole = Range(Position(0, 0), Position(**end_position(current)))
        if not current and doc is None and text.endswith("\n"):
            # the new file's whole text, its last line included: an editor that keeps a
            # final newline of its own (Neovim's 'eol') then saves no extra blank line
            whole = Range(Position(0, 0), Position(1, 0))
        version = doc.version if doc is not None else None
        changes.append(TextDocumentEdit(OptionalVersionedTextDocumentIdentifier(uri, version), [TextEdit(whole, text)]))
        label = f"Tether: edit {path.name}"
        params = ApplyWorkspaceEditParams(label=label, edit=WorkspaceEdit(changes))
        result = _answer(await self._ask("workspace/applyEdit", params, label), ApplyWorkspaceEditResult, "")
        if result is None or not result.applied:
            reason = result.failure_reason if result is not None else None
            raise ToolError(
                f"the editor did not apply the edit to {path.name}"
                f"{f': {reason}' if reason else ''}; read the file again and retry"
            )
        if doc is not None:
            # The editor will send didChange; until then, tools see what we asked for.
            self.documents.texts[str(path)] = text

    async def _ask(self, method: str, params: object, target: str) -> object:
        """The client's answer to `method` (raw JSON: read with `_answer`)."""
        try:
            return await self.rpc.request(method, unstructure(params))
        except ClientRequestFailed as exc:
            raise ToolError(f"the editor refused {method} ({target}): {exc.error_message}") from None
        except ConnectionError:
            raise ToolError(f"the editor's window closed before it answered {method} ({target})") from None


T = TypeVar("T")


def _answer(result: object, cls: type[T], method: str) -> T | None:
    """The client's answer as `cls`, or None for one that is not (counted as a failure)."""
    try:
        return structure(result, cls, method=method)
    except InvalidParams:
        return None
