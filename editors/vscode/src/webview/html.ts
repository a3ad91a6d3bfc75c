/** The chat webview's HTML (placeholder until the webview lands; owned by the webview work). */
export interface WebviewHtmlOptions {
  /** `webview.cspSource` */
  cspSource: string;
  /** a fresh random nonce per render */
  nonce: string;
  /** URI of dist/webview.js as the webview may load it */
  scriptUri: string;
  /** URI of dist/webview.css as the webview may load it */
  styleUri: string;
}

export function webviewHtml(o: WebviewHtmlOptions): string {
  return `<!DOCTYPE html><html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${o.cspSource}; script-src 'nonce-${o.nonce}';">
<link rel="stylesheet" href="${o.styleUri}"></head>
<body><div id="app"></div><script nonce="${o.nonce}" src="${o.scriptUri}"></script></body></html>`;
}
