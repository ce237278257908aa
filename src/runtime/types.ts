/// <reference path="../../bugs/types/ddbench-runtime.d.ts" />
/**
 * The interface a bug system sees, declared once in bugs/types/ddbench-runtime.d.ts:
 * that file ships with the bug set and goes into every workspace, so the editor
 * completes `rt.` in a system's code. Here it is exported for the runtime's own code.
 */

export type Json = DDBench.Json;
export type Message = DDBench.Message;
export type Incoming = DDBench.Incoming;
export type Fields = DDBench.Fields;
export type Logger = DDBench.Logger;
export type Disk = DDBench.Disk;
export type TimerHandle = DDBench.TimerHandle;
export type NodeRuntime = DDBench.NodeRuntime;
export type SystemNode = DDBench.SystemNode;
export type SystemModule = DDBench.SystemModule;
