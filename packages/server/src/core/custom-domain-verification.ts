/**
 * The DNS check that proves a custom domain claim: the TXT record `_sandboxd-challenge.<domain>` must hold
 * the claim's token. The core asks a `TxtResolver` (implemented over Node's resolver in `src/dns/`, with the
 * servers and timeout of the configuration) and turns its answer into the message a user reads.
 */
import { randomBytes } from 'node:crypto';
import { challengeName } from './custom-domain-names.ts';

/** What a TXT lookup found. */
export type TxtAnswer =
  /** The records at the name, each one's character strings joined. */
  | { kind: 'records'; records: string[] }
  /** The name does not exist (`nxdomain`) or has no TXT record (`nodata`). */
  | { kind: 'absent'; why: 'nxdomain' | 'nodata' }
  /** No usable answer: a timeout, a refusal, a server failure. Worth asking again later. */
  | { kind: 'error'; code: string; message: string };

/** Looks up TXT records (the port the core needs; `src/dns/txt-resolver.ts` implements it). */
export interface TxtResolver {
  lookupTxt(name: string): Promise<TxtAnswer>;
}

/** The outcome of one check of a claim. */
export type ChallengeResult = { verified: true } | { verified: false; error: string };

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
const SHOWN_RECORDS = 3;
const SHOWN_RECORD_LENGTH = 80;

/** A fresh verification token: `sandboxd-verify-` + 32 base32 characters (160 bits). */
export function newVerificationToken(): string {
  const bytes = randomBytes(32);
  let out = '';
  for (const byte of bytes) out += BASE32[byte % 32];
  return `sandboxd-verify-${out}`;
}

/** Checks whether `domain`'s challenge record holds `token`; a failure says what was found instead. */
export async function checkChallenge(resolver: TxtResolver, domain: string, token: string): Promise<ChallengeResult> {
  const name = challengeName(domain);
  let answer: TxtAnswer;
  try {
    answer = await resolver.lookupTxt(name);
  } catch (error) {
    answer = { kind: 'error', code: 'ERROR', message: (error as Error).message };
  }
  if (answer.kind === 'error') return { verified: false, error: `the DNS lookup of ${name} failed (${answer.message}); it is tried again later` };
  if (answer.kind === 'absent') {
    const what = answer.why === 'nxdomain' ? 'the name does not exist' : 'the name has no TXT record';
    return { verified: false, error: `no TXT record at ${name} (${what}): create one whose value is verification.value, then verify again` };
  }
  if (answer.records.some((record) => record.trim() === token)) return { verified: true };
  const shown = answer.records
    .slice(0, SHOWN_RECORDS)
    .map((record) => JSON.stringify(record.length > SHOWN_RECORD_LENGTH ? `${record.slice(0, SHOWN_RECORD_LENGTH)}…` : record))
    .join(', ');
  const more = answer.records.length > SHOWN_RECORDS ? ` and ${answer.records.length - SHOWN_RECORDS} more` : '';
  return { verified: false, error: `the TXT records at ${name} do not include this claim's verification.value (found ${shown}${more})` };
}
