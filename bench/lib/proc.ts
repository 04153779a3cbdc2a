/** What Linux says about a process (/proc): its memory, and the CPU time it has used. */
import { readdirSync, readFileSync } from 'node:fs';

/** /proc/<pid>/stat counts CPU time in USER_HZ ticks, 100 per second on Linux. */
const TICKS_PER_SECOND = 100;

/** Resident memory now and at its peak, in MB. */
export function memoryOf(pid: number): { rssMb: number; peakRssMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { rssMb: kb('VmRSS') / 1024, peakRssMb: kb('VmHWM') / 1024 };
}

/**
 * User plus system CPU seconds of every thread of the process so far. Unlike requests/s, CPU time
 * per request barely moves when other work shares the machine, so it compares builds across runs.
 */
export function cpuSecondsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which is in parentheses and may hold spaces: utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/**
 * CPU seconds used so far by the processes of this machine named `command` (e.g. `postgres`: its
 * backends, WAL writer, autovacuum and the rest), read from /proc; null when there are none here.
 * A process that exits between two readings takes its time with it: read around work that keeps them.
 */
export function cpuSecondsOfCommand(command: string): number | null {
  let total = 0;
  let found = false;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== command) continue;
      total += cpuSecondsOf(Number(entry));
      found = true;
    } catch {
      // Gone since the directory was listed.
    }
  }
  return found ? total : null;
}
