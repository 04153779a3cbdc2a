/** What the platform's operators browse (the admin API and the console, DESIGN H): every user and device, and totals. */
import type { Device, User } from '../../core/model.js';

/** A page of a listing ordered by id: the ids after `after`, at most `limit`. */
export interface Page {
  after?: string;
  limit: number;
}

/** How many there are of each: the console's overview. */
export interface AccountCounts {
  services: number;
  users: number;
  devices: number;
  devicesOnline: number;
}

/** The delivery attempts that started in one minute. */
export interface AttemptMinute {
  /** Epoch ms of the minute's start. */
  minute: number;
  attempts: number;
  /** Answered 2xx. */
  succeeded: number;
  meanMs: number;
  maxMs: number;
}

export interface OverviewArea {
  /** Users by userNumber. */
  listUsers(page: Page): Promise<User[]>;
  /** Devices by deviceId. */
  listDevices(page: Page): Promise<Device[]>;
  countAccounts(): Promise<AccountCounts>;
  /** Attempts started at or after `since`, per minute, oldest first; minutes without any are left out. */
  attemptsByMinute(since: number): Promise<AttemptMinute[]>;
}
