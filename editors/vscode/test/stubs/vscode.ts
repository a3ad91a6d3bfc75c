/**
 * A stub of the `vscode` module for the adapter tests (the real editor cannot be
 * downloaded here). Test bundles resolve `vscode` to this file (build.mjs). It implements
 * the part of the API the extension uses, with real behaviour where the tests depend on it
 * (URIs, ranges, documents and their edits, events, secret storage) and records the rest
 * (commands executed, messages shown, views registered) in `stub` for assertions.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

// ---------------------------------------------------------------- basics

export class Disposable {
  constructor(private readonly callOnDispose: () => void = () => undefined) {}
  static from(...items: { dispose(): unknown }[]): Disposable {
    return new Disposable(() => items.forEach((i) => i.dispose()));
  }
  dispose(): void {
    this.callOnDispose();
  }
}

export type Event<T> = (listener: (e: T) => unknown) => Disposable;

export class EventEmitter<T> {
  private listeners = new Set<(e: T) => unknown>();
  readonly event: Event<T> = (listener) => {
    this.listeners.add(listener);
    return new Disposable(() => this.listeners.delete(listener));
  };
  fire(value: T): void {
    for (const l of [...this.listeners]) l(value);
  }
  dispose(): void {
    this.listeners.clear();
  }
}

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly authority: string,
    readonly path: string,
    readonly query: string,
    readonly fragment: string,
  ) {}
  static file(path: string): Uri {
    return new Uri("file", "", path, "", "");
  }
  static parse(value: string): Uri {
    if (value.startsWith("file://")) {
      const url = new URL(value);
      return new Uri("file", "", fileURLToPath(`file://${url.pathname}`), "", url.hash.slice(1));
    }
    const m = /^([a-zA-Z][\w+.-]*):(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/.exec(value);
    if (!m) throw new Error(`stub Uri.parse: cannot parse ${value}`);
    return new Uri(m[1], m[2] ?? "", decodeURIComponent(m[3]), m[4] ?? "", m[5] ?? "");
  }
  static from(c: { scheme: string; authority?: string; path?: string; query?: string; fragment?: string }): Uri {
    return new Uri(c.scheme, c.authority ?? "", c.path ?? "", c.query ?? "", c.fragment ?? "");
  }
  static joinPath(base: Uri, ...segments: string[]): Uri {
    return base.with({ path: join(base.path, ...segments) });
  }
  get fsPath(): string {
    return this.path;
  }
  with(change: { scheme?: string; path?: string; query?: string; fragment?: string }): Uri {
    return new Uri(
      change.scheme ?? this.scheme,
      this.authority,
      change.path ?? this.path,
      change.query ?? this.query,
      change.fragment ?? this.fragment,
    );
  }
  toString(): string {
    if (this.scheme === "file") return pathToFileURL(this.path).href + (this.fragment ? `#${this.fragment}` : "");
    return `${this.scheme}:${this.authority ? `//${this.authority}` : ""}${encodeURI(this.path)}${this.query ? `?${this.query}` : ""}${this.fragment ? `#${this.fragment}` : ""}`;
  }
  toJSON(): unknown {
    return { scheme: this.scheme, path: this.path, query: this.query };
  }
}

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
  isEqual(other: Position): boolean {
    return this.line === other.line && this.character === other.character;
  }
}

export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(a: Position | number, b: Position | number, c?: number, d?: number) {
    if (typeof a === "number") {
      this.start = new Position(a, b as number);
      this.end = new Position(c as number, d as number);
    } else {
      this.start = a;
      this.end = b as Position;
    }
  }
  get isEmpty(): boolean {
    return this.start.isEqual(this.end);
  }
}

export class Selection extends Range {
  constructor(
    readonly anchor: Position,
    readonly active: Position,
  ) {
    super(anchor, active);
  }
}

export class ThemeColor {
  constructor(readonly id: string) {}
}

export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}
export enum ViewColumn {
  Active = -1,
  One = 1,
}
export enum ConfigurationTarget {
  Global = 1,
  Workspace = 2,
}

export class TabInputTextDiff {
  constructor(
    readonly original: Uri,
    readonly modified: Uri,
  ) {}
}

// ---------------------------------------------------------------- documents and edits

export class TextDocument {
  version = 1;
  isDirty = false;
  isClosed = false;
  constructor(
    readonly uri: Uri,
    private text: string,
    readonly languageId = "plaintext",
  ) {}
  get fileName(): string {
    return this.uri.fsPath;
  }
  getText(range?: Range): string {
    if (!range) return this.text;
    return this.text.slice(this.offsetAt(range.start), this.offsetAt(range.end));
  }
  get lineCount(): number {
    return this.text.split("\n").length;
  }
  offsetAt(p: Position): number {
    const lines = this.text.split("\n");
    let at = 0;
    for (let i = 0; i < p.line && i < lines.length; i++) at += lines[i].length + 1;
    const line = lines[p.line] ?? "";
    return Math.min(at + Math.min(p.character, line.length), this.text.length);
  }
  positionAt(offset: number): Position {
    const before = this.text.slice(0, offset).split("\n");
    return new Position(before.length - 1, before[before.length - 1].length);
  }
  async save(): Promise<boolean> {
    mkdirSync(dirname(this.uri.fsPath), { recursive: true });
    writeFileSync(this.uri.fsPath, this.text);
    this.isDirty = false;
    stub.saved.push(this.uri.fsPath);
    return true;
  }
  /** Replaces ranges like the editor does: one version per edit batch, change events fired. */
  applyEdits(edits: { range: Range; newText: string }[]): void {
    const sorted = [...edits].sort((a, b) => this.offsetAt(b.range.start) - this.offsetAt(a.range.start));
    const changes = sorted.map((e) => ({ range: e.range, rangeOffset: this.offsetAt(e.range.start), rangeLength: 0, text: e.newText }));
    for (const e of sorted) {
      this.text = this.text.slice(0, this.offsetAt(e.range.start)) + e.newText + this.text.slice(this.offsetAt(e.range.end));
    }
    this.version += 1;
    this.isDirty = true;
    workspaceEvents.change.fire({ document: this, contentChanges: changes, reason: undefined });
  }
}

type FileOperation =
  | { kind: "replace"; uri: Uri; range: Range; newText: string }
  | { kind: "create"; uri: Uri; options?: { overwrite?: boolean; ignoreIfExists?: boolean } }
  | { kind: "rename"; oldUri: Uri; newUri: Uri; options?: unknown }
  | { kind: "delete"; uri: Uri; options?: unknown };

export class WorkspaceEdit {
  readonly operations: FileOperation[] = [];
  replace(uri: Uri, range: Range, newText: string): void {
    this.operations.push({ kind: "replace", uri, range, newText });
  }
  insert(uri: Uri, position: Position, newText: string): void {
    this.replace(uri, new Range(position, position), newText);
  }
  delete(uri: Uri, range: Range): void {
    this.replace(uri, range, "");
  }
  createFile(uri: Uri, options?: { overwrite?: boolean; ignoreIfExists?: boolean }): void {
    this.operations.push({ kind: "create", uri, options });
  }
  renameFile(oldUri: Uri, newUri: Uri, options?: unknown): void {
    this.operations.push({ kind: "rename", oldUri, newUri, options });
  }
  deleteFile(uri: Uri, options?: unknown): void {
    this.operations.push({ kind: "delete", uri, options });
  }
  get size(): number {
    return this.operations.length;
  }
}

// ---------------------------------------------------------------- workspace

const workspaceEvents = {
  open: new EventEmitter<TextDocument>(),
  change: new EventEmitter<{ document: TextDocument; contentChanges: unknown[]; reason: undefined }>(),
  close: new EventEmitter<TextDocument>(),
  configuration: new EventEmitter<{ affectsConfiguration(section: string): boolean }>(),
  folders: new EventEmitter<{ added: WorkspaceFolder[]; removed: WorkspaceFolder[] }>(),
};

export interface WorkspaceFolder {
  uri: Uri;
  name: string;
  index: number;
}

function languageOf(path: string): string {
  if (path.endsWith(".py")) return "python";
  if (path.endsWith(".md")) return "markdown";
  if (path.endsWith(".ts")) return "typescript";
  return "plaintext";
}

export const workspace = {
  get workspaceFolders(): WorkspaceFolder[] | undefined {
    return stub.folders.length ? stub.folders : undefined;
  },
  get textDocuments(): TextDocument[] {
    return stub.documents.filter((d) => !d.isClosed);
  },
  getWorkspaceFolder(uri: Uri): WorkspaceFolder | undefined {
    return stub.folders
      .filter((f) => uri.fsPath === f.uri.fsPath || uri.fsPath.startsWith(f.uri.fsPath + sep))
      .sort((a, b) => b.uri.fsPath.length - a.uri.fsPath.length)[0];
  },
  asRelativePath(pathOrUri: string | Uri): string {
    const path = typeof pathOrUri === "string" ? pathOrUri : pathOrUri.fsPath;
    const folder = workspace.getWorkspaceFolder(Uri.file(path));
    return folder ? relative(folder.uri.fsPath, path) : path;
  },
  getConfiguration(section: string) {
    return {
      // the effective value: a workspace value (e.g. a cloned repo's .vscode/settings.json) wins
      get<T>(key: string, defaultValue?: T): T | undefined {
        const full = `${section}.${key}`;
        if (full in stub.workspaceSettings) return stub.workspaceSettings[full] as T;
        return full in stub.settings ? (stub.settings[full] as T) : defaultValue;
      },
      inspect<T>(key: string): { globalValue?: T; workspaceValue?: T; workspaceFolderValue?: T } {
        const full = `${section}.${key}`;
        return {
          globalValue: stub.settings[full] as T | undefined,
          workspaceValue: stub.workspaceSettings[full] as T | undefined,
        };
      },
    };
  },
  onDidOpenTextDocument: workspaceEvents.open.event,
  onDidChangeTextDocument: workspaceEvents.change.event,
  onDidCloseTextDocument: workspaceEvents.close.event,
  onDidChangeConfiguration: workspaceEvents.configuration.event,
  onDidChangeWorkspaceFolders: workspaceEvents.folders.event,
  registerTextDocumentContentProvider(scheme: string, provider: { provideTextDocumentContent(uri: Uri): string }): Disposable {
    stub.contentProviders.set(scheme, provider);
    return new Disposable(() => stub.contentProviders.delete(scheme));
  },
  async openTextDocument(uri: Uri): Promise<TextDocument> {
    return stub.openDocument(uri.fsPath, { quiet: false });
  },
  /** Applies like VS Code: all or nothing, to the open buffer (opened in the background if needed). */
  async applyEdit(edit: WorkspaceEdit, metadata?: unknown): Promise<boolean> {
    stub.appliedEdits.push({ edit, metadata });
    if (stub.refuseEdits) return false;
    const byDoc = new Map<TextDocument, { range: Range; newText: string }[]>();
    for (const op of edit.operations) {
      if (op.kind === "create") {
        if (existsSync(op.uri.fsPath) && op.options?.ignoreIfExists) continue;
        mkdirSync(dirname(op.uri.fsPath), { recursive: true });
        writeFileSync(op.uri.fsPath, "");
      } else if (op.kind === "replace") {
        const doc = stub.openDocument(op.uri.fsPath, { quiet: false });
        byDoc.set(doc, [...(byDoc.get(doc) ?? []), { range: op.range, newText: op.newText }]);
      }
    }
    for (const [doc, edits] of byDoc) doc.applyEdits(edits);
    return true;
  },
};

// ---------------------------------------------------------------- window

export interface RecordedMessage {
  level: "info" | "warning" | "error";
  message: string;
  options?: { modal?: boolean; detail?: string };
  items: string[];
}

class OutputChannel {
  readonly lines: string[] = [];
  shown = false;
  constructor(readonly name: string) {}
  appendLine(line: string): void {
    this.lines.push(line);
  }
  append(text: string): void {
    this.lines.push(text);
  }
  clear(): void {
    this.lines.length = 0;
  }
  show(): void {
    this.shown = true;
  }
  hide(): void {}
  dispose(): void {}
}

class StatusBarItem {
  text = "";
  tooltip: string | undefined;
  name: string | undefined;
  command: string | undefined;
  backgroundColor: ThemeColor | undefined;
  visible = false;
  show(): void {
    this.visible = true;
  }
  hide(): void {
    this.visible = false;
  }
  dispose(): void {}
}

interface Tab {
  label: string;
  input: unknown;
}

function showMessage(level: RecordedMessage["level"]) {
  return async (message: string, ...rest: unknown[]): Promise<string | undefined> => {
    let options: RecordedMessage["options"];
    if (rest.length && typeof rest[0] === "object" && rest[0] !== null) options = rest.shift() as RecordedMessage["options"];
    const items = rest.map(String);
    const record: RecordedMessage = { level, message, options, items };
    stub.messages.push(record);
    return stub.answerMessage(record);
  };
}

export const window = {
  get activeTextEditor(): { document: TextDocument; selection: Selection } | undefined {
    return stub.activeEditor;
  },
  createOutputChannel(name: string): OutputChannel {
    const channel = new OutputChannel(name);
    stub.outputChannels.push(channel);
    return channel;
  },
  createStatusBarItem(): StatusBarItem {
    const item = new StatusBarItem();
    stub.statusBarItems.push(item);
    return item;
  },
  registerWebviewViewProvider(viewId: string, provider: unknown): Disposable {
    stub.viewProviders.set(viewId, provider as WebviewViewProvider);
    return new Disposable(() => stub.viewProviders.delete(viewId));
  },
  showInformationMessage: showMessage("info"),
  showWarningMessage: showMessage("warning"),
  showErrorMessage: showMessage("error"),
  async showQuickPick<T>(items: T[] | Promise<T[]>, options?: unknown): Promise<T | T[] | undefined> {
    const list = await items;
    stub.quickPicks.push({ items: list, options });
    return stub.answerQuickPick(list, options) as T | T[] | undefined;
  },
  async showInputBox(options?: unknown): Promise<string | undefined> {
    stub.inputBoxes.push(options);
    return stub.answerInputBox(options);
  },
  async showTextDocument(target: Uri | TextDocument, options?: { selection?: Range }): Promise<unknown> {
    const uri = target instanceof Uri ? target : target.uri;
    stub.shownDocuments.push({ uri, selection: options?.selection });
    return {};
  },
  tabGroups: {
    get all(): { tabs: Tab[] }[] {
      return [{ tabs: stub.tabs }];
    },
    get activeTabGroup(): { activeTab: Tab | undefined; tabs: Tab[] } {
      return { activeTab: stub.tabs[stub.tabs.length - 1], tabs: stub.tabs };
    },
    async close(tabs: Tab | Tab[]): Promise<boolean> {
      const closing = Array.isArray(tabs) ? tabs : [tabs];
      stub.closedTabs.push(...closing);
      stub.tabs = stub.tabs.filter((t) => !closing.includes(t));
      return true;
    },
  },
};

// ---------------------------------------------------------------- commands, env

export const commands = {
  registerCommand(id: string, run: (...args: unknown[]) => unknown): Disposable {
    if (stub.commands.has(id)) throw new Error(`command ${id} already registered`);
    stub.commands.set(id, run);
    return new Disposable(() => stub.commands.delete(id));
  },
  async executeCommand(id: string, ...args: unknown[]): Promise<unknown> {
    stub.executed.push({ id, args });
    const run = stub.commands.get(id);
    if (run) return run(...args);
    if (id === "vscode.diff") {
      const [left, right, title] = args as [Uri, Uri, string];
      stub.tabs.push({ label: title, input: new TabInputTextDiff(left, right) });
    }
    return undefined;
  },
};

export const env = {
  clipboard: {
    async writeText(text: string): Promise<void> {
      stub.clipboard = text;
    },
    async readText(): Promise<string> {
      return stub.clipboard;
    },
  },
};

// ---------------------------------------------------------------- webview views

interface WebviewViewProvider {
  resolveWebviewView(view: unknown, context: unknown, token: unknown): void | Promise<void>;
}

/** A chat view as VS Code would hand it to the provider; the test plays the webview. */
export class StubWebviewView {
  visible = true;
  readonly posted: unknown[] = [];
  private readonly received = new EventEmitter<unknown>();
  private readonly disposed = new EventEmitter<void>();
  private readonly visibility = new EventEmitter<void>();
  readonly webview = {
    html: "",
    options: {} as { enableScripts?: boolean; localResourceRoots?: Uri[] },
    cspSource: "https://stub.vscode-cdn.net",
    asWebviewUri: (uri: Uri) => uri.with({ scheme: "https" }),
    postMessage: async (message: unknown) => {
      if (!this.visible) return false;
      this.posted.push(JSON.parse(JSON.stringify(message)));
      return true;
    },
    onDidReceiveMessage: this.received.event,
  };
  readonly onDidDispose = this.disposed.event;
  readonly onDidChangeVisibility = this.visibility.event;
  show(): void {
    this.visible = true;
    this.visibility.fire();
  }
  /** the webview posts a message to the extension */
  send(message: unknown): void {
    this.received.fire(message);
  }
  hide(): void {
    this.visible = false;
    this.visibility.fire();
  }
}

// ---------------------------------------------------------------- the recorder

class SecretStorage {
  readonly values = new Map<string, string>();
  readonly calls: string[] = [];
  private readonly changed = new EventEmitter<{ key: string }>();
  readonly onDidChange = this.changed.event;
  async get(key: string): Promise<string | undefined> {
    this.calls.push(`get ${key}`);
    return this.values.get(key);
  }
  async store(key: string, value: string): Promise<void> {
    this.calls.push(`store ${key}`);
    this.values.set(key, value);
    this.changed.fire({ key });
  }
  async delete(key: string): Promise<void> {
    this.calls.push(`delete ${key}`);
    this.values.delete(key);
    this.changed.fire({ key });
  }
}

class Stub {
  folders: WorkspaceFolder[] = [];
  settings: Record<string, unknown> = {}; // user settings
  workspaceSettings: Record<string, unknown> = {}; // the workspace's .vscode/settings.json
  documents: TextDocument[] = [];
  activeEditor: { document: TextDocument; selection: Selection } | undefined;
  commands = new Map<string, (...args: unknown[]) => unknown>();
  executed: { id: string; args: unknown[] }[] = [];
  messages: RecordedMessage[] = [];
  quickPicks: { items: unknown[]; options: unknown }[] = [];
  inputBoxes: unknown[] = [];
  shownDocuments: { uri: Uri; selection?: Range }[] = [];
  outputChannels: OutputChannel[] = [];
  statusBarItems: StatusBarItem[] = [];
  viewProviders = new Map<string, WebviewViewProvider>();
  contentProviders = new Map<string, { provideTextDocumentContent(uri: Uri): string }>();
  appliedEdits: { edit: WorkspaceEdit; metadata: unknown }[] = [];
  saved: string[] = [];
  tabs: Tab[] = [];
  closedTabs: Tab[] = [];
  clipboard = "";
  refuseEdits = false;
  /** how the "user" answers; tests replace these */
  answerMessage: (m: RecordedMessage) => string | undefined = () => undefined;
  answerQuickPick: (items: unknown[], options: unknown) => unknown = () => undefined;
  answerInputBox: (options: unknown) => string | undefined = () => undefined;

  reset(): void {
    Object.assign(this, new Stub());
  }

  addFolder(path: string, name = path.split(sep).pop() ?? path): WorkspaceFolder {
    const folder = { uri: Uri.file(path), name, index: this.folders.length };
    this.folders.push(folder);
    return folder;
  }

  /** A folder added while the extension runs (VS Code fires onDidChangeWorkspaceFolders). */
  folderAdded(path: string, name?: string): WorkspaceFolder {
    const folder = this.addFolder(path, name);
    workspaceEvents.folders.fire({ added: [folder], removed: [] });
    return folder;
  }

  /** A folder removed while the extension runs. */
  folderRemoved(folder: WorkspaceFolder): void {
    this.folders = this.folders.filter((f) => f !== folder);
    workspaceEvents.folders.fire({ added: [], removed: [folder] });
  }

  /** A document as if the user (or VS Code in the background) opened it. */
  openDocument(path: string, { quiet = false }: { quiet?: boolean } = {}): TextDocument {
    const open = this.documents.find((d) => d.uri.fsPath === path && !d.isClosed);
    if (open) return open;
    const doc = new TextDocument(Uri.file(path), existsSync(path) ? readFileSync(path, "utf8") : "", languageOf(path));
    this.documents.push(doc);
    if (!quiet) workspaceEvents.open.fire(doc);
    return doc;
  }

  /** The user types: replaces a range of an open document. */
  type(doc: TextDocument, range: Range, text: string): void {
    doc.applyEdits([{ range, newText: text }]);
  }

  closeDocument(doc: TextDocument): void {
    doc.isClosed = true;
    workspaceEvents.close.fire(doc);
  }

  select(doc: TextDocument, start: Position, end: Position): void {
    this.activeEditor = { document: doc, selection: new Selection(start, end) };
  }

  changeSettings(changes: Record<string, unknown>): void {
    Object.assign(this.settings, changes);
    workspaceEvents.configuration.fire({
      affectsConfiguration: (section: string) => Object.keys(changes).some((k) => k === section || k.startsWith(`${section}.`)),
    });
  }

  /** VS Code resolving the view when the user opens it. */
  async resolveView(viewId: string): Promise<StubWebviewView> {
    const provider = this.viewProviders.get(viewId);
    if (!provider) throw new Error(`no webview view provider for ${viewId}`);
    const view = new StubWebviewView();
    await provider.resolveWebviewView(view, { state: undefined }, { isCancellationRequested: false });
    return view;
  }

  /** What VS Code would show for a virtual document. */
  contentOf(uri: Uri): string {
    const provider = this.contentProviders.get(uri.scheme);
    if (!provider) throw new Error(`no content provider for ${uri.scheme}:`);
    return provider.provideTextDocumentContent(uri);
  }

  extensionContext(extensionPath: string, packageJSON: unknown) {
    const subscriptions: { dispose(): unknown }[] = [];
    return {
      subscriptions,
      extensionUri: Uri.file(extensionPath),
      extensionPath,
      secrets: new SecretStorage(),
      extension: { packageJSON },
      globalState: new Map(),
      workspaceState: new Map(),
    };
  }
}

export const stub = new Stub();
