/**
 * Broker hooks and handlers run inside aedes's and mqtt.js's handling of a device's bytes, where an
 * error thrown, or a promise rejected, would end the process (DESIGN J: no input on any channel ends
 * or stalls it). Each of them runs through `guard`.
 */
import type { Metrics } from '../metrics.js';
import type { GatewayLogger } from './logger.js';

export interface FaultReporting {
  logger: GatewayLogger;
  metrics?: Pick<Metrics, 'brokerFaults'> | undefined;
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/** Logs and counts an error caught in a broker hook or handler. */
export function reportFault(reporting: FaultReporting, hook: string, details: object, error: unknown): void {
  reporting.logger.error({ ...details, hook, err: error }, 'MQTT hook or handler failed');
  reporting.metrics?.brokerFaults.inc({ hook });
}

/**
 * Runs `body`; whatever it throws, at once or through the promise it returns, is logged, counted
 * under `hook` and handed to `refuse` (which refuses the packet) instead of escaping.
 */
export function guard(reporting: FaultReporting, hook: string, details: object, body: () => unknown, refuse: (error: Error) => void): void {
  const fault = (error: unknown): void => {
    reportFault(reporting, hook, details, error);
    try {
      refuse(asError(error));
    } catch (again) {
      reporting.logger.error({ ...details, hook, err: again }, 'MQTT hook failed, and so did refusing the packet');
    }
  };
  try {
    const result = body();
    if (result instanceof Promise) result.catch(fault);
  } catch (error) {
    fault(error);
  }
}

/** The callback, answering once: a refusal after the hook already answered goes unheard instead of answering twice. */
export function answerOnce<A extends unknown[]>(done: (...args: A) => void): (...args: A) => void {
  let answered = false;
  return (...args) => {
    if (answered) return;
    answered = true;
    done(...args);
  };
}
