// Placeholder entry of the chat webview (replaced by the webview work).
export {};
