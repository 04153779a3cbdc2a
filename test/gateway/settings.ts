/** What every external-broker test shares, in a module of its own that node processes load without the app. */
export const MOSQUITTO_URL = 'mqtt://127.0.0.1:1883';

/** The device stream's lease and session in tests: a node stopped is taken over within a second, and Mosquitto forgets a test's session soon after. */
export const TEST_STREAM = { leaseMs: 900, sessionExpiryS: 30 };
