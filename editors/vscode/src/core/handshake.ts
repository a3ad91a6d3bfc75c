/**
 * The `initialize` params: Tether is driven as an ACP client (approvals arrive as
 * `session/request_permission`, withdrawn with `$/cancel_request`) and as an LSP client
 * (writes arrive as `workspace/applyEdit`, open documents are synchronised), SPEC §2.2.
 */
import { pathToFileURL } from "node:url";
import { basename } from "node:path";
import type { InitializeParams } from "../protocol/schema";

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

export function initializeParams(o: HandshakeOptions): InitializeParams {
  const rootUri = pathToFileURL(o.rootPath).href;
  return {
    protocolVersion: 1,
    // the editor applies writes through workspace/applyEdit, not fs/*
    // the approval card shows every option by name, so "Allow once, with network" is offered
    clientCapabilities: {
      fs: { readTextFile: false, writeTextFile: false },
      // `/clear` opens a new session in this chat view (`_tether/session/cleared`)
      _meta: { tether: { namedPermissionOptions: true, clearSession: true } },
    },
    clientInfo: { name: o.clientName ?? "tether-vscode", version: o.clientVersion ?? "0.0.0" },
    processId: o.processId ?? process.pid,
    rootUri,
    workspaceFolders: [{ uri: rootUri, name: o.folderName ?? basename(o.rootPath) }],
    capabilities: {
      workspace: { applyEdit: true, workspaceEdit: { documentChanges: true, resourceOperations: ["create"] } },
    },
    initializationOptions: o.initializationOptions ?? {},
  };
}
