/** The outbox: messages recorded with the change that caused them, and their admin views. */
import { newMessageId } from '../../ids.js';
import { messageBody, messageKind, type MessageSpec } from '../messages.js';
import type { DeliveryAttempt, MessageFilter, OutboxMessage } from '../store.js';
import type { Sql } from './database.js';
import { toAttempt, toMessage, type AttemptRow, type OutboxRow } from './rows.js';

/** What the admin API lists when it gives no limit. */
const DEFAULT_LIST_LIMIT = 100;

const OUTBOX_COLUMNS = `message_id, service_id, device_id, kind, push_type, sequence, body, status, attempts,
  next_attempt_at, created_at, delivered_at`;

/** Records each message as pending and due at once, each next in its (service, device) order. Call inside the change's transaction. */
export function recordMessages(sql: Sql, specs: MessageSpec[], at: number): void {
  for (const spec of specs) {
    const sequence = nextSequence(sql, spec.serviceId, spec.deviceId);
    const messageId = newMessageId();
    sql.run(
      `INSERT INTO outbox (message_id, service_id, device_id, kind, push_type, sequence, body, status, next_attempt_at, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)`,
      messageId,
      spec.serviceId,
      spec.deviceId,
      messageKind(spec.pushType),
      spec.pushType,
      sequence,
      messageBody(spec, messageId, at),
      at,
      at,
    );
  }
}

function nextSequence(sql: Sql, serviceId: string, deviceId: string): number {
  const row = sql.one<{ last_sequence: number }>(
    `INSERT INTO message_sequences (service_id, device_id, last_sequence) VALUES (?, ?, 1)
     ON CONFLICT (service_id, device_id) DO UPDATE SET last_sequence = last_sequence + 1
     RETURNING last_sequence`,
    serviceId,
    deviceId,
  );
  if (!row) throw new Error(`No sequence returned for ${serviceId}/${deviceId}`);
  return row.last_sequence;
}

/** A service's messages, newest first. */
export function listMessages(sql: Sql, serviceId: string, filter: MessageFilter): OutboxMessage[] {
  const { status = null, deviceId = null, since = null, limit = DEFAULT_LIST_LIMIT } = filter;
  const rows = sql.all<OutboxRow>(
    `SELECT ${OUTBOX_COLUMNS} FROM outbox
     WHERE service_id = ?
       AND (? IS NULL OR status = ?)
       AND (? IS NULL OR device_id = ?)
       AND (? IS NULL OR created_at >= ?)
     ORDER BY created_at DESC, id DESC
     LIMIT ?`,
    serviceId,
    status,
    status,
    deviceId,
    deviceId,
    since,
    since,
    limit,
  );
  return rows.map(toMessage);
}

export function getMessage(sql: Sql, messageId: string): OutboxMessage | undefined {
  const row = sql.one<OutboxRow>(`SELECT ${OUTBOX_COLUMNS} FROM outbox WHERE message_id = ?`, messageId);
  return row && toMessage(row);
}

/** The attempts of the given messages, by message then attempt number. */
export function listAttempts(sql: Sql, messageIds: string[]): DeliveryAttempt[] {
  const rows = sql.all<AttemptRow>(
    `SELECT message_id, attempt, started_at, duration_ms, response_status, response_body, error
     FROM delivery_attempts
     WHERE message_id IN (SELECT value FROM json_each(?))
     ORDER BY message_id, attempt`,
    JSON.stringify(messageIds),
  );
  return rows.map(toAttempt);
}

/** Back to pending and due now; a bumped fencing token voids any lease a sender still holds on it. */
const REQUEUE = `UPDATE outbox
  SET status = 'pending', next_attempt_at = ?, delivered_at = NULL,
      lease_owner = NULL, lease_expires_at = NULL, fencing_token = fencing_token + 1`;

export function resendMessage(sql: Sql, messageId: string, now: number): boolean {
  return sql.run(`${REQUEUE} WHERE message_id = ?`, now, messageId) === 1;
}

export function recoverFailed(sql: Sql, serviceId: string, since: number, now: number): number {
  return sql.run(`${REQUEUE} WHERE service_id = ? AND status = 'failed' AND created_at >= ?`, now, serviceId, since);
}
