/**
 * A throwaway certificate authority and one server certificate for the given names, made with openssl in a
 * temporary directory (the egress tests' HTTPS servers; a guest trusts the CA by being handed its file).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runProgram } from '../../src/host/run-program.ts';

export interface TestCa {
  dir: string;
  caCertPath: string;
  certPath: string;
  keyPath: string;
  remove(): void;
}

export async function createTestCa(names: string[]): Promise<TestCa> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sbx-test-ca-'));
  const file = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => runProgram('openssl', args, { timeoutMs: 30_000 });
  await openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    file('ca.key'),
    '-out',
    file('ca.pem'),
    '-days',
    '2',
    '-subj',
    '/CN=sandboxd test CA',
  );
  await openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('server.key'), '-out', file('server.csr'), '-subj', `/CN=${names[0]}`);
  fs.writeFileSync(
    file('ext.cnf'),
    `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n`,
  );
  await openssl(
    'x509',
    '-req',
    '-in',
    file('server.csr'),
    '-CA',
    file('ca.pem'),
    '-CAkey',
    file('ca.key'),
    '-CAcreateserial',
    '-out',
    file('server.pem'),
    '-days',
    '2',
    '-extfile',
    file('ext.cnf'),
  );
  // The fixture server may run as another user in its namespace; the key is a throwaway.
  fs.chmodSync(file('server.key'), 0o644);
  return {
    dir,
    caCertPath: file('ca.pem'),
    certPath: file('server.pem'),
    keyPath: file('server.key'),
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}
