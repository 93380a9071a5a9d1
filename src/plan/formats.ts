// The output formats a plan may name (each one's extensions, encoder and Spark source: io/result-file.ts FORMATS),
// apart from the plan's schema (plan/spec.ts) so that what names them does not load zod.
export const OUTPUT_FORMATS = ['parquet', 'csv', 'jsonl', 'json', 'arrow'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];
