/** The part of autocannon the load generator uses (it ships no types; declared here, STYLE habit 6). */
declare module 'autocannon' {
  export interface Request {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
  }

  export interface Client {
    setRequests(requests: Request[]): void;
  }

  export interface Options {
    url: string;
    connections: number;
    duration: number;
    requests?: Request[];
    /** Called once per connection as it is created. */
    setupClient?: (client: Client) => void;
  }

  export interface Histogram {
    average: number;
    p50: number;
    p90: number;
    p99: number;
    max: number;
  }

  export interface Result {
    duration: number;
    latency: Histogram;
    requests: Histogram & { total: number };
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
  }

  export default function autocannon(options: Options, callback: (error: Error | null, result: Result) => void): unknown;
}
