import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { endMarker, MarkedOutput } from '../src/python/marked-output.ts';

describe('per-run output of a kernel pipe', () => {
  it('cuts at the end marker even when the pipe splits it, and keeps later bytes for the next run', async () => {
    const output = new MarkedOutput();
    output.begin(1);
    const wire = Buffer.concat([Buffer.from('first run\n'), endMarker(1), Buffer.from('background ')]);
    for (let i = 0; i < wire.length; i += 3) output.push(wire.subarray(i, i + 3));
    assert.equal(await output.finish(1000), 'first run\n');
    output.begin(2);
    output.push(Buffer.concat([Buffer.from('second\n'), endMarker(2)]));
    assert.equal(await output.finish(1000), 'background second\n');
  });

  it('gives what arrived when the marker never comes', async () => {
    const output = new MarkedOutput();
    output.begin(1);
    output.push(Buffer.from('partial'));
    assert.equal(await output.finish(10), 'partial');
  });

  it('truncates beyond its limit', async () => {
    const output = new MarkedOutput(8);
    output.begin(1);
    output.push(Buffer.concat([Buffer.from('0123456789'), endMarker(1)]));
    assert.equal(await output.finish(1000), '01234567\n[output truncated]\n');
  });
});
