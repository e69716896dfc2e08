/**
 * Source of the worker thread that reads the virtio-serial port (run with `new Worker(source, {eval: true})`,
 * so the bundle stays one file).
 *
 * Why a worker with blocking reads: a virtio port cannot be watched with epoll from Node (libuv sees a
 * character device as a file), and `fs.read` would hold one of libuv's four pool threads for as long as the host
 * is silent. A dedicated thread may block. The port's read semantics it handles:
 * - a read returns at most one 4 KiB port buffer, so the chunks are small and frequent;
 * - with no host connected, read returns 0 at once (not an EOF for good): report one `hangup`, then poll with a
 *   growing sleep until a host connects and bytes arrive again;
 * - a 0-byte read is a hangup only if a second read `hangupConfirmMs` later returns 0 at once too. The guest
 *   learns that a host left and that the next one came through virtio-serial's control queue, which is not
 *   ordered with the data queue: on a quick reconnect a read can see the old host's departure after the new
 *   host's first bytes. Reported then, that stale hangup reset the link in the middle of the new host's link
 *   sync, and the agent dropped its HTTP/2 preface (a hello that never got an answer; under load, 3 of 30
 *   reconnects)
 *
 * Protocol with the main thread: `workerData = {fd, bufferBytes, pollMinMs, pollMaxMs, hangupConfirmMs, control}` where `control`
 * is a SharedArrayBuffer of two int32: [0] = 1 pauses reading (backpressure), [1] = 1 stops the worker.
 * Messages: `{type: 'data', chunk: Uint8Array}` (transferred), `{type: 'hangup'}`, `{type: 'error', code, message}`.
 */
export const PORT_READER_SOURCE = String.raw`
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const { fd, bufferBytes, pollMinMs, pollMaxMs, hangupConfirmMs, control } = workerData;
const flags = new Int32Array(control);
const sleeper = new Int32Array(new SharedArrayBuffer(4));
const buffer = Buffer.allocUnsafe(bufferBytes);
let connected = false;
let pollMs = pollMinMs;
// Set by a 0-byte read while connected: the next quick 0-byte read confirms the hangup (see above).
let suspectHangup = false;
while (Atomics.load(flags, 1) === 0) {
  if (Atomics.load(flags, 0) === 1) {
    Atomics.wait(flags, 0, 1, 1000);
    continue;
  }
  let count;
  const readStarted = Date.now();
  try {
    count = fs.readSync(fd, buffer, 0, buffer.length, null);
  } catch (error) {
    if (error.code === 'EINTR') continue;
    // A port fd is blocking; only a non-blocking fd (a FIFO in tests) says EAGAIN: wait instead of spinning.
    if (error.code === 'EAGAIN') {
      Atomics.wait(sleeper, 0, 0, pollMinMs);
      continue;
    }
    parentPort.postMessage({ type: 'error', code: error.code, message: error.message });
    break;
  }
  if (count === 0) {
    // A read that blocked before it returned 0 saw a host first: a new departure, to be confirmed afresh.
    if (connected && (!suspectHangup || Date.now() - readStarted > hangupConfirmMs)) {
      suspectHangup = true;
      Atomics.wait(sleeper, 0, 0, hangupConfirmMs);
      continue;
    }
    if (connected) {
      connected = false;
      suspectHangup = false;
      parentPort.postMessage({ type: 'hangup' });
    }
    Atomics.wait(sleeper, 0, 0, pollMs);
    pollMs = Math.min(pollMs * 2, pollMaxMs);
    continue;
  }
  connected = true;
  suspectHangup = false;
  pollMs = pollMinMs;
  const chunk = new Uint8Array(count);
  chunk.set(buffer.subarray(0, count));
  parentPort.postMessage({ type: 'data', chunk }, [chunk.buffer]);
}
`;
