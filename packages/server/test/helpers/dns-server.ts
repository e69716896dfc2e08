/**
 * A small authoritative DNS server on loopback (UDP, dns-packet), for custom domain verification tests and the
 * egress tests: it answers TXT and A questions from a zone the test edits, NXDOMAIN for names it does not hold, and an empty
 * answer (NODATA) for other types of a name it holds. `mode` makes it fail like real servers do: `servfail`
 * answers SERVFAIL, `silent` drops every query (the resolver times out).
 */
import dgram from 'node:dgram';
import { once } from 'node:events';
import dnsPacket from 'dns-packet';

const NXDOMAIN = 3;
const SERVFAIL = 2;

export interface DnsServer {
  /** `127.0.0.1:<port>`, for SANDBOXD_DNS_SERVERS. */
  address: string;
  /** Sets the TXT records of a name (each value one record). */
  setTxt(name: string, values: string[]): void;
  /** Sets the A records of a name (IPv4 addresses; TTL 1 s); `*.example.test` answers every name under it. */
  setA(name: string, addresses: string[]): void;
  /** Removes a name from the zone. */
  remove(name: string): void;
  mode: 'answer' | 'servfail' | 'silent';
  /** The names asked about, in order, lower case (every question of a message). */
  readonly queries: string[];
  close(): Promise<void>;
}

export async function startDnsServer(): Promise<DnsServer> {
  const zone = new Map<string, string[]>();
  const aZone = new Map<string, string[]>();
  const queries: string[] = [];
  const socket = dgram.createSocket('udp4');
  const server: DnsServer = {
    address: '',
    setTxt: (name, values) => zone.set(name.toLowerCase(), values),
    setA: (name, addresses) => aZone.set(name.toLowerCase(), addresses),
    remove: (name) => {
      zone.delete(name.toLowerCase());
      aZone.delete(name.toLowerCase());
    },
    mode: 'answer',
    queries,
    close: async () => {
      socket.close();
      await once(socket, 'close');
    },
  };
  socket.on('message', (message, remote) => {
    let query: dnsPacket.Packet;
    try {
      query = dnsPacket.decode(message);
    } catch {
      return; // not DNS: ignore, as a real server would
    }
    const question = query.questions?.[0];
    if (!question) return;
    const name = question.name.toLowerCase();
    for (const asked of query.questions ?? []) queries.push(asked.name.toLowerCase());
    if (queries.length > 100_000) queries.splice(0, 50_000);
    if (server.mode === 'silent') return;
    const records = zone.get(name);
    const wildcard = name
      .split('.')
      .slice(1)
      .map((_, i, labels) => `*.${labels.slice(i).join('.')}`)
      .find((pattern) => aZone.has(pattern));
    const addresses = aZone.get(name) ?? (wildcard ? aZone.get(wildcard) : undefined);
    let rcode = 0;
    let answers: dnsPacket.Answer[] = [];
    if (server.mode === 'servfail') rcode = SERVFAIL;
    else if (!records && !addresses) rcode = NXDOMAIN;
    else if (question.type === 'A' && addresses) answers = addresses.map((address) => ({ type: 'A', name: question.name, ttl: 1, class: 'IN', data: address }));
    else if (question.type === 'TXT' && records) answers = records.map((value) => ({ type: 'TXT', name: question.name, ttl: 1, class: 'IN', data: [value] }));
    const response = dnsPacket.encode({
      type: 'response',
      id: query.id ?? 0,
      flags: dnsPacket.AUTHORITATIVE_ANSWER | rcode,
      questions: query.questions ?? [],
      answers,
    });
    socket.send(response, remote.port, remote.address);
  });
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  server.address = `127.0.0.1:${socket.address().port}`;
  return server;
}
