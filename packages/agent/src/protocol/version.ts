/**
 * The generation of the host-guest protocol. Both sides import this module, and the handshake
 * (`GET /v1/hello`) carries the agent's value so the host can refuse an agent it does not speak.
 *
 * - Bump `major` for any change an older peer would misread: a removed or renamed route, field or frame type,
 *   a changed meaning, a changed link-sync byte sequence. Route paths carry the major (`/v1/...`).
 * - Bump `minor` for additions an older peer can ignore: a new route, an optional field, a new frame type that
 *   is only sent when the peer asked for it.
 */
export const PROTOCOL_VERSION = { major: 1, minor: 8 } as const;

// 1.3: route answer limits and the DEADLINE_EXCEEDED error (`routes.ts`, `errors.ts`); the hello's `bootId` is null
// until the first restore, which also renews /etc/machine-id (`messages.ts`).
// 1.4: `spare` runs of `POST /v1/python/run` (capability `python-spare`), to warm a VM before it is handed out.
// 1.5: live captures: `POST /v1/snapshot/quiesce` and `/thaw` (capability `snapshot-quiesce`); a restore renews the
// boot id too, unless `keepIdentity` (a resume) keeps machine id and boot id.
// 1.6: rich Python results (`results` in python run answers) and a context's working directory (`cwd` in python run
// requests), capability `python-results`.
// 1.7: programs run as another account of the guest (`user` in exec requests, the `UNKNOWN_USER` error), capability
// `exec-user`; streamed Python runs (`stream: true` in python run requests: output frames, then the result in an
// `Exit` frame), capability `python-stream`.
// 1.8: kept execs (`keep` and `info` in exec requests, offsets in their `Started` frame, `POST /v1/exec/attach`,
// `GET /v1/exec/kept`, the `EXEC_NOT_FOUND` and `TOO_MANY_KEPT_EXECS` errors), capability `exec-keep`: a process
// that outlives its stream (a paused VM, a restarted host).

/** A protocol generation as carried by the handshake. */
export interface ProtocolVersion {
  major: number;
  minor: number;
}

/** True when a peer speaking `peer` can be driven by this side (same major; minors are additive). */
export function isProtocolCompatible(peer: ProtocolVersion): boolean {
  return peer.major === PROTOCOL_VERSION.major;
}

/** Formats a version as `major.minor` for messages. */
export function formatProtocolVersion(version: ProtocolVersion): string {
  return `${version.major}.${version.minor}`;
}
