// Spark Connect's remote URL, as pyspark reads it: sc://host[:port][/;key=value;...]
// with token, user_id and use_ssl among the keys (port 15002 by default).
import os from 'node:os';
import { PlanError } from '../errors.js';

export interface Remote {
  host: string;
  port: number;
  token?: string;
  userId: string;
  ssl: boolean;
  url: string;
}

export function parseRemote(url: string, at = '--remote'): Remote {
  const m = /^sc:\/\/(\[[^\]]+\]|[^:/;]+)(?::(\d+))?\/?(;.*)?$/.exec(url.trim());
  if (!m)
    throw new PlanError(
      at,
      `"${url}" is not a Spark Connect URL such as sc://host:15002 or sc://host:15002/;token=SECRET`,
    );
  const params = new Map<string, string>();
  for (const kv of (m[3] ?? '').split(';').filter(Boolean)) {
    const i = kv.indexOf('=');
    if (i <= 0) throw new PlanError(at, `"${kv}" in "${url}" is not key=value`);
    params.set(kv.slice(0, i), decodeURIComponent(kv.slice(i + 1)));
  }
  const port = m[2] ? Number(m[2]) : 15002;
  if (port < 1 || port > 65535) throw new PlanError(at, `port ${port} in "${url}" is not a port number`);
  return {
    host: m[1],
    port,
    token: params.get('token'),
    userId: params.get('user_id') ?? os.userInfo().username,
    ssl: params.get('use_ssl') === 'true',
    url,
  };
}
