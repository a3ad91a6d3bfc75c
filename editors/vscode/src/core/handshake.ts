/**
 * The `initialize` params: Tether is driven as an ACP client (approvals arrive as
 * `session/request_permission`, withdrawn with `$/cancel_request`) and as an LSP client
 * (writes arrive as `workspace/applyEdit`, open documents are synchronised), SPEC §2.2.
 * ACP v2 is asked for (SPEC §12.1) with v1's fields beside v2's, so a v1-only daemon reads
 * the same client from them and answers 1: the connection then goes on in v1.
 */
import { pathToFileURL } from "node:url";
import { basename } from "node:path";
import type { Implementation, InitializeParams } from "../protocol/schema";
import { ACP_V2 } from "./acp_v2";

export interface HandshakeOptions {
  /** the workspace folder, absolute */
  rootPath: string;
  folderName?: string;
  clientName?: string;
  clientVersion?: string;
  /** settings passed to the daemon (SPEC §9); never secrets */
  initializationOptions?: Record<string, unknown>;
  processId?: number;
}

export function initializeParams(o: HandshakeOptions): InitializeParams & { info: Implementation } {
  const rootUri = pathToFileURL(o.rootPath).href;
  const info = { name: o.clientName ?? "tether-vscode", version: o.clientVersion ?? "0.0.0" };
  // the approval card shows every option by name, so "Allow once, with network" is offered;
  // `/clear` opens a new session in this chat view (`_tether/session/cleared`)
  const tether = { namedPermissionOptions: true, clearSession: true };
  // the editor applies writes through workspace/applyEdit, not fs/*
  const lsp = { workspace: { applyEdit: true, workspaceEdit: { documentChanges: true, resourceOperations: ["create"] } } };
  return {
    protocolVersion: ACP_V2,
    info,
    clientInfo: info,
    // v2's `capabilities` (ACP's) and LSP's are one object: their keys differ
    capabilities: { ...lsp, _meta: { tether } },
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, _meta: { tether } },
    processId: o.processId ?? process.pid,
    rootUri,
    workspaceFolders: [{ uri: rootUri, name: o.folderName ?? basename(o.rootPath) }],
    initializationOptions: o.initializationOptions ?? {},
  };
}
