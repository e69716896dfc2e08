/**
 * The VM state machine of the QEMU driver: which ends are reported (and as expected or not) and which
 * operations a state allows, decided by one table.
 */
import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import { exitToReport, transition, type VmEvent, type VmState } from '../../src/vm/qemu/live-vm.ts';
import type { VmInfo } from '../../src/vm/vm-driver.ts';

function vmIn(state: VmState) {
  return { state, info: { vmId: 'vm-1' } as VmInfo };
}

function run(state: VmState, ...events: VmEvent[]): VmState {
  const vm = vmIn(state);
  for (const event of events) transition(vm, event);
  return vm.state;
}

describe('VM states of the QEMU driver', () => {
  test('a VM that came up and ended by itself is reported as an unexpected exit; after kill as an expected one', () => {
    assert.deepEqual(exitToReport(run('starting', 'up')), { expected: false });
    assert.deepEqual(exitToReport(run('starting', 'up', 'kill')), { expected: true });
  });

  test('a VM that never came up is not reported (its start threw), also when killed during the start', () => {
    assert.equal(exitToReport(run('starting', 'abandon')), null);
    assert.equal(exitToReport(run('starting', 'kill')), null);
    assert.throws(() => run('starting', 'kill', 'up'), { code: 'VM_BAD_STATE' });
  });

  test('a VM consumed by a snapshot is never reported, even when a failed save kills it', () => {
    assert.equal(exitToReport(run('starting', 'up', 'consume')), null);
    assert.equal(exitToReport(run('starting', 'up', 'consume', 'kill')), null);
  });

  test('only a running VM can be consumed by a snapshot', () => {
    for (const state of ['starting', 'abandoned', 'killing', 'consumed', 'exited'] as const) {
      assert.throws(() => run(state, 'consume'), { code: 'VM_BAD_STATE' }, state);
    }
  });

  test('every live state can end, and nothing follows the end', () => {
    for (const state of ['starting', 'running', 'abandoned', 'killing', 'consumed'] as const) assert.equal(run(state, 'end'), 'exited');
    for (const event of ['up', 'abandon', 'kill', 'consume', 'end'] as const) assert.throws(() => run('exited', event), { code: 'VM_BAD_STATE' });
  });
});
