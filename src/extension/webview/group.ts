/**
 * Where DDBench's webviews open: one editor group beside the code. The first opens
 * beside the active editor; later ones join the group of the DDBench webview last
 * active, so the views share one group instead of splitting the editor further each
 * time. Code opened from a webview (a source line, the agent's trajectory) goes to
 * the other side.
 */
import * as vscode from 'vscode';

/** Live DDBench panels, the one active most recently last. */
const panels: vscode.WebviewPanel[] = [];

/** Counts the panel as a DDBench webview until it is closed. */
export function trackPanel(panel: vscode.WebviewPanel): vscode.Disposable {
  const remove = (): void => {
    const i = panels.indexOf(panel);
    if (i >= 0) panels.splice(i, 1);
  };
  panels.push(panel);
  return vscode.Disposable.from(
    panel.onDidChangeViewState((e) => {
      if (!e.webviewPanel.active) return;
      remove();
      panels.push(panel);
    }),
    panel.onDidDispose(remove),
    { dispose: remove },
  );
}

/** The group a new DDBench webview opens in. */
export function webviewColumn(): vscode.ViewColumn {
  const shown = ddbenchColumn();
  if (shown !== undefined) return shown;
  // Beside an empty group would leave that group empty on the left.
  return vscode.window.tabGroups.activeTabGroup.tabs.length === 0 ? vscode.ViewColumn.Active : vscode.ViewColumn.Beside;
}

/** The group for code opened from a DDBench webview: not the webviews' own. */
export function codeColumn(): vscode.ViewColumn {
  return ddbenchColumn() === vscode.ViewColumn.One ? vscode.ViewColumn.Two : vscode.ViewColumn.One;
}

function ddbenchColumn(): vscode.ViewColumn | undefined {
  for (let i = panels.length - 1; i >= 0; i--) {
    const column = panels[i].viewColumn;
    if (column !== undefined) return column;
  }
  return undefined;
}
