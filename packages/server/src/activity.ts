/**
 * What the server keeps of what VMs did, for their owners to read: a VM's egress attempts, the requests that used
 * a vault's secrets, a desktop session's saved recordings. The store returns these records and the routes shape
 * them. The ground floor, beside model.ts: it imports nothing of the project.
 */
/** Where a desktop recording stands: its MP4 being copied into the object store, saved there, or failed. */
export const DESKTOP_RECORDING_STATUSES = ['saving', 'ready', 'failed'] as const;
export type DesktopRecordingStatus = (typeof DESKTOP_RECORDING_STATUSES)[number];

/** A desktop recording stopped through the computer-use proxy and saved from its VM (or that failed to be). */
export interface StoredRecording {
  /** The in-VM recording id, `rec_` + 16 hex. */
  id: string;
  userId: number;
  sessionId: string;
  vmId: string;
  status: DesktopRecordingStatus;
  durationSeconds: number | null;
  sizeBytes: number | null;
  width: number;
  height: number;
  /** Its key in the object store once saved. */
  objectKey: string | null;
  error: string | null;
  startedAt: string;
  stoppedAt: string;
  createdAt: string;
  savedAt: string | null;
}

/** One connection attempt of a VM under a restricted egress policy, allowed or refused, as enforcement reports it. */
export interface EgressAttempt {
  vmId: string;
  at: Date;
  /** `dns` for a refused name lookup, otherwise the transport. */
  protocol: 'tcp' | 'udp' | 'icmp' | 'dns' | 'other';
  /** `http`/`https` when the egress proxy handled it. */
  scheme: 'http' | 'https' | null;
  /** The name asked for (DNS question, SNI, Host), or the one a DNS answer gave for the address. */
  name: string | null;
  address: string | null;
  port: number | null;
  bytesSent: number | null;
  bytesReceived: number | null;
  verdict: 'allowed' | 'refused';
  reason: string | null;
}

/** An attempt as its VM's egress log keeps it. */
export interface EgressLogRecord extends Omit<EgressAttempt, 'at'> {
  id: number;
  userId: number;
  at: string;
}

/** One use of a vault secret by a VM (substituted), or its placeholder seen going where it is not bound (flagged). */
export interface VaultRequestRecord {
  id: number;
  vaultId: string;
  userId: number;
  secretName: string;
  sessionId: string;
  vmId: string;
  at: string;
  outcome: 'substituted' | 'flagged';
  scheme: 'http' | 'https';
  host: string;
  method: string | null;
  path: string | null;
  status: number | null;
  detail: string | null;
}
