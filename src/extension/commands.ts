/**
 * The one table of command ids. package.json's `contributes.commands` must match it
 * (test/unit/extension-manifest.test.ts), and extension.ts must register a handler for
 * every entry (enforced by the `CommandHandlers` type). No `vscode` import here, so the
 * manifest test runs in plain Node.
 */

export interface CommandSpec {
  readonly id: `ddbench.${string}`;
  readonly title: string;
  /** A codicon for view toolbars and inline actions. */
  readonly icon?: `$(${string})`;
}

export const COMMANDS = {
  openBug: { id: 'ddbench.openBug', title: 'Open Bug', icon: '$(folder-opened)' },
  refreshBugs: { id: 'ddbench.refreshBugs', title: 'Refresh Bugs', icon: '$(refresh)' },
  filterBugs: { id: 'ddbench.filterBugs', title: 'Filter Bugs…', icon: '$(filter)' },
  groupBugs: { id: 'ddbench.groupBugs', title: 'Group Bugs by System or Tier', icon: '$(group-by-ref-type)' },
  openNextBug: { id: 'ddbench.openNextBug', title: 'Open the Suggested Next Bug', icon: '$(star-full)' },
  showIssue: { id: 'ddbench.showIssue', title: 'Show the Issue', icon: '$(issues)' },
  launchCluster: { id: 'ddbench.launchCluster', title: 'Launch Cluster', icon: '$(play)' },
  stopCluster: { id: 'ddbench.stopCluster', title: 'Stop Cluster', icon: '$(debug-stop)' },
  runReproducer: { id: 'ddbench.runReproducer', title: 'Run Reproducer', icon: '$(beaker)' },
  killNode: { id: 'ddbench.killNode', title: 'Kill Node', icon: '$(close)' },
  restartNode: { id: 'ddbench.restartNode', title: 'Restart Node', icon: '$(debug-restart)' },
  pauseNode: { id: 'ddbench.pauseNode', title: 'Pause Node', icon: '$(debug-pause)' },
  resumeNode: { id: 'ddbench.resumeNode', title: 'Resume Node', icon: '$(debug-continue)' },
  attachDebugger: { id: 'ddbench.attachDebugger', title: 'Attach Debugger to Node', icon: '$(debug-alt)' },
  partition: { id: 'ddbench.partition', title: 'Partition Nodes…', icon: '$(debug-disconnect)' },
  heal: { id: 'ddbench.heal', title: 'Heal Partition', icon: '$(plug)' },
  sendRequest: { id: 'ddbench.sendRequest', title: 'Send a Request…', icon: '$(send)' },
  showNode: { id: 'ddbench.showNode', title: 'Show Node State and Log', icon: '$(info)' },
  addLinkFault: { id: 'ddbench.addLinkFault', title: 'Add Link Fault…', icon: '$(debug-line-by-line)' },
  clearLinkFaults: { id: 'ddbench.clearLinkFaults', title: 'Clear Link Faults', icon: '$(clear-all)' },
  showTimeline: { id: 'ddbench.showTimeline', title: 'Show Timeline', icon: '$(graph-line)' },
  showTrialTimeline: { id: 'ddbench.showTrialTimeline', title: 'Show Timeline of a Reproducer Trial…', icon: '$(beaker)' },
  showFileTimeline: { id: 'ddbench.showFileTimeline', title: 'Show Timeline of Event or Log Files…', icon: '$(file)' },
  runSimSeeds: { id: 'ddbench.runSimSeeds', title: 'Run Simulated Seeds…', icon: '$(run-all)' },
  replaySeed: { id: 'ddbench.replaySeed', title: 'Replay Simulated Seed in Timeline…', icon: '$(play)' },
  replayShrunkSeed: { id: 'ddbench.replayShrunkSeed', title: 'Replay Simulated Seed, Shrunk…', icon: '$(fold)' },
  openAgent: { id: 'ddbench.openAgent', title: 'Open Agent Panel', icon: '$(hubot)' },
  setAgentApiKey: { id: 'ddbench.setAgentApiKey', title: 'Set Agent API Key…', icon: '$(key)' },
  clearAgentApiKey: { id: 'ddbench.clearAgentApiKey', title: 'Clear Agent API Key', icon: '$(trash)' },
  acceptAgentPatch: { id: 'ddbench.acceptAgentPatch', title: 'Accept Agent Patch', icon: '$(check)' },
  rejectAgentPatch: { id: 'ddbench.rejectAgentPatch', title: 'Reject Agent Patch', icon: '$(discard)' },
  startAttempt: { id: 'ddbench.startAttempt', title: 'Start Attempt…', icon: '$(record)' },
  submitAttempt: { id: 'ddbench.submitAttempt', title: 'Submit Fix', icon: '$(pass)' },
  giveUpAttempt: { id: 'ddbench.giveUpAttempt', title: 'Give Up Attempt', icon: '$(circle-slash)' },
  attemptActions: { id: 'ddbench.attemptActions', title: 'Attempt Actions…', icon: '$(watch)' },
  showNextHint: { id: 'ddbench.showNextHint', title: 'Show Next Hint', icon: '$(lightbulb)' },
  showHints: { id: 'ddbench.showHints', title: 'Show Hints Taken', icon: '$(list-ordered)' },
  revealReferenceFix: { id: 'ddbench.revealReferenceFix', title: 'Reveal the Reference Fix…', icon: '$(eye)' },
  verifyFix: { id: 'ddbench.verifyFix', title: 'Verify My Fix', icon: '$(verified)' },
  compareWithReference: { id: 'ddbench.compareWithReference', title: 'Compare My Fix with the Reference', icon: '$(diff)' },
  showComparison: { id: 'ddbench.showComparison', title: 'Show Attempt Comparison', icon: '$(graph)' },
  compareRecordsFolder: { id: 'ddbench.compareRecordsFolder', title: 'Compare Records Folders…', icon: '$(folder-library)' },
} as const satisfies Record<string, CommandSpec>;

export type CommandName = keyof typeof COMMANDS;

/** Every command shows in the palette under this category ("DDBench: Open Bug"). */
export const COMMAND_CATEGORY = 'DDBench';

/** Container and view ids, shared by the code and the manifest test. */
export const VIEWS = {
  container: 'ddbench',
  bugs: 'ddbench.bugs',
  cluster: 'ddbench.cluster',
  seeds: 'ddbench.seeds',
} as const;

/** Tree items' `contextValue`s, which the manifest's menus match on. */
export const CONTEXT_VALUES = {
  bug: 'ddbench.bug',
  system: 'ddbench.system',
  /** A failing seed in the Simulated Seeds view. */
  seed: 'ddbench.seed',
  /** Followed by the node's status, then `.inspectable` when it has an inspector port. */
  nodePrefix: 'ddbench.node.',
} as const;

/** Context keys the manifest's `when` clauses use. */
export const CONTEXT_KEYS = {
  /** A person's study attempt is in progress in this window. */
  attemptActive: 'ddbench.attemptActive',
  clusterRunning: 'ddbench.clusterRunning',
  inBugWorkspace: 'ddbench.inBugWorkspace',
} as const;

/**
 * The Get Started walkthrough's steps that complete on a real outcome (not on a command
 * merely invoked): each is a context key set true when it happens.
 */
export const WALKTHROUGH_KEYS = {
  clusterLaunched: 'ddbench.walkthrough.clusterLaunched',
  requestSent: 'ddbench.walkthrough.requestSent',
  timelineShown: 'ddbench.walkthrough.timelineShown',
  reproducerRan: 'ddbench.walkthrough.reproducerRan',
  failingTrialOpened: 'ddbench.walkthrough.failingTrialOpened',
  hintTaken: 'ddbench.walkthrough.hintTaken',
  fixVerified: 'ddbench.walkthrough.fixVerified',
} as const;
export type WalkthroughStep = keyof typeof WALKTHROUGH_KEYS;
