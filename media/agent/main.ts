import './agent.css';
import { AgentApp } from './app';
import { vscodeHost } from './host';

new AgentApp(document.getElementById('app')!, vscodeHost()).mount();
