import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Every relative link in README.md and docs/*.md points at a file of the repository,
 * and every #anchor at a heading of that file (GitHub's heading ids), so moving or
 * renaming a page cannot leave a dead link behind.
 */
const ROOT = path.join(__dirname, '..', '..');
const DOCS = path.join(ROOT, 'docs');

function pages(): string[] {
  const docs = fs.existsSync(DOCS) ? fs.readdirSync(DOCS).filter((f) => f.endsWith('.md')).map((f) => path.join(DOCS, f)) : [];
  return [path.join(ROOT, 'README.md'), ...docs];
}

/** The page's text without fenced code blocks and inline code, where brackets are not links. */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's id for a heading: lower case, punctuation dropped, spaces to dashes. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchors(file: string): Set<string> {
  const headings = prose(fs.readFileSync(file, 'utf8')).match(/^#{1,6} .*$/gm) ?? [];
  return new Set(headings.map((h) => slug(h.replace(/^#+ /, ''))));
}

function links(file: string): string[] {
  return [...prose(fs.readFileSync(file, 'utf8')).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!);
}

function problem(page: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined;
  const [file, anchor] = target.split('#') as [string, string | undefined];
  const resolved = file ? path.resolve(path.dirname(page), decodeURIComponent(file)) : page;
  if (!fs.existsSync(resolved)) return `${target}: no such file`;
  if (anchor !== undefined && resolved.endsWith('.md') && !anchors(resolved).has(anchor)) return `${target}: no heading #${anchor}`;
  return undefined;
}

describe('documentation links', () => {
  it('finds the pages and links to check', () => {
    assert.ok(pages().length > 1, 'README.md and docs/*.md');
    assert.ok(pages().some((p) => links(p).length > 0));
  });

  for (const page of pages()) {
    it(`${path.relative(ROOT, page)}: every relative link resolves`, () => {
      const bad = links(page).flatMap((t) => problem(page, t) ?? []);
      assert.deepEqual(bad, []);
    });
  }
});
