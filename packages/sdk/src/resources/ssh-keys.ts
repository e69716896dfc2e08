/**
 * SSH public keys of the caller (they log in to the caller's VMs and sessions through the server's SSH gateway),
 * and where that gateway listens.
 */
import type { SshGatewayInfo, SshKeyRecord } from '../api-types.ts';
import type { Transport } from '../transport.ts';

export class SshKeys {
  constructor(private readonly transport: Transport) {}

  /** Registers a public key (one line of a .pub file); `name` defaults to the key's comment. */
  async create(publicKey: string, options: { name?: string } = {}): Promise<SshKeyRecord> {
    return this.transport.call('/v1/ssh-keys', 'post', { json: { public_key: publicKey, ...(options.name !== undefined ? { name: options.name } : {}) } });
  }

  async list(): Promise<SshKeyRecord[]> {
    return this.transport.call('/v1/ssh-keys', 'get');
  }

  async get(id: number): Promise<SshKeyRecord> {
    return this.transport.call('/v1/ssh-keys/{key_id}', 'get', { params: { key_id: id } });
  }

  /** Deletes a key: it stops logging in at once. */
  async delete(id: number): Promise<void> {
    await this.transport.call('/v1/ssh-keys/{key_id}', 'delete', { params: { key_id: id } });
  }

  /** The SSH gateway's host, port and host key fingerprint (`enabled: false` when the server runs without it). */
  async info(): Promise<SshGatewayInfo> {
    return this.transport.call('/v1/ssh/info', 'get');
  }
}
