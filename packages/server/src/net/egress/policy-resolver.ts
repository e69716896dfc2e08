/**
 * The DNS server a restricted VM talks to, whatever server it asks: the firewall redirects all of its port-53
 * traffic here (UDP and TCP). A question for a name the policy allows is forwarded to the upstream resolvers
 * and its A records are pinned (the proxy then connects the name's HTTP and HTTPS to those addresses, and a
 * policy's `allowed_ports` open on them) before the answer goes back; any other question is answered NXDOMAIN
 * without asking upstream, so a refused name leaks nothing.
 *
 * Only a standard query with exactly one question is served (opcode QUERY, QDCOUNT 1, no answer or authority
 * records, no additional record but EDNS's OPT), and what goes upstream is a new message built from that one
 * question (with the OPT's payload size and DO bit, none of its options), never the guest's bytes: a second
 * question or an option could otherwise carry a refused name, or data, past the check.
 */
import dgram from 'node:dgram';
import { once } from 'node:events';
import net from 'node:net';
import dnsPacket from 'dns-packet';

const FORMERR = 1;
const SERVFAIL = 2;
const NXDOMAIN = 3;
const REFUSED = 5;
const OPCODE_QUERY = 0;
/** A question name we can match and re-encode as it was checked: letters, digits, '-', '_' and dots. */
const QUESTION_NAME = /^[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?$/i;
/** Pins shorter than this would expire between the answer and the guest's connect on a slow (TCG) guest. */
export const MIN_PIN_SECONDS = 30;
const MAX_PIN_SECONDS = 3600;

/** An upstream resolver, `address` or `address:port`. */
export interface Upstream {
  host: string;
  port: number;
}

export function parseUpstream(entry: string): Upstream {
  const match = /^(\d{1,3}(?:\.\d{1,3}){3})(?::(\d{1,5}))?$/.exec(entry.trim());
  if (!match) throw new Error(`not an IPv4 DNS server (address or address:port): ${JSON.stringify(entry)}`);
  return { host: match[1]!, port: match[2] ? Number(match[2]) : 53 };
}

/** The guest's EDNS record as it goes upstream: its payload size (bounded) and DO bit, none of its options. */
function ednsOf(opt: dnsPacket.OptAnswer): dnsPacket.OptAnswer {
  const flags = (opt.flags ?? 0) & dnsPacket.DNSSEC_OK;
  return {
    type: 'OPT',
    name: '.',
    udpPayloadSize: Math.min(Math.max(opt.udpPayloadSize, 512), 4096),
    extendedRcode: 0,
    ednsVersion: 0,
    flags,
    flag_do: flags !== 0,
    options: [],
  };
}

/**
 * The one question of a standard query and the query re-encoded for upstream (a fresh random id), or the rcode to
 * refuse it with. `message` must already decode as `query`.
 */
export function standardQuery(message: Buffer, query: dnsPacket.Packet): { question: dnsPacket.Question; upstream: Buffer } | { rcode: number } {
  const opcode = (message[2]! >> 3) & 0x0f;
  if (opcode !== OPCODE_QUERY) return { rcode: REFUSED };
  const questions = query.questions ?? [];
  if (questions.length !== 1 || (query.answers?.length ?? 0) > 0 || (query.authorities?.length ?? 0) > 0) return { rcode: FORMERR };
  const additionals = query.additionals ?? [];
  const opt = additionals.find((record): record is dnsPacket.OptAnswer => record.type === 'OPT');
  if (additionals.length > (opt ? 1 : 0)) return { rcode: FORMERR };
  const question = questions[0]!;
  if (!QUESTION_NAME.test(question.name) || question.name.length > 253) return { rcode: FORMERR };
  if ((question.class ?? 'IN') !== 'IN') return { rcode: REFUSED };
  const upstream = dnsPacket.encode({
    type: 'query',
    id: Math.floor(Math.random() * 65536),
    // Recursion desired and checking disabled are the only flags a stub sets that mean anything upstream.
    flags: message.readUInt16BE(2) & (dnsPacket.RECURSION_DESIRED | dnsPacket.CHECKING_DISABLED),
    questions: [{ type: question.type, name: question.name, class: 'IN' }],
    additionals: opt ? [ednsOf(opt)] : [],
  });
  return { question, upstream };
}

/** Sends one raw query to the upstreams in turn (UDP); resolves with the raw answer. */
export async function forwardQuery(query: Buffer, upstreams: Upstream[], timeoutMs = 3000): Promise<Buffer> {
  let lastError: Error = new Error('no upstream DNS server configured');
  for (const upstream of upstreams) {
    const socket = dgram.createSocket('udp4');
    try {
      socket.send(query, upstream.port, upstream.host);
      const answer = await new Promise<Buffer>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${upstream.host}:${upstream.port} did not answer within ${timeoutMs} ms`)), timeoutMs);
        socket.on('message', (message) => {
          if (message.length >= 2 && message.readUInt16BE(0) === query.readUInt16BE(0)) {
            clearTimeout(timer);
            resolve(message);
          }
        });
        socket.once('error', (error) => {
          clearTimeout(timer);
          reject(error);
        });
      });
      return answer;
    } catch (error) {
      lastError = error as Error;
    } finally {
      socket.close();
    }
  }
  throw lastError;
}

/** The IPv4 addresses of `name` with their TTLs, asked of the upstreams (for the proxy, when the guest never asked). */
export async function lookupA(name: string, upstreams: Upstream[]): Promise<{ address: string; ttlSeconds: number }[]> {
  const query = dnsPacket.encode({
    type: 'query',
    id: Math.floor(Math.random() * 65535),
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ type: 'A', name, class: 'IN' }],
  });
  return aRecords(dnsPacket.decode(await forwardQuery(query, upstreams)));
}

function aRecords(answer: dnsPacket.Packet): { address: string; ttlSeconds: number }[] {
  return (answer.answers ?? [])
    .filter((record): record is dnsPacket.StringAnswer => record.type === 'A' && typeof record.data === 'string')
    .map((record) => ({ address: record.data, ttlSeconds: Math.min(MAX_PIN_SECONDS, Math.max(MIN_PIN_SECONDS, record.ttl ?? 0)) }));
}

export interface PolicyResolverOptions {
  upstreams: Upstream[];
  /** Whether the VM's policy allows the name (asked per query: a policy swap applies to the next one). */
  allows(name: string): boolean;
  /**
   * Pins an allowed name's addresses. When it returns a promise the answer waits for it (the firewall needs the
   * pin before the guest connects); an in-memory pin returns nothing and costs the answer nothing.
   */
  pin(name: string, addresses: { address: string; ttlSeconds: number }[]): Promise<void> | void;
  /** A refused question, for the audit log. */
  refused(name: string): void;
}

/** One VM's resolver: a UDP socket and a TCP server on the host's loopback, on ports of their own. */
export class PolicyResolver {
  private udp: dgram.Socket | null = null;
  private tcp: net.Server | null = null;

  constructor(private readonly options: PolicyResolverOptions) {}

  /** Listens; resolves with the two ports. */
  async listen(): Promise<{ udpPort: number; tcpPort: number }> {
    const udp = dgram.createSocket('udp4');
    this.udp = udp;
    udp.on('message', (message, remote) => {
      void this.answer(message).then((reply) => reply && udp.send(reply, remote.port, remote.address));
    });
    udp.on('error', () => undefined);
    udp.bind(0, '127.0.0.1');
    await once(udp, 'listening');
    const tcp = net.createServer((socket) => this.serveTcp(socket));
    this.tcp = tcp;
    tcp.listen(0, '127.0.0.1');
    await once(tcp, 'listening');
    return { udpPort: udp.address().port, tcpPort: (tcp.address() as net.AddressInfo).port };
  }

  /** DNS over TCP: two-byte length, message; one or more per connection. */
  private serveTcp(socket: net.Socket): void {
    let buffered = Buffer.alloc(0);
    socket.setTimeout(10_000, () => socket.destroy());
    socket.on('error', () => undefined);
    socket.on('data', (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (buffered.length > 70_000) return socket.destroy();
      while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
        const message = buffered.subarray(2, 2 + buffered.readUInt16BE(0));
        buffered = buffered.subarray(2 + message.length);
        void this.answer(Buffer.from(message)).then((reply) => {
          if (!reply || socket.destroyed) return;
          const length = Buffer.alloc(2);
          length.writeUInt16BE(reply.length);
          socket.write(Buffer.concat([length, reply]));
        });
      }
    });
  }

  /** The reply to one query message, or null for what is not a DNS query. */
  async answer(message: Buffer): Promise<Buffer | null> {
    let query: dnsPacket.Packet;
    try {
      query = dnsPacket.decode(message);
    } catch {
      return null;
    }
    if (query.type !== 'query') return null;
    const reply = (rcode: number, questions: dnsPacket.Question[] = []) =>
      dnsPacket.encode({
        type: 'response',
        id: query.id ?? 0,
        flags: (message.readUInt16BE(2) & dnsPacket.RECURSION_DESIRED) | dnsPacket.RECURSION_AVAILABLE | rcode,
        questions,
      });
    const standard = standardQuery(message, query);
    if ('rcode' in standard) return reply(standard.rcode);
    const { question, upstream } = standard;
    const name = question.name.toLowerCase().replace(/\.$/, '');
    if (!this.options.allows(name)) {
      this.options.refused(name);
      return reply(NXDOMAIN, [question]);
    }
    try {
      const raw = await forwardQuery(upstream, this.options.upstreams);
      const records = aRecords(dnsPacket.decode(raw));
      if (records.length) await this.options.pin(name, records);
      // The upstream answered our id; the guest gets its own back.
      const answer = Buffer.from(raw);
      answer.writeUInt16BE(query.id ?? 0, 0);
      return answer;
    } catch {
      return reply(SERVFAIL, [question]);
    }
  }

  async close(): Promise<void> {
    const udp = this.udp;
    const tcp = this.tcp;
    this.udp = null;
    this.tcp = null;
    if (udp) await new Promise<void>((resolve) => udp.close(() => resolve()));
    if (tcp) await new Promise<void>((resolve) => tcp.close(() => resolve()));
  }
}
