/**
 * The commands one node of a cluster sends another (`POST /internal/v1/commands` on the receiver's internal
 * listener): one body shape, a union told apart by `op` (Firecracker's `VmmAction`), parsed once and dispatched to
 * one handler per op (`api/internal/commands.ts`). Streams to a VM's agent go over the agent RPC's WebSocket and
 * kills through the owner's durable queue; everything else a node asks of another is one of these.
 *
 * - `vm.start`: start a session's new VM here (placement chose this node);
 * - `vm.resume`: resume a paused VM here from the cluster's object store (the node asked is drained or full);
 * - `egress.policy`: read (`policy` null) or replace the egress policy of a VM this node runs;
 * - `browser.call`: run a call on a browser session whose page this node holds (`call.method` names the
 *   service's method, `call.argument` is the public route's body, validated with that route's very schema).
 *
 * Every command carries the principal the sending node authenticated: the receiver trusts it only because the
 * whole body is signed for it (api/internal/signed-request.ts), and checks ownership again as for a local call.
 */
import { Type, type Static, type TSchema } from 'typebox';
import {
  BrowserClickRequest,
  BrowserContentRequest,
  BrowserExtractRequest,
  BrowserFillCredentialRequest,
  BrowserFillRequest,
  BrowserKeyPressRequest,
  BrowserNavigateRequest,
  BrowserScreenshotRequest,
  BrowserScrollRequest,
  BrowserSessionIdParams,
  BrowserTargetRequest,
  BrowserTypeRequest,
  BrowserWaitRequest,
  type BrowserInteractionName,
} from './browser/index.ts';

/** Where every command goes (the receiver's internal listener). */
export const INTERNAL_COMMANDS_PATH = '/internal/v1/commands';

/** The caller a node authenticated, as it travels in a signed command (the core's `Principal`). */
export const SignedPrincipal = Type.Object({
  userId: Type.Integer(),
  username: Type.String(),
  plan: Type.String(),
  isAdmin: Type.Boolean(),
  via: Type.Union([Type.Literal('api_key'), Type.Literal('access_token'), Type.Literal('ssh_key'), Type.Literal('session_token')]),
  apiKeyId: Type.Union([Type.Integer(), Type.Null()]),
});

/** An egress policy as nodes pass it (the core's `EgressPolicy` field names); the receiver normalizes it again. */
export const InternalEgressPolicy = Type.Object({
  allowPackageManagers: Type.Boolean(),
  allowHttp: Type.Boolean(),
  allowHttps: Type.Boolean(),
  allowedDomains: Type.Array(Type.String(), { maxItems: 1000 }),
  allowedCidrs: Type.Array(Type.String(), { maxItems: 1000 }),
  allowedPorts: Type.Array(Type.String(), { maxItems: 1000 }),
});

const PreStopHook = Type.Object({ command: Type.String({ minLength: 1 }), timeoutSeconds: Type.Integer({ minimum: 1, maximum: 120 }) });

/** What a VM placed on another node starts with (its session's source, which that node resolves itself). */
export const VmStartSpec = Type.Object({
  vcpuCount: Type.Integer({ minimum: 1, maximum: 64 }),
  memoryMb: Type.Integer({ minimum: 64 }),
  lifetimeSeconds: Type.Integer({ minimum: 1 }),
  name: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  metadata: Type.Optional(Type.Record(Type.String(), Type.String())),
  /** The VM's own lifecycle hooks (absent: its session's). */
  lifecycleHooks: Type.Optional(Type.Union([Type.Object({ preStop: Type.Union([PreStopHook, Type.Null()]) }), Type.Null()])),
  /** The VM's own egress policy (absent: its session's), stored with its reservation on that node. */
  egressPolicy: Type.Optional(InternalEgressPolicy),
});
export type VmStartSpec = Static<typeof VmStartSpec>;

/**
 * The browser calls bound to one session's page, by the service's method name: the schema of the one argument
 * after the principal (the public route's body, or for `closeSession` its session id parameter), and the public
 * interaction whose rules across fields apply to it.
 */
export const BROWSER_CALLS = {
  closeSession: { argument: BrowserSessionIdParams.properties.session_id, interaction: null },
  navigate: { argument: BrowserNavigateRequest, interaction: 'navigate' },
  click: { argument: BrowserClickRequest, interaction: 'click' },
  type: { argument: BrowserTypeRequest, interaction: 'type' },
  fill: { argument: BrowserFillRequest, interaction: 'fill' },
  scroll: { argument: BrowserScrollRequest, interaction: 'scroll' },
  wait: { argument: BrowserWaitRequest, interaction: 'wait' },
  hover: { argument: BrowserTargetRequest, interaction: 'hover' },
  keypress: { argument: BrowserKeyPressRequest, interaction: 'keypress' },
  screenshot: { argument: BrowserScreenshotRequest, interaction: 'screenshot' },
  extract: { argument: BrowserExtractRequest, interaction: 'extract' },
  content: { argument: BrowserContentRequest, interaction: 'content' },
  fillCredential: { argument: BrowserFillCredentialRequest, interaction: 'fill-credential' },
} as const satisfies Record<string, { argument: TSchema; interaction: BrowserInteractionName | null }>;

export type BrowserCallMethod = keyof typeof BROWSER_CALLS;
export const BROWSER_CALL_METHODS = Object.keys(BROWSER_CALLS) as BrowserCallMethod[];

/**
 * A union checked against the one member its tag names (OpenAPI's discriminator, which the validator honours):
 * an unknown tag is refused at the tag, and the member's defaults are filled in as for a plain object.
 */
function tagged<const T extends TSchema[]>(propertyName: string, members: [...T]) {
  return Type.Unsafe<{ [K in keyof T]: Static<T[K]> }[number]>({ type: 'object', oneOf: members, discriminator: { propertyName } });
}

const browserCall = <M extends BrowserCallMethod>(method: M) =>
  Type.Object({ method: Type.Literal(method), argument: BROWSER_CALLS[method].argument as (typeof BROWSER_CALLS)[M]['argument'] });

export const VmStartCommand = Type.Object({
  op: Type.Literal('vm.start'),
  principal: SignedPrincipal,
  session_id: Type.String({ minLength: 1, maxLength: 100 }),
  spec: VmStartSpec,
});

export const VmResumeCommand = Type.Object({
  op: Type.Literal('vm.resume'),
  principal: SignedPrincipal,
  vm_id: Type.String({ minLength: 1, maxLength: 64 }),
  /** A request that needed the VM resumes it (not `POST /resume`): its `vm.resumed` event says so. */
  auto: Type.Optional(Type.Boolean()),
});

export const EgressPolicyCommand = Type.Object({
  op: Type.Literal('egress.policy'),
  principal: SignedPrincipal,
  vm_id: Type.String({ minLength: 1, maxLength: 64 }),
  /** null reads the policy. */
  policy: Type.Union([InternalEgressPolicy, Type.Null()]),
});

const BROWSER_CALL_MEMBERS = [
  browserCall('closeSession'),
  browserCall('navigate'),
  browserCall('click'),
  browserCall('type'),
  browserCall('fill'),
  browserCall('scroll'),
  browserCall('wait'),
  browserCall('hover'),
  browserCall('keypress'),
  browserCall('screenshot'),
  browserCall('extract'),
  browserCall('content'),
  browserCall('fillCredential'),
] as const;
// Listed one by one so each member keeps its own type; the table above is the list of calls.
if (BROWSER_CALL_MEMBERS.map((member) => member.properties.method.const).join() !== BROWSER_CALL_METHODS.join())
  throw new Error('the browser call members and BROWSER_CALLS disagree');

export const BrowserCallCommand = Type.Object({
  op: Type.Literal('browser.call'),
  principal: SignedPrincipal,
  call: tagged('method', [...BROWSER_CALL_MEMBERS]),
});

/** The body of every internal command: exactly one of the ops, its fields checked against that op's schema. */
export const InternalCommand = tagged('op', [VmStartCommand, VmResumeCommand, EgressPolicyCommand, BrowserCallCommand]);
export type InternalCommand = Static<typeof InternalCommand>;
export type InternalCommandOp = InternalCommand['op'];
export type InternalCommandOf<Op extends InternalCommandOp> = Extract<InternalCommand, { op: Op }>;
export type BrowserCall = Static<typeof BrowserCallCommand>['call'];
