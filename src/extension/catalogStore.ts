import * as vscode from 'vscode';
import { loadCatalog, type Catalog } from '../core/bugs/catalog';

/**
 * Loads the bug set once and on demand again, so the Bugs view and the Open Bug picker
 * show the same catalogue. Its root is core's default (DDBENCH_BUGS, else the bug set
 * shipped inside the extension), the same one the CLI and the reproducer use.
 */
export class CatalogStore implements vscode.Disposable {
  private loading: Promise<Catalog> | undefined;
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;

  constructor(
    /** Told each manifest that could not be loaded; the rest of the set still loads. */
    private readonly onProblem: (problem: string) => void,
  ) {}

  get(): Promise<Catalog> {
    if (this.loading) return this.loading;
    const loading = loadCatalog();
    this.loading = loading;
    loading.then(
      (catalog) => catalog.problems.forEach(this.onProblem),
      () => {
        // A failed load is not cached, so Refresh (or the next use) tries again.
        if (this.loading === loading) this.loading = undefined;
      },
    );
    return loading;
  }

  refresh(): void {
    this.loading = undefined;
    this.changed.fire();
  }

  dispose(): void {
    this.changed.dispose();
  }
}
