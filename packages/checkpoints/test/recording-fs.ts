// A FileSystemOps for tests: node:fs that logs each mutating operation and can die at the k-th one.
import { nodeFileSystem, type FileSystemOps, type WritableFileOps } from '@grassflow/checkpoints';

export class SimulatedCrash extends Error {}

/** node:fs that logs every operation and, optionally, dies at the `crashAt`-th one (a write lands half first). */
export class RecordingFs implements FileSystemOps {
  readonly log: string[] = [];
  dead = false;
  private readonly files: WritableFileOps[] = [];

  constructor(
    private readonly root: string,
    private readonly crashAt = Infinity,
  ) {}

  private async step(what: string, partial?: () => Promise<void>): Promise<void> {
    if (this.dead) throw new SimulatedCrash('the process is dead');
    this.log.push(what.replaceAll(this.root, '<root>').replace(/\.tmp-\d+-[0-9a-f]{12}/, '.tmp'));
    if (this.log.length === this.crashAt) {
      this.dead = true;
      await partial?.();
      throw new SimulatedCrash(`crash at ${what}`);
    }
  }

  async create(path: string): Promise<WritableFileOps> {
    await this.step(`create ${path}`);
    const file = await nodeFileSystem.create(path);
    this.files.push(file);
    return {
      write: async (bytes) => {
        await this.step(`write ${path}`, () => file.write(bytes.subarray(0, bytes.byteLength >> 1)));
        await file.write(bytes);
      },
      sync: async () => {
        await this.step(`sync ${path}`);
        await file.sync();
      },
      close: async () => {
        await this.step(`close ${path}`);
        await file.close();
      },
    };
  }
  async rename(from: string, to: string): Promise<void> {
    await this.step(`rename ${from} ${to}`);
    await nodeFileSystem.rename(from, to);
  }
  async mkdir(path: string): Promise<void> {
    await this.step(`mkdir ${path}`);
    await nodeFileSystem.mkdir(path);
  }
  async remove(path: string): Promise<void> {
    await this.step(`remove ${path}`);
    await nodeFileSystem.remove(path);
  }
  async syncDirectory(path: string): Promise<void> {
    await this.step(`syncDirectory ${path}`);
    await nodeFileSystem.syncDirectory(path);
  }
  /** What the OS does for a dead process: close its files. */
  async reap(): Promise<void> {
    for (const f of this.files) await f.close().catch(() => undefined);
  }
}
