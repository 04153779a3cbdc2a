/**
 * A value at hand, or one that comes later. The partner checks read their lookups through this: a
 * request whose service, token, connection, device and status are all in memory is checked and
 * answered without a promise or a microtask per lookup (issue 16: ~7 % of a status read's CPU).
 */
export type Eventually<T> = T | Promise<T>;

/** `next` of the value: at once if it is at hand, else once it comes. (Not named `then`: a module exporting `then` is itself a thenable to `import()`.) */
export function andThen<T, U>(value: Eventually<T>, next: (value: T) => Eventually<U>): Eventually<U> {
  return value instanceof Promise ? value.then(next) : next(value);
}
