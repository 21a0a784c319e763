#!/usr/bin/env node
// Runs the TypeScript sources through tsx, so `npm install` is the whole set-up: there is no build step
// whose output could go stale.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
