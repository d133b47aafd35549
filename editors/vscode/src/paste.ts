// Pasting an image: VS Code gives an extension only the clipboard's text, and messages are
// written in an input box, which takes text only. A small panel takes the paste instead
// (the browser's paste event carries the image's bytes, in VS Code and in a browser alike).
import { randomBytes } from "node:crypto";
import * as vscode from "vscode";

/** The image types goose-ls sends (it checks the bytes again, whatever the type says). */
const TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];
const IMAGE_URI = /^data:image\/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=]+$/;

/** Open a panel the user pastes an image into (Ctrl+V); resolves to the images pasted, as
 * `data:` URIs, or to none when the panel is closed first. */
export function pasteImages(title: string): Promise<string[]> {
  const panel = vscode.window.createWebviewPanel("gooseLs.pasteImage", title, vscode.ViewColumn.Active, {
    enableScripts: true,
  });
  panel.webview.html = page(randomBytes(16).toString("base64"), panel.webview.cspSource);
  return new Promise((resolve) => {
    let pasted = false;
    panel.webview.onDidReceiveMessage((message: { images?: unknown }) => {
      const images = Array.isArray(message?.images) ? message.images.filter((uri): uri is string => IMAGE_URI.test(String(uri))) : [];
      if (!images.length || pasted) return;
      pasted = true;
      resolve(images);
      panel.dispose();
    });
    panel.onDidDispose(() => {
      if (!pasted) resolve([]);
    });
  });
}

/** The panel's page: one focused area that takes a paste; anything but an image is
 * refused there, saying why, and the panel stays open. */
function page(nonce: string, cspSource: string): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${cspSource} 'unsafe-inline'; script-src 'nonce-${nonce}';">
<style>
  #area { margin: 2em; padding: 3em 1em; border: 2px dashed var(--vscode-focusBorder); text-align: center; outline: none; }
  #why { margin: 0 2em; color: var(--vscode-errorForeground); }
</style></head>
<body>
<div id="area" tabindex="0" contenteditable="true" aria-label="Paste an image here">Press Ctrl+V (⌘V on a Mac) to paste the image on the clipboard. Close this tab to attach nothing.</div>
<p id="why" role="alert"></p>
<script nonce="${nonce}">
  const vscode = acquireVsCodeApi();
  const TYPES = ${JSON.stringify(TYPES)};
  const area = document.getElementById("area");
  const why = document.getElementById("why");
  const read = (file) => new Promise((done, failed) => {
    const reader = new FileReader();
    reader.onload = () => done(reader.result);
    reader.onerror = () => failed(reader.error);
    reader.readAsDataURL(file);
  });
  document.addEventListener("paste", async (event) => {
    event.preventDefault();
    const files = [...(event.clipboardData ? event.clipboardData.files : [])];
    const images = files.filter((file) => TYPES.includes(file.type));
    if (!images.length) {
      why.textContent = files.length
        ? "That is not a PNG, JPEG, GIF or WebP image."
        : "The clipboard holds no image: copy one, then paste here.";
      return;
    }
    try {
      vscode.postMessage({ images: await Promise.all(images.map(read)) });
    } catch (error) {
      why.textContent = "The image could not be read: " + error;
    }
  });
  area.focus();
</script>
</body></html>`;
}
