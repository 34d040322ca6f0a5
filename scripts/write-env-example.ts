import { writeFileSync } from 'node:fs';
import { renderEnvExample } from '../src/config/env-example.js';

writeFileSync(new URL('../.env.example', import.meta.url), renderEnvExample());
console.log('wrote .env.example');
