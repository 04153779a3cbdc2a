/**
 * What a chaos run started and must end, however it ends: undo steps run last-first by `run()`, and
 * the child processes and temp directories, which `abandon()` still removes synchronously when the
 * process exits without having run them.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export class Cleanup {
  readonly #steps: (() => unknown)[] = [];
  readonly #children = new Set<ChildProcess>();
  readonly #dirs = new Set<string>();

  /** Runs `step` (awaited) at cleanup, before the steps deferred earlier. */
  defer(step: () => unknown): void {
    this.#steps.push(step);
  }

  /** A child that is killed at cleanup if it is still running. */
  track<T extends ChildProcess>(child: T): T {
    this.#children.add(child);
    child.once('exit', () => this.#children.delete(child));
    return child;
  }

  /** A new temp directory, removed at cleanup. */
  tempDir(prefix: string): string {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    this.#dirs.add(dir);
    return dir;
  }

  /** Runs every step (a failing one does not stop the others), then removes what is left. */
  async run(): Promise<void> {
    while (this.#steps.length) {
      const step = this.#steps.pop()!;
      try {
        await step();
      } catch (error) {
        console.error(`cleanup: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    this.abandon();
  }

  /** Kills the children still running and removes the directories, synchronously (for `process.on('exit')`). */
  abandon(): void {
    for (const child of this.#children) child.kill('SIGKILL');
    for (const dir of this.#dirs) rmSync(dir, { recursive: true, force: true });
    this.#dirs.clear();
  }
}
