// A minimal event emitter: on(type, fn) returns a function that removes the listener. A listener
// that throws does not stop the others or the client: its error goes to the 'error' listeners
// (or, with none, to console.error), so one bad handler never breaks delivery.
export class Emitter {
  #listeners = new Map();

  on(type, fn) {
    if (typeof fn !== 'function') throw new TypeError('listener must be a function');
    let set = this.#listeners.get(type);
    if (!set) this.#listeners.set(type, (set = new Set()));
    set.add(fn);
    return () => this.off(type, fn);
  }

  off(type, fn) {
    this.#listeners.get(type)?.delete(fn);
  }

  emit(type, event) {
    const set = this.#listeners.get(type);
    if (!set || set.size === 0) {
      if (type === 'error') console.error('waterline:', event?.error ?? event);
      return;
    }
    for (const fn of [...set]) {
      try {
        fn(event);
      } catch (error) {
        if (type === 'error') console.error('waterline: an error listener threw', error);
        else this.emit('error', { source: 'listener', type, error });
      }
    }
  }
}
