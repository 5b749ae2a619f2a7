// npm run schema:print — writes schema/schema.graphql from the Pothos schema.
import { writeFileSync } from 'node:fs';
import { printSdl } from '../graphql/schema.js';

writeFileSync(new URL('../../schema/schema.graphql', import.meta.url), printSdl());
console.log('wrote schema/schema.graphql');
