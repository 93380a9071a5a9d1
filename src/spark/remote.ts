// Spark Connect's remote URL, as its client spec reads it: sc://host[:port][/;key=value;...]
// (port 15002 by default). token, use_ssl, user_id, session_id and user_agent are the
// client's; any other key=value is sent as a gRPC header with every call. A token is
// sent only over TLS (use_ssl=true), or in the clear to `localhost` alone, as pyspark
// does with gRPC's local credentials. The URL is shown only with its token masked.
import os from 'node:os';
import { PlanError } from '../errors.js';

export interface Remote {
  host: string;
  port: number;
  token?: string;
  userId: string;
  ssl: boolean;
  /** a session of the server to join (session_id=): ours to use, not to release */
  sessionId?: string;
  /** user_agent=: put before ours in ClientType */
  userAgent?: string;
  /** the other parameters: gRPC headers */
  headers: [string, string][];
  /** the URL with its token masked: the only form that is printed */
  url: string;
}

const CLIENT_KEYS = new Set(['token', 'use_ssl', 'user_id', 'session_id', 'user_agent']);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** a gRPC header name: lowercase letters, digits, '-', '_', '.'; not a reserved grpc- one, nor a binary -bin one */
const HEADER = /^[0-9a-z_.-]+$/;

/** A text with every `token=...` of a Spark Connect URL (and a bearer token) masked. */
export function redact(text: string): string {
  return text.replace(/(;token=)[^;\s"'`]*/gi, '$1***').replace(/(Bearer )[^\s"'`]+/g, '$1***');
}

/** Hosts that are this machine: a server there reads this machine's files (and may take a token in the clear if `localhost`). */
export const isLoopback = (host: string) =>
  host === 'localhost' || /^127\.\d+\.\d+\.\d+$/.test(host) || host === '[::1]' || host === '::1';

export function parseRemote(url: string, at = '--remote'): Remote {
  const shown = redact(url.trim());
  const m = /^sc:\/\/(\[[^\]]+\]|[^:/;]+)(?::(\d+))?\/?(;.*)?$/.exec(url.trim());
  if (!m)
    throw new PlanError(
      at,
      `"${shown}" is not a Spark Connect URL such as sc://host:15002 or sc://host:15002/;use_ssl=true`,
    );
  const params = new Map<string, string>();
  for (const kv of (m[3] ?? '').split(';').filter(Boolean)) {
    const i = kv.indexOf('=');
    if (i <= 0) throw new PlanError(at, `"${redact(`;${kv}`).slice(1)}" in "${shown}" is not key=value`);
    params.set(kv.slice(0, i), decodeURIComponent(kv.slice(i + 1)));
  }
  const port = m[2] ? Number(m[2]) : 15002;
  if (port < 1 || port > 65535) throw new PlanError(at, `port ${port} in "${shown}" is not a port number`);
  const host = m[1];
  const useSsl = params.get('use_ssl');
  if (useSsl !== undefined && useSsl !== 'true' && useSsl !== 'false')
    throw new PlanError(at, `use_ssl in "${shown}" is "${useSsl}": expected true or false`);
  const ssl = useSsl === 'true';
  const token = params.get('token');
  if (token !== undefined && !ssl && host !== 'localhost')
    throw new PlanError(
      at,
      `"${shown}" gives a token without use_ssl=true: a token is sent only over TLS (to ${host} it would go in ` +
        'clear text); add ;use_ssl=true (the server must serve TLS), or reach a server on this machine as localhost',
    );
  const sessionId = params.get('session_id');
  if (sessionId !== undefined && !UUID.test(sessionId))
    throw new PlanError(at, `session_id in "${shown}" is "${sessionId}": expected a UUID such as ${UUID_EXAMPLE}`);
  const userAgent = params.get('user_agent');
  if (userAgent !== undefined && (userAgent.length === 0 || userAgent.length > 2048))
    throw new PlanError(at, `user_agent in "${shown}" must hold 1 to 2048 characters (got ${userAgent.length})`);
  const headers: [string, string][] = [];
  for (const [k, v] of params) {
    if (CLIENT_KEYS.has(k)) continue;
    if (!HEADER.test(k) || k.startsWith('grpc-') || k.endsWith('-bin'))
      throw new PlanError(
        at,
        `"${k}" in "${shown}" cannot be a gRPC header: expected lowercase letters, digits, '-', '_' or '.' ` +
          '(and not grpc-... nor ...-bin)',
      );
    headers.push([k, v]);
  }
  return {
    host,
    port,
    token,
    userId: params.get('user_id') ?? os.userInfo().username,
    ssl,
    sessionId,
    userAgent,
    headers,
    url: shown,
  };
}

const UUID_EXAMPLE = '00112233-4455-6677-8899-aabbccddeeff';
