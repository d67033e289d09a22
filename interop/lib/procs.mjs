// Starting and stopping the processes the interop suites test against: the
// gateway binary (bin/gateway) and the demo backend (bin/zoo), both built by
// `make interop`. Every process started here is killed when the test process
// ends, however it ends (normal exit, failure, SIGINT/SIGTERM).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const gatewayBin = process.env.GATEWAY_BIN || join(repoRoot, 'bin', 'gateway');
export const zooBin = process.env.ZOO_BIN || join(repoRoot, 'bin', 'zoo');

const live = new Set();

function killAll() {
  for (const p of live) {
    try {
      p.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  live.clear();
}
process.on('exit', killAll);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(sig, () => {
    killAll();
    process.exit(128 + ({ SIGHUP: 1, SIGINT: 2, SIGTERM: 15 })[sig]);
  });
}

/** Makes child one of the processes killed when this process ends. */
export function track(child) {
  live.add(child);
  child.on('exit', () => live.delete(child));
  return child;
}

function requireBinary(path) {
  if (!existsSync(path)) {
    throw new Error(`${path} does not exist: run \`make interop\` (it builds bin/gateway and bin/zoo first)`);
  }
}

/**
 * Starts `bin args...` and resolves once a line of its stderr matches re,
 * with the match. Rejects (with the stderr seen so far) on exit or timeout.
 */
export function startAndWait(bin, args, re, { timeoutMs = 20000, name = bin } = {}) {
  requireBinary(bin);
  const child = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  live.add(child);
  let stderr = '';
  const stop = () => stopProcess(child);
  return new Promise((resolveP, reject) => {
    const fail = (why) => {
      clearTimeout(timer);
      stop();
      reject(new Error(`${name} ${args.join(' ')}: ${why}\n--- its stderr ---\n${stderr}--- end ---`));
    };
    const timer = setTimeout(() => fail(`no line matching ${re} on stderr within ${timeoutMs} ms`), timeoutMs);
    child.on('error', (err) => fail(`could not start: ${err.message}`));
    child.on('exit', (code, signal) => fail(`exited early (code ${code}, signal ${signal})`));
    child.stderr.setEncoding('utf8');
    let matched = false;
    child.stderr.on('data', (chunk) => {
      stderr += chunk; // keep draining, so the child never blocks on a full pipe
      if (matched) return;
      const m = stderr.match(re);
      if (m) {
        matched = true;
        clearTimeout(timer);
        child.removeAllListeners('exit');
        child.on('exit', () => live.delete(child));
        resolveP({ match: m, child, stop, stderr: () => stderr });
      }
    });
  });
}

/** Sends SIGTERM, then SIGKILL after graceMs; resolves when the process is gone. */
export function stopProcess(child, graceMs = 3000) {
  return new Promise((res) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      live.delete(child);
      return res();
    }
    const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(t);
      live.delete(child);
      res();
    });
    child.kill('SIGTERM');
  });
}

/**
 * Starts the gateway serving Streamable HTTP on an ephemeral loopback port.
 * With no backend it runs the bundled demo backend in-process.
 * Resolves to { url, base, stop }.
 */
export async function startHTTPGateway({ backend, extraArgs = [] } = {}) {
  const args = ['--listen', '127.0.0.1:0', ...(backend ? ['--backend', backend] : []), ...extraArgs];
  const { match, stop, stderr } = await startAndWait(
    gatewayBin,
    args,
    /MCP \(Streamable HTTP\) at (http:\/\/\S+\/mcp)/,
    { name: 'gateway' },
  );
  const url = match[1];
  return { url, base: url.replace(/\/mcp$/, ''), stop, stderr };
}

/** Starts the demo backend (examples/zoo) on an ephemeral port; resolves to { addr, stop }. */
export async function startZoo() {
  const { match, stop } = await startAndWait(
    zooBin,
    ['-listen', '127.0.0.1:0'],
    /msg="zoo serving" addr=(\S+)/,
    { name: 'zoo' },
  );
  return { addr: match[1], stop };
}

export const jobsBin = process.env.JOBS_BIN || join(repoRoot, 'bin', 'jobs');

/**
 * Starts the long-running operations test backend (internal/lrotest/cmd/jobs)
 * on an ephemeral port; resolves to { addr, stop }.
 */
export async function startJobs(extraArgs = []) {
  const { match, stop } = await startAndWait(jobsBin, extraArgs, /msg="jobs serving" addr=(\S+)/, { name: 'jobs' });
  return { addr: match[1], stop };
}
