import * as fs from 'node:fs';
import * as path from 'node:path';
import { Linter, type Rule } from 'eslint';

/**
 * Static analysis of a system's source tree, for comparing a bug's buggy workspace with
 * its fixed source: whatever is unused, unsent or unread in the buggy code but used in
 * the fixed code points a reader at the fix.
 */

export interface Finding {
  /** What found it: eslint's no-unused-vars, knip, or this module's AST passes. */
  check: 'no-unused-vars' | 'knip-exports' | 'knip-files' | 'message-type' | 'field' | 'logged-only';
  file: string;
  line: number;
  name: string;
  detail: string;
}

interface Site {
  file: string;
  line: number;
}

export interface TreeFacts {
  /** Findings that stand on their own in one tree (unused variables, exports, files, variables only logged). */
  findings: Finding[];
  /** Message types a handler matches on (`case 'X':`, `type === 'X'`), with where. */
  handled: Map<string, Site>;
  /** Every other string literal: what the code sends, stores or passes on. */
  mentioned: Set<string>;
  /** Property names the code writes (object keys, assignments, class members), with where. */
  written: Map<string, Site>;
  /** Property names read outside log calls. */
  read: Set<string>;
  /** Property names read as arguments of log calls. */
  logged: Set<string>;
}

/** Names a dispatcher switches on: `switch (type)`, `msg.type === 'X'`, `req.op`. */
const DISPATCH = new Set(['type', 'op', 'action']);
const LOG_LEVELS = new Set(['debug', 'info', 'warn', 'error']);
const SOURCE = /\.(m?js)$/;

/** The few ESTree fields these passes read; the AST is ESLint's (espree). */
interface Node {
  type: string;
  parent: Node | null;
  loc?: { start: { line: number } } | null;
  [field: string]: unknown;
}
const at = (n: Node, field: string): Node => n[field] as Node;

type Fact = { kind: 'handled' | 'mentioned' | 'written' | 'read' | 'logged' | 'logged-only'; name: string; line: number };

function lastName(node: Node): string | undefined {
  if (node.type === 'Identifier') return node.name as string;
  if (node.type === 'MemberExpression' && !node.computed && at(node, 'property').type === 'Identifier') return at(node, 'property').name as string;
  return undefined;
}

function isDispatchOperand(node: Node): boolean {
  const name = lastName(node);
  return name !== undefined && DISPATCH.has(name);
}

/** `rt.log.info(...)`, `this.rt.log.warn(...)`, `log.debug(...)`. */
function isLogCall(node: Node): boolean {
  if (node.type !== 'CallExpression') return false;
  const callee = at(node, 'callee');
  const level = lastName(callee);
  return callee.type === 'MemberExpression' && level !== undefined && LOG_LEVELS.has(level) && lastName(at(callee, 'object')) === 'log';
}

function insideLogCall(node: Node): boolean {
  for (let n: Node = node; n.parent; n = n.parent) {
    if (isLogCall(n.parent) && (n.parent.arguments as Node[]).includes(n)) return true;
  }
  return false;
}

function handledLiteral(lit: Node): boolean {
  const p = lit.parent;
  if (!p) return false;
  if (p.type === 'SwitchCase') return p.test === lit && p.parent !== null && isDispatchOperand(at(p.parent, 'discriminant'));
  if (p.type === 'BinaryExpression' && ['===', '!==', '==', '!='].includes(p.operator as string)) {
    return isDispatchOperand(p.left === lit ? at(p, 'right') : at(p, 'left'));
  }
  return false;
}

function keyName(owner: Node, field: string): string | undefined {
  const key = at(owner, field);
  if (owner.computed) return undefined;
  if (key.type === 'Identifier') return key.name as string;
  if (key.type === 'Literal' && typeof key.value === 'string') return key.value;
  return undefined;
}

interface Def {
  type: string;
  node: Node;
}

/** A caught error, in a catch clause or a promise's `.catch` callback: logging it is its use (as no-unused-vars' caughtErrors: 'none'). */
function isCaughtError(def: Def): boolean {
  if (def.type === 'CatchClause') return true;
  const call = def.type === 'Parameter' ? def.node.parent : null;
  return call?.type === 'CallExpression' && lastName(at(call, 'callee')) === 'catch';
}

/** Collects the facts above; it reports each as a message whose text is the fact in JSON. */
const factsRule: Rule.RuleModule = {
  meta: { type: 'problem', schema: [] },
  create(context) {
    const report = (node: Node, fact: Fact): void => context.report({ node: node as unknown as Rule.Node, message: JSON.stringify(fact) });
    const line = (node: Node): number => node.loc?.start.line ?? 0;
    const listener: Record<string, (node: Node) => void> = {
      Literal(lit) {
        if (typeof lit.value !== 'string') return;
        const p = lit.parent;
        if (!p || (p.type === 'Property' && p.key === lit) || p.type === 'ImportDeclaration' || p.type === 'ExportNamedDeclaration') return;
        report(lit, { kind: handledLiteral(lit) ? 'handled' : 'mentioned', name: lit.value, line: line(lit) });
      },
      Property(prop) {
        const name = keyName(prop, 'key');
        if (name === undefined) return;
        // A key in a destructuring pattern reads the property; in an object literal it writes one.
        const reading = prop.parent?.type === 'ObjectPattern';
        report(prop, { kind: reading ? (insideLogCall(prop) ? 'logged' : 'read') : 'written', name, line: line(prop) });
      },
      'MethodDefinition, PropertyDefinition'(member) {
        const name = keyName(member, 'key');
        if (name === undefined || member.kind === 'constructor') return;
        report(member, { kind: 'written', name, line: line(member) });
      },
      MemberExpression(m) {
        const name = keyName(m, 'property');
        if (name === undefined) return;
        const p = m.parent;
        const plainWrite = p?.type === 'AssignmentExpression' && p.left === m && p.operator === '=';
        report(m, { kind: plainWrite ? 'written' : insideLogCall(m) ? 'logged' : 'read', name, line: line(m) });
      },
      'Program:exit'(program) {
        for (const scope of context.sourceCode.scopeManager.scopes) {
          for (const v of scope.variables) {
            if (v.defs.length === 0 || isCaughtError(v.defs[0] as unknown as Def)) continue;
            const reads = v.references.filter((r) => r.isRead());
            if (reads.length > 0 && reads.every((r) => insideLogCall(r.identifier as unknown as Node))) {
              report(program, { kind: 'logged-only', name: v.name, line: v.defs[0].name.loc?.start.line ?? 0 });
            }
          }
        }
      },
    };
    return listener as Rule.RuleListener;
  },
};

const CONFIG: Linter.Config[] = [
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { ecmaVersion: 'latest', sourceType: 'module' },
    plugins: { leaks: { rules: { facts: factsRule } } },
    rules: {
      'no-unused-vars': ['error', { args: 'all', caughtErrors: 'none' }],
      'leaks/facts': 'error',
    },
  },
];

function sourceFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => SOURCE.test(f))
    .map((f) => path.join(dir, f))
    .sort();
}

const UNUSED_NAME = /^'([^']+)'/;

/** ESLint's findings and the AST facts of every source file under `root/src`. */
export function lintTree(root: string): TreeFacts {
  const facts: TreeFacts = { findings: [], handled: new Map(), mentioned: new Set(), written: new Map(), read: new Set(), logged: new Set() };
  const linter = new Linter({ configType: 'flat' });
  for (const abs of sourceFiles(path.join(root, 'src'))) {
    const file = path.relative(root, abs);
    const messages = linter.verify(fs.readFileSync(abs, 'utf8'), CONFIG, { filename: file });
    for (const m of messages) {
      if (m.fatal) throw new Error(`${file}:${m.line}: ${m.message}`);
      if (m.ruleId === 'no-unused-vars') {
        const name = UNUSED_NAME.exec(m.message)?.[1] ?? m.message;
        facts.findings.push({ check: 'no-unused-vars', file, line: m.line, name, detail: m.message });
        continue;
      }
      const fact = JSON.parse(m.message) as Fact;
      if (fact.kind === 'logged-only') {
        facts.findings.push({ check: 'logged-only', file, line: fact.line, name: fact.name, detail: `'${fact.name}' is only ever logged` });
      } else if (fact.kind === 'handled' || fact.kind === 'written') {
        // The first site is the one a finding names.
        if (!facts[fact.kind].has(fact.name)) facts[fact.kind].set(fact.name, { file, line: fact.line });
      } else {
        facts[fact.kind].add(fact.name);
      }
    }
  }
  return facts;
}

type KnipIssues = Record<string, Record<string, Record<string, { symbol: string; line?: number }>>>;

/** knip's unused files and exports, per tree; `trees` maps a name to a system folder and its entry. */
export async function knipTrees(workRoot: string, trees: Map<string, { dir: string; entry: string }>): Promise<Map<string, Finding[]>> {
  // One knip run over a workspace per tree is much faster than one run per tree.
  const workspaces: Record<string, { entry: string[]; project: string[] }> = {};
  for (const { dir, entry } of trees.values()) {
    const rel = path.relative(workRoot, dir);
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: rel.replace(/[^a-z0-9]+/gi, '-'), private: true, type: 'module' }));
    workspaces[rel] = { entry: [entry, 'scenarios/**/*.mjs'], project: ['src/**/*.{js,mjs}', 'scenarios/**/*.mjs'] };
  }
  fs.writeFileSync(path.join(workRoot, 'package.json'), JSON.stringify({ name: 'leak-check', private: true, workspaces: Object.keys(workspaces) }));
  fs.writeFileSync(path.join(workRoot, 'knip.json'), JSON.stringify({ workspaces, ignoreDependencies: [/.*/.source] }));
  // knip's published types (dist/types.d.ts) omit `main`, which its index exports.
  const { main } = (await import('knip')) as unknown as { main(options: unknown): Promise<{ issues: KnipIssues }> };
  const { createOptions } = await import('knip/session');
  const { issues } = await main(await createOptions({ cwd: workRoot, isShowProgress: false }));
  const out = new Map<string, Finding[]>([...trees.keys()].map((k) => [k, []]));
  const owner = (abs: string): [string, string] | undefined => {
    for (const [name, { dir }] of trees) if (abs.startsWith(dir + path.sep)) return [name, path.relative(dir, abs)];
    return undefined;
  };
  for (const abs of Object.keys(issues.files)) {
    const o = owner(path.resolve(workRoot, abs));
    if (o) out.get(o[0])!.push({ check: 'knip-files', file: o[1], line: 1, name: path.basename(o[1]), detail: 'unused file' });
  }
  for (const type of ['exports', 'types', 'nsExports', 'nsTypes'] as const) {
    for (const [abs, records] of Object.entries(issues[type])) {
      const o = owner(path.resolve(workRoot, abs));
      if (!o) continue;
      for (const issue of Object.values(records)) {
        out.get(o[0])!.push({ check: 'knip-exports', file: o[1], line: issue.line ?? 0, name: issue.symbol, detail: `unused export (${type})` });
      }
    }
  }
  return out;
}

const key = (f: Finding): string => `${f.check}\0${f.file}\0${f.name}`;

/**
 * What the buggy tree gives away: a finding of the buggy tree that the fixed tree does
 * not have; a message type the buggy code handles and never sends while the fixed code
 * sends it; a property the buggy code writes and never reads (or only logs) while the
 * fixed code reads it.
 */
export function compareTrees(buggy: TreeFacts, fixed: TreeFacts): Finding[] {
  const out: Finding[] = [];
  const fixedCounts = new Map<string, number>();
  for (const f of fixed.findings) fixedCounts.set(key(f), (fixedCounts.get(key(f)) ?? 0) + 1);
  for (const f of buggy.findings) {
    const n = fixedCounts.get(key(f)) ?? 0;
    if (n > 0) fixedCounts.set(key(f), n - 1);
    else out.push(f);
  }
  for (const [name, site] of buggy.handled) {
    if (!buggy.mentioned.has(name) && fixed.mentioned.has(name)) {
      out.push({ check: 'message-type', ...site, name, detail: `message type '${name}' is handled but never sent; the fixed code sends it` });
    }
  }
  for (const [name, site] of buggy.written) {
    if (!buggy.read.has(name) && fixed.read.has(name)) {
      const how = buggy.logged.has(name) ? 'only logged' : 'never read';
      out.push({ check: 'field', ...site, name, detail: `'${name}' is written and ${how}; the fixed code reads it` });
    }
  }
  return out;
}

export function formatFinding(bug: string, f: Finding): string {
  return `${bug}: ${f.file}:${f.line} ${f.name} — ${f.detail} [${f.check}]`;
}
