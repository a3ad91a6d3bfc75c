/**
 * The chat webview's HTML, for the extension's WebviewViewProvider. The page loads only
 * its own script (by nonce) and stylesheet (from the webview's resource origin); nothing
 * remote, no eval, no inline script or style without the nonce.
 */
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

function attr(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
}

export function contentSecurityPolicy(o: Pick<WebviewHtmlOptions, "cspSource" | "nonce">): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${o.nonce}'`,
    `style-src ${o.cspSource} 'nonce-${o.nonce}'`,
    `img-src ${o.cspSource} data:`,
    `font-src ${o.cspSource}`,
  ].join("; ");
}

export function webviewHtml(o: WebviewHtmlOptions): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${attr(contentSecurityPolicy(o))}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="${attr(o.styleUri)}">
<title>Tether</title>
</head>
<body>
<div id="app"></div>
<script nonce="${attr(o.nonce)}" src="${attr(o.scriptUri)}"></script>
</body>
</html>
`;
}
