// Structures that only speed facets up (value orders, repeat masks) are built
// after the request that first wanted them, one per turn of the event loop,
// so the first facets after start (the explorer's first page) does not wait
// for all of them: that request reads every row instead, with the same answer.

const pending = new WeakSet<object>();
const queue: (() => void)[] = [];
let running = false;

function next(): void {
  const job = queue.shift();
  if (!job) {
    running = false;
    return;
  }
  try {
    job();
  } finally {
    // A failed build leaves its key pending: the facets keep their slower, exact path.
    setTimeout(next, 0).unref();
  }
}

/** Build `build()` soon, once per `key` (the data it is built from). */
export function buildSoon(key: object, build: () => void): void {
  if (pending.has(key)) return;
  pending.add(key);
  queue.push(build);
  if (!running) {
    running = true;
    setTimeout(next, 0).unref();
  }
}
