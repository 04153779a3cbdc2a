/**
 * Reads by key asked for in one turn of the event loop, in one statement (issue 16). Every device
 * report reads its device's state before it writes it; each read alone was a round trip and a
 * checkout of the pool, as much of a report's CPU as its share of the group that writes it.
 */

interface Waiting<Row> {
  resolve: (row: Row | undefined) => void;
  reject: (error: unknown) => void;
}

export class BatchedReads<Row> {
  readonly #load: (keys: string[]) => Promise<Map<string, Row>>;
  #waiting = new Map<string, Array<Waiting<Row>>>();

  /** `load` reads the rows of the keys given, in one statement; a key without a row has none. */
  constructor(load: (keys: string[]) => Promise<Map<string, Row>>) {
    this.#load = load;
  }

  /** The row of `key` as read with the others asked for in this turn. */
  read(key: string): Promise<Row | undefined> {
    return new Promise((resolve, reject) => {
      if (this.#waiting.size === 0) setImmediate(() => void this.#readAll());
      const readers = this.#waiting.get(key);
      if (readers) readers.push({ resolve, reject });
      else this.#waiting.set(key, [{ resolve, reject }]);
    });
  }

  async #readAll(): Promise<void> {
    const batch = this.#waiting;
    this.#waiting = new Map();
    try {
      const rows = await this.#load([...batch.keys()]);
      for (const [key, readers] of batch) for (const reader of readers) reader.resolve(rows.get(key));
    } catch (error) {
      for (const readers of batch.values()) for (const reader of readers) reader.reject(error);
    }
  }
}
