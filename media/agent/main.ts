import './agent.css';
import { AgentApp } from './app';
import { vscodeHost } from '../shared/host';

new AgentApp(document.getElementById('app')!, vscodeHost()).mount();
