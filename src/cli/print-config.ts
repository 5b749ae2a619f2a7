// npm run docs:config — writes docs/configuration.md from the environment's schema (src/config.ts).
import { writeFileSync } from 'node:fs';
import { renderConfigurationPage } from './configuration-page.js';

writeFileSync(new URL('../../docs/configuration.md', import.meta.url), renderConfigurationPage());
console.log('wrote docs/configuration.md');
