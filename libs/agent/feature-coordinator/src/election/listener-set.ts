/** Receives one value. */
export type Listener<T> = (value: T) => void;

/**
 * Subscribers to one kind of event. A listener that throws is reported through `onError` and
 * does not keep the others from being called.
 */
export class ListenerSet<T> {
  private readonly listeners = new Set<Listener<T>>();

  /** Adds `listener`; returns the function that removes it. */
  add(listener: Listener<T>): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** Calls every listener added so far with `value`. */
  emit(value: T, onError: (err: unknown) => void): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(value);
      } catch (err) {
        onError(err);
      }
    }
  }
}
