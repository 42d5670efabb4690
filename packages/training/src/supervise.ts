// Signals that stop a run even mid-step: the CLI runs a long command in a child process and watches it from a parent
// whose event loop is never blocked by a kernel.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';

/** Set in the child's environment: the process runs under a supervisor (and must not start another). */
export const SUPERVISED_ENV = 'GRASSFLOW_SUPERVISED';

/** Seconds the step in progress may take to end after a first signal (GRASSFLOW_STOP_GRACE, default 20). */
export const STOP_GRACE_ENV = 'GRASSFLOW_STOP_GRACE';

function stopGraceSeconds(): number {
  const v = Number(process.env[STOP_GRACE_ENV] ?? '20');
  return Number.isFinite(v) && v >= 0 ? v : 20;
}

/** Whether this process is the supervised child of {@link superviseSelf}. */
export function isSupervised(): boolean {
  return process.env[SUPERVISED_ENV] === '1';
}

/**
 * Re-run this very command line (same node, flags and arguments) as a child and wait for it; resolves to the exit
 * code to use. A training step runs its kernels synchronously, so a process in the middle of one cannot run a
 * signal handler until the step ends (minutes, for a long sequence). The parent can: the first SIGINT/SIGTERM is
 * passed on (the child checkpoints after its step and exits); when the step has not ended within the grace period
 * (GRASSFLOW_STOP_GRACE seconds, default 20, inside the 30 s job schedulers give before SIGKILL) or a second signal
 * comes, the child is killed at once (its last checkpoint is intact: checkpoints are written atomically). The child runs in its own process group, so a terminal's
 * Ctrl-C reaches it once, through the parent; if the parent dies, the child notices (its parent changes) and stops as
 * after a first signal.
 */
export function superviseSelf(): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, [SUPERVISED_ENV]: '1' },
      detached: true,
    });
    let first: NodeJS.Signals | null = null;
    let grace: NodeJS.Timeout | undefined;
    const graceSeconds = stopGraceSeconds();
    const stopNow = (why: string): void => {
      process.stderr.write(
        `\n${why}: stopped mid-step; the last checkpoint written, if one was, is intact (continue with --resume; a run ` +
          'stopped before its first checkpoint has nothing to resume and starts again)\n',
      );
      child.kill('SIGKILL');
    };
    const onSignal = (signal: NodeJS.Signals): void => {
      if (first === null) {
        first = signal;
        process.stderr.write(
          `\n${signal} received: stopping after the current step with a checkpoint, or in ${graceSeconds} s at the ` +
            `latest (send it again to stop at once)\n`,
        );
        child.kill(signal);
        grace = setTimeout(
          () => stopNow(`the step in progress did not end within ${graceSeconds} s`),
          graceSeconds * 1000,
        );
        grace.unref();
        return;
      }
      stopNow(`${signal} again`);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    child.on('error', (err) => {
      process.stderr.write(`could not start the command in a child process: ${err.message}\n`);
      resolve(1);
    });
    child.on('exit', (code, signal) => {
      clearTimeout(grace);
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      if (code !== null) return resolve(code);
      if (first === null && signal !== null) {
        // killed by no signal of ours: by the kernel's OOM killer (SIGKILL) as a rule, or by someone else's kill
        const cause =
          signal === 'SIGKILL'
            ? "most likely the kernel's OOM killer: the machine ran out of memory (`dmesg` says; a smaller --batch " +
              'or model, or fewer processes at once)'
            : 'by another process or the system';
        process.stderr.write(
          `\n${process.argv.slice(2).join(' ')}: killed by ${signal}, not by a signal sent to it here: ${cause}; ` +
            'its last checkpoint, if one was written, is intact (run it again to resume)\n',
        );
      }
      const by = first ?? signal ?? 'SIGKILL'; // killed: report the signal the user sent, as a shell does
      resolve(128 + (constants.signals[by] ?? 9));
    });
  });
}

/**
 * In the supervised child: stop as after a first SIGTERM when the parent is gone (checked every second between
 * steps; the timer does not keep the process alive).
 */
export function watchParent(): void {
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) process.kill(process.pid, 'SIGTERM');
  }, 1000).unref();
}
