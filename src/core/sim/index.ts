// The simulated backend and what is built on it: seed search, shrinking, replay, verification.
export type { Decision, DecisionKind } from './decisions';
export { eventsDigest, writeEventsFile } from './events-file';
export { DEFAULT_SIM_OPTIONS, SimOptions, type SimOptionsInput } from './options';
export { readScheduleFile, replaySeed, ScheduleFile, type ReplayOptions, type ReplayResult } from './replay';
export { searchSeeds, simulateSeeds, type SeedSearchOptions, type SeedSearchResult } from './seeds';
export { shrinkFailure, type ShrinkOptions, type ShrunkSchedule } from './shrink';
export { SimCluster, type DriveResult, type SimClusterOptions } from './sim-cluster';
export { runSimTrial, type SimRun, type SimTrialResult } from './sim-trial';
export { prepareTarget, prepareTargetFile, type SimTarget } from './target';
export { seedsForConfidence, simulate, verifyInSimulation, type SimCheckOptions, type SimSummary, type SimVerification } from './verification';
export { replayWorkspaceSeed, shrinkWorkspaceSeed, simulateWorkspace, type WorkspaceReplayOptions, type WorkspaceReplayResult, type WorkspaceSimOptions, type WorkspaceSimResult } from './workspace';
