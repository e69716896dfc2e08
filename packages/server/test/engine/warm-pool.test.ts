/**
 * The warm pool's sizing, without VMs: items are numbers, a clock the test moves. It keeps its floor; a burst of
 * takes grows it (up to its ceiling) only while the host has room; it shrinks back once the burst has aged out of
 * the demand window; a key wanted with 0 is not kept.
 */
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { describe, test } from 'node:test';
import { BURST_SPAN_MS, DEMAND_WINDOW_MS, WarmPool } from '../../src/engine/warm-pool.ts';

function makePool(options: { size: number; max: number; room?: () => boolean }) {
  let clock = 1_000_000;
  let next = 0;
  const destroyed: number[] = [];
  const pool = new WarmPool<string, number>({
    size: options.size,
    max: options.max,
    create: async () => next++,
    destroy: async (item) => void destroyed.push(item),
    roomForMore: options.room ?? (() => true),
    refillAfterTakeMs: 10,
    now: () => clock,
  });
  return {
    pool,
    destroyed,
    advance: (ms: number) => (clock += ms),
    /** Waits until `key` holds `count` idle items (refills run one at a time, each a microtask chain). */
    async settled(key: string, count: number) {
      for (let i = 0; i < 200 && (pool.counts()[key] ?? 0) !== count; i++) await delay(5);
      assert.equal(pool.counts()[key] ?? 0, count, `${key} settles at ${count} idle items`);
    },
  };
}

describe('warm pool sizing', () => {
  test('keeps its floor, grows to a burst up to its ceiling, and shrinks once the burst ages out', async () => {
    const { pool, destroyed, advance, settled } = makePool({ size: 2, max: 5 });
    pool.want('a');
    await settled('a', 2);
    assert.equal(pool.target('a'), 2);

    // Four takes within a minute: the pool aims for four and refills to it.
    for (let i = 0; i < 4; i++) {
      pool.take('a');
      advance(1000);
    }
    assert.equal(pool.target('a'), 4);
    await settled('a', 4);

    // A bigger burst is capped at the ceiling; takes more than a burst span apart do not add up.
    for (let i = 0; i < 8; i++) pool.take('a');
    assert.equal(pool.target('a'), 5);
    await settled('a', 5);
    advance(BURST_SPAN_MS + 1);
    pool.take('a');
    assert.equal(pool.target('a'), 5, 'the earlier burst still counts within the window');
    await settled('a', 5);

    // Once every take is older than the window, demand is gone: back to the floor, the extras destroyed.
    advance(DEMAND_WINDOW_MS + 1);
    assert.equal(pool.target('a'), 2);
    pool.take('a'); // any activity rebalances; this take is demand of one, under the floor
    await settled('a', 2);
    assert.ok(destroyed.length >= 2, `the extra items were destroyed (${destroyed.length})`);
    await pool.close();
  });

  test('grows above its floor only while the host has room; the floor refills regardless', async () => {
    let room = false;
    const { pool, settled } = makePool({ size: 1, max: 4, room: () => room });
    pool.want('a');
    await settled('a', 1);
    for (let i = 0; i < 3; i++) pool.take('a');
    assert.equal(pool.target('a'), 3);
    await settled('a', 1); // the floor, made without asking for room
    room = true;
    await delay(2500); // the pool looks for room again every two seconds
    await settled('a', 3);
    await pool.close();
  });

  test('a key wanted with 0 is not kept, and closing destroys every idle item', async () => {
    const { pool, destroyed, settled } = makePool({ size: 1, max: 3 });
    pool.want('a');
    pool.want('b', 0);
    await settled('a', 1);
    assert.equal(pool.take('b'), undefined);
    assert.equal(pool.target('b'), 0);
    await pool.close();
    assert.deepEqual(pool.counts(), {});
    assert.equal(destroyed.length, 1);
  });
});
