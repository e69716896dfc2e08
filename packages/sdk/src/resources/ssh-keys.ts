/**
 * SSH public keys of the caller (they log in to the caller's VMs and sessions through the server's SSH gateway),
 * and where that gateway listens.
 */
import type { SshGatewayInfo, SshKeyRecord } from '../api-types.ts';
import type { CallOptions } from '../call-options.ts';
import type { Transport } from '../transport.ts';

export class SshKeys {
  constructor(private readonly transport: Transport) {}

  /** Registers a public key (one line of a .pub file); `name` defaults to the key's comment. */
  async create(publicKey: string, options: { name?: string } & CallOptions = {}): Promise<SshKeyRecord> {
    return this.transport.call('/v1/ssh-keys', 'post', {
      json: { public_key: publicKey, ...(options.name !== undefined ? { name: options.name } : {}) },
      signal: options.signal,
    });
  }

  async list(options: CallOptions = {}): Promise<SshKeyRecord[]> {
    return this.transport.call('/v1/ssh-keys', 'get', { signal: options.signal });
  }

  async get(id: number, options: CallOptions = {}): Promise<SshKeyRecord> {
    return this.transport.call('/v1/ssh-keys/{key_id}', 'get', { params: { key_id: id }, signal: options.signal });
  }

  /** Deletes a key: it stops logging in at once. */
  async delete(id: number, options: CallOptions = {}): Promise<void> {
    await this.transport.call('/v1/ssh-keys/{key_id}', 'delete', { params: { key_id: id }, signal: options.signal });
  }

  /** The SSH gateway's host, port and host key fingerprint (`enabled: false` when the server runs without it). */
  async info(options: CallOptions = {}): Promise<SshGatewayInfo> {
    return this.transport.call('/v1/ssh/info', 'get', { signal: options.signal });
  }
}
