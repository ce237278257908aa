// The timeline inside a VS Code webview: the host is the extension (acquireVsCodeApi).
import './timeline.css';
import { TimelineApp } from './app';
import { vscodeHost } from '../shared/host';

const root = document.getElementById('app');
if (root === null) throw new Error('the timeline page has no #app element');
new TimelineApp(root, vscodeHost());
