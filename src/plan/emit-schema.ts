// Writes plans/plan.schema.json from the zod schema (run by `npm run build`).
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { planJsonSchema } from './spec.js';

const target = fileURLToPath(new URL('../../plans/plan.schema.json', import.meta.url));
fs.writeFileSync(target, JSON.stringify(planJsonSchema(), null, 2) + '\n');
