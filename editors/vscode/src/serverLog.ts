// Follows the shared daemon's log file into the output channel, so the person sees what the
// server did (a daemon started by another client writes only to its file). It polls the file's
// size: cheap, and it works where file watching does not (network homes, containers).
import * as fs from 'node:fs';

const POLL_MS = 1000;
/** How much of the log's end to show when following starts. */
const BACKLOG_BYTES = 4096;

export class LogTail {
  private offset: number | undefined;
  private partial = '';
  /** Following started inside the file: its first line is cut, so it is dropped. */
  private skipFirstLine = false;
  private readonly timer: NodeJS.Timeout;
  private reading = false;

  constructor(
    private readonly file: string,
    private readonly write: (line: string) => void,
  ) {
    this.write(`following the daemon's log ${file}`);
    this.timer = setInterval(() => void this.poll(), POLL_MS);
    void this.poll();
  }

  private async poll(): Promise<void> {
    if (this.reading) return;
    this.reading = true;
    try {
      const { size } = await fs.promises.stat(this.file);
      if (this.offset === undefined) {
        this.offset = Math.max(0, size - BACKLOG_BYTES);
        this.skipFirstLine = this.offset > 0;
      }
      if (size < this.offset) this.offset = 0; // the log was rotated or truncated
      if (size === this.offset) return;
      const handle = await fs.promises.open(this.file, 'r');
      try {
        const buffer = Buffer.alloc(size - this.offset);
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, this.offset);
        this.offset += bytesRead;
        this.emit(buffer.subarray(0, bytesRead).toString('utf8'));
      } finally {
        await handle.close();
      }
    } catch {
      // not there (yet): the daemon creates it when it logs
    } finally {
      this.reading = false;
    }
  }

  private emit(text: string): void {
    const parts = (this.partial + text).split('\n');
    this.partial = parts.pop() ?? '';
    if (this.skipFirstLine && parts.length > 0) {
      parts.shift();
      this.skipFirstLine = false;
    }
    for (const line of parts) if (line.trim()) this.write(`daemon: ${line}`);
  }

  dispose(): void {
    clearInterval(this.timer);
  }
}
