#!/usr/bin/env node
// The DuckDB side of scripts/process-bench.mjs and scripts/ooc-bench.mjs: one
// Node process that opens DuckDB with the given threads, runs a SQL file
// (statements before the last one, e.g. views or settings, run first) and reads
// every result row, as a user's script would. OUT=file writes the rows there as JSON.
import fs from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';

const [file, threads = '2'] = process.argv.slice(2);
const db = await DuckDBInstance.create(':memory:', { threads });
const con = await db.connect();
const statements = fs
  .readFileSync(file, 'utf8')
  .split(/;\s*(?:\n|$)/)
  .map((s) => s.trim())
  .filter(Boolean);
for (const s of statements.slice(0, -1)) await con.run(s);
const rows = (await con.runAndReadAll(statements.at(-1))).getRowObjectsJson();
if (process.env.SHOW) console.log(rows.length, rows.slice(0, 3));
if (process.env.OUT) fs.writeFileSync(process.env.OUT, JSON.stringify(rows));
