import { afterEach, describe, expect, it, vi } from 'vitest';
import { Semaphore } from '../../src/db/semaphore.js';
import { ServiceUnavailableError } from '../../src/db/errors.js';

// The pool's admission gate on its own (no database): permits, arrival order, ranks, a bounded queue and
// a bounded wait. Waits are driven by fake timers: nothing here depends on the machine's speed.

afterEach(() => {
  vi.useRealTimers();
});

/** Settles pending promise callbacks. */
const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('Semaphore', () => {
  it('grants up to `size` permits at once, then serves waiters in arrival order as permits come back', async () => {
    const gate = new Semaphore({ size: 2 });
    const served: string[] = [];
    await gate.acquire();
    await gate.acquire();
    expect([gate.inUse, gate.queued]).toEqual([2, 0]);
    for (const name of ['a', 'b', 'c']) void gate.acquire().then(() => served.push(name));
    await flush();
    expect([served, gate.queued]).toEqual([[], 3]);
    gate.release();
    await flush();
    expect(served).toEqual(['a']);
    gate.release();
    gate.release();
    await flush();
    expect([served, gate.inUse, gate.queued]).toEqual([['a', 'b', 'c'], 2, 0]);
    gate.release();
    gate.release();
    expect(gate.inUse).toBe(0);
  });

  it('resizes: growing serves waiters at once, shrinking retires permits as they come back', async () => {
    const gate = new Semaphore({ size: 1 });
    await gate.acquire();
    const served: string[] = [];
    for (const name of ['a', 'b', 'c']) void gate.acquire().then(() => served.push(name));
    gate.resize(3);
    await flush();
    expect([served, gate.inUse, gate.queued]).toEqual([['a', 'b'], 3, 1]);
    gate.resize(1);
    gate.release();
    gate.release();
    await flush();
    expect([served, gate.inUse]).toEqual([['a', 'b'], 1]);
    gate.release();
    await flush();
    expect([served, gate.inUse]).toEqual([['a', 'b', 'c'], 1]);
  });

  it('hands a permit to the waiter of lowest rank first (a request holding no connection before one holding several)', async () => {
    const gate = new Semaphore({ size: 1 });
    await gate.acquire();
    const served: string[] = [];
    const heavy = { connections: 3 };
    const cheap = { connections: 0 };
    void gate.acquire(undefined, () => heavy.connections).then(() => served.push('heavy'));
    void gate.acquire(undefined, () => cheap.connections).then(() => served.push('cheap'));
    gate.release();
    await flush();
    expect(served).toEqual(['cheap']);
    gate.release();
    await flush();
    expect(served).toEqual(['cheap', 'heavy']);
  });

  it('reports the wait to `onQueued` only when there is one', async () => {
    const gate = new Semaphore({ size: 1 });
    const events: string[] = [];
    const onQueued = () => (events.push('queued'), () => events.push('served'));
    await gate.acquire(onQueued);
    expect(events).toEqual([]);
    const second = gate.acquire(onQueued);
    expect(events).toEqual(['queued']);
    gate.release();
    await second;
    expect(events).toEqual(['queued', 'served']);
  });

  it('refuses with "server busy" past maxQueue waiters, and after queueTimeoutMs of waiting', async () => {
    vi.useFakeTimers();
    const gate = new Semaphore({ size: 1, maxQueue: 1, queueTimeoutMs: 2_000 });
    await gate.acquire();
    const waiting = gate.acquire();
    const refused = gate.acquire();
    await expect(refused).rejects.toThrow(ServiceUnavailableError);
    await expect(refused).rejects.toMatchObject({ reason: 'server busy' });
    expect(gate.queued).toBe(1);
    vi.advanceTimersByTime(2_000);
    await expect(waiting).rejects.toMatchObject({ reason: 'server busy' });
    expect(gate.queued).toBe(0);
    // the refused waiter took no permit: the holder's release frees it
    gate.release();
    expect(gate.inUse).toBe(0);
  });
});
