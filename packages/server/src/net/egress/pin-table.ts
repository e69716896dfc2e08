/**
 * The addresses a VM's DNS answers gave for allowed names ("pins"), held in memory. The proxy connects a name's
 * HTTP and HTTPS to one of them (never to an address the guest chose), the firewall opens a policy's
 * `allowed_ports` on them, and the egress log names an address by the name that pinned it.
 *
 * The table is bounded: at most `maxNames` names, each with at most `maxAddressesPerName` addresses; the name
 * least recently pinned or used goes first. A guest flooding unique names (a wildcard policy, an open vault
 * policy) only evicts its own older pins, and its memory stays bounded.
 */

/** An address with the time its pin ends. */
export interface PinnedAddress {
  address: string;
  expiresAtMs: number;
}

/** What the firewall must change after an answer (`PinTable.pin`). */
export interface PinChange {
  /** Addresses new to the table, or whose pin now lasts much longer (their firewall element must be refreshed). */
  fresh: { address: string; ttlSeconds: number }[];
  /** Addresses no name pins any more (an evicted name held them). */
  dropped: string[];
}

export class PinTable {
  /** name → its addresses; Map order is the eviction order (least recently pinned or used first). */
  private readonly names = new Map<string, PinnedAddress[]>();
  /** address → the names pinning it. */
  private readonly holders = new Map<string, Set<string>>();

  constructor(
    readonly maxNames = 1024,
    readonly maxAddressesPerName = 16,
  ) {}

  /** Names held now (expired ones included until they are evicted or `retain`ed away). */
  get size(): number {
    return this.names.size;
  }

  /** The latest end of any pin of `address`, or 0. */
  private expiryOf(address: string): number {
    let latest = 0;
    for (const name of this.holders.get(address) ?? []) {
      for (const pinned of this.names.get(name) ?? []) if (pinned.address === address) latest = Math.max(latest, pinned.expiresAtMs);
    }
    return latest;
  }

  /** Records a DNS answer for `name` (replacing its earlier addresses). */
  pin(name: string, records: readonly { address: string; ttlSeconds: number }[], nowMs: number): PinChange {
    const kept = records.slice(0, this.maxAddressesPerName);
    const before = new Map(kept.map(({ address }) => [address, this.expiryOf(address)]));
    const dropped = this.delete(name);
    this.names.set(
      name,
      kept.map(({ address, ttlSeconds }) => ({ address, expiresAtMs: nowMs + ttlSeconds * 1000 })),
    );
    for (const { address } of kept) {
      let holders = this.holders.get(address);
      if (!holders) this.holders.set(address, (holders = new Set()));
      holders.add(name);
    }
    while (this.names.size > this.maxNames) {
      const oldest = this.names.keys().next().value as string;
      dropped.push(...this.delete(oldest));
    }
    // A firewall element refreshed at every answer would cost an nft transaction each time: only a new address,
    // or one whose pin had less than half of its new lifetime left, is refreshed.
    const fresh = kept.filter(({ address, ttlSeconds }) => before.get(address)! - nowMs < (ttlSeconds * 1000) / 2);
    const stillPinned = new Set(this.holders.keys());
    return { fresh, dropped: [...new Set(dropped)].filter((address) => !stillPinned.has(address)) };
  }

  /** Removes a name; returns its addresses that no other name pins. */
  private delete(name: string): string[] {
    const addresses = this.names.get(name);
    if (!addresses) return [];
    this.names.delete(name);
    const orphaned: string[] = [];
    for (const { address } of addresses) {
      const holders = this.holders.get(address);
      holders?.delete(name);
      if (holders?.size === 0) {
        this.holders.delete(address);
        orphaned.push(address);
      }
    }
    return orphaned;
  }

  /** A live pinned address of `name` (marking the name as used), or undefined. */
  addressOf(name: string, nowMs: number): string | undefined {
    const addresses = this.names.get(name);
    const live = addresses?.find((pinned) => pinned.expiresAtMs > nowMs);
    if (!addresses || !live) return undefined;
    this.names.delete(name);
    this.names.set(name, addresses);
    return live.address;
  }

  /** A name whose live pin holds `address` (for the log), or null. */
  nameOf(address: string, nowMs: number): string | null {
    for (const name of this.holders.get(address) ?? []) {
      if (this.names.get(name)?.some((pinned) => pinned.address === address && pinned.expiresAtMs > nowMs)) return name;
    }
    return null;
  }

  /** Whether a live pin holds `address`. */
  holds(address: string, nowMs: number): boolean {
    return this.nameOf(address, nowMs) !== null;
  }

  /** Every live pinned address with its remaining lifetime (the longest of its names'). */
  addresses(nowMs: number): { address: string; ttlSeconds: number }[] {
    const result: { address: string; ttlSeconds: number }[] = [];
    for (const address of this.holders.keys()) {
      const expiresAtMs = this.expiryOf(address);
      if (expiresAtMs > nowMs) result.push({ address, ttlSeconds: (expiresAtMs - nowMs) / 1000 });
    }
    return result;
  }

  /** Keeps only the names `keep` accepts whose pins have not all ended (a policy change, housekeeping). */
  retain(keep: (name: string) => boolean, nowMs: number): void {
    for (const [name, addresses] of [...this.names]) {
      if (!keep(name) || addresses.every((pinned) => pinned.expiresAtMs <= nowMs)) this.delete(name);
    }
  }
}
