/**
 * A sandboxd session as E2B's control plane shows a sandbox: `Sandbox` (what create and connect answer, with the
 * tokens the SDK then uses) and `SandboxDetail`/`ListedSandbox` (what get and list answer).
 */
import type { Session, Vm } from '../../../model.ts';
import type { Services } from '../../../services.ts';
import { clientDataOf, ENVD_VERSION, sandboxStateOf, type SandboxState } from '../wire.ts';

/** The `domain` sandboxes answer with: `getHost(port)` is `{port}-{sandboxID}.<domain>`, so a public URL's port rides along. */
export function sandboxDomain(services: Services): string {
  const { port } = new URL(services.config.server.publicUrl);
  return `${services.sandbox.appUrls.appDomain}${port ? `:${port}` : ''}`;
}

/** What create and connect answer: the sandbox and the credentials of its ports. */
export function sandboxCreated(services: Services, session: Session) {
  const data = clientDataOf(session);
  return {
    sandboxID: session.id,
    templateID: data.template,
    clientID: 'sandboxd',
    envdVersion: ENVD_VERSION,
    envdAccessToken: services.sessionTokens.tokenFor('access', session.id),
    trafficAccessToken: data.publicTraffic ? null : services.sessionTokens.tokenFor('traffic', session.id),
    domain: sandboxDomain(services),
  };
}

/** When a VM's sandbox ends: its expiry, or, while paused, now plus what it has left. */
function endAtOf(vm: Vm, now: Date): string {
  if (vm.status === 'paused') return new Date(now.getTime() + (vm.remainingSeconds ?? 0) * 1000).toISOString();
  return vm.expiresAt;
}

/** What list answers for one sandbox (null when the sandbox is gone). */
export function listedSandbox(session: Session, vm: Vm | undefined, now: Date) {
  const state: SandboxState | null = sandboxStateOf(vm);
  if (!vm || !state) return null;
  const data = clientDataOf(session);
  return {
    sandboxID: session.id,
    templateID: data.template,
    clientID: 'sandboxd',
    startedAt: vm.startedAt ?? vm.createdAt,
    endAt: endAtOf(vm, now),
    cpuCount: vm.vcpuCount,
    memoryMB: vm.memoryMb,
    // The guest disk is a copy-on-write overlay of the template; its size is not a per-sandbox setting.
    diskSizeMB: 0,
    envdVersion: ENVD_VERSION,
    metadata: session.metadata,
    state,
    volumeMounts: [] as { name: string; path: string }[],
  };
}

/** What get answers: the listed fields, the access token and the sandbox's domain. */
export function sandboxDetail(services: Services, session: Session, vm: Vm | undefined) {
  const listed = listedSandbox(session, vm, services.clock.now());
  if (!listed) return null;
  const data = clientDataOf(session);
  return {
    ...listed,
    envdAccessToken: services.sessionTokens.tokenFor('access', session.id),
    domain: sandboxDomain(services),
    // autoPause at create pauses the sandbox at its timeout (on_expiry); its traffic then resumes it.
    lifecycle: { autoResume: session.onExpiry === 'pause' || session.autoPauseSeconds !== null, onTimeout: session.onExpiry },
    network: { allowPublicTraffic: data.publicTraffic },
  };
}
