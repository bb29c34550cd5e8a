// The virtual world of bench/rollout.mjs's fleet part: events in virtual time, and the bucket
// object the leader keeps its rollout state in.

/** Events in virtual time: a binary heap ordered by (time, insertion). */
export class EventQueue {
  #heap = [];
  #seq = 0;
  push(t, fn) {
    const heap = this.#heap;
    heap.push({ t, seq: this.#seq++, fn });
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#less(heap[i], heap[parent])) break;
      [heap[i], heap[parent]] = [heap[parent], heap[i]];
      i = parent;
    }
  }
  pop() {
    const heap = this.#heap;
    const top = heap[0];
    const last = heap.pop();
    if (heap.length > 0) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && this.#less(heap[l], heap[m])) m = l;
        if (r < heap.length && this.#less(heap[r], heap[m])) m = r;
        if (m === i) break;
        [heap[i], heap[m]] = [heap[m], heap[i]];
        i = m;
      }
    }
    return top;
  }
  get size() {
    return this.#heap.length;
  }
  #less(a, b) {
    return a.t < b.t || (a.t === b.t && a.seq < b.seq);
  }
}

/** dns/rollouts.json in a bucket with ETags and conditional writes, counting requests. */
export class Bucket {
  gets = 0;
  puts = 0;
  #etag = 0;
  #body;
  constructor(body) {
    this.#body = body;
  }
  get() {
    this.gets++;
    return { body: this.#body, etag: String(this.#etag) };
  }
  putIfMatch(body, etag) {
    this.puts++;
    if (etag !== String(this.#etag)) throw new Error(`conditional PUT refused: ${etag} is stale`);
    this.#body = body;
    return String(++this.#etag);
  }
}
