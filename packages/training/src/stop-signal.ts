// SIGINT/SIGTERM: ask the training loop to checkpoint and stop; a second signal exits at once.
import { isSupervised } from './supervise.js';

/** Records the first SIGINT/SIGTERM; the training loop polls {@link StopSignal.requested} between steps. */
export class StopSignal {
  requested: NodeJS.Signals | null = null;
  private readonly handler = (signal: NodeJS.Signals): void => {
    if (this.requested !== null) {
      process.stderr.write(`\n${signal} again: exiting without a checkpoint\n`);
      process.exit(signal === 'SIGINT' ? 130 : 143);
    }
    this.requested = signal;
    // under a supervisor, the parent has said so already (and handles a second signal itself)
    if (!isSupervised()) {
      process.stderr.write(
        `\n${signal} received: writing a checkpoint after this step, then exiting (send it again to exit at once)\n`,
      );
    }
  };

  /** Start listening (idempotent until {@link StopSignal.uninstall}). */
  install(): this {
    process.on('SIGINT', this.handler);
    process.on('SIGTERM', this.handler);
    return this;
  }

  uninstall(): void {
    process.off('SIGINT', this.handler);
    process.off('SIGTERM', this.handler);
  }

  /** Exit code of a process stopped by this signal (128 + signal number). */
  static exitCode(signal: NodeJS.Signals): number {
    return signal === 'SIGINT' ? 130 : 143;
  }
}
