"""Types of the sandboxd REST API, generated from the OpenAPI document the server serves: its answers as
classes over ``Model`` (``answer.field`` and ``answer["field"]``), its request bodies as TypedDicts.

Do not edit: run ``python3 clients/python/scripts/generate_types.py <server>/openapi.json`` after changing a
route (a test regenerates this module from the live server's document and fails while it differs).
Document: sandboxd 0.1.0 (OpenAPI 3.1.0).
"""
# fmt: off
from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional, Tuple, TypedDict, Union

from ._model import Model

class ErrorResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"code", "detail"})
    # What went wrong and what to change
    detail: str
    # Stable error code, listed in docs/errors.md
    code: str


class ValidationError(Model):
    __slots__ = ()
    _required_keys = frozenset({"loc", "msg", "type"})
    loc: List[Union[str, int]]
    msg: str
    type: str


class HTTPValidationError(Model):
    __slots__ = ()
    _required_keys = frozenset({"detail"})
    detail: List[ValidationError]


class ApiKeyRecord(Model):
    __slots__ = ()
    _required_keys = frozenset({"created_at", "description", "expires_at", "id", "key_prefix", "status", "user_id"})
    id: int
    # The first characters of the key, to recognise it
    key_prefix: str
    user_id: int
    status: Optional[Literal["active", "expired"]]
    created_at: Optional[str]
    expires_at: Optional[str]
    description: Optional[str]
    last_used_at: Optional[str]
    # The complete key: only in the response of POST /v1/api-keys/, never again
    full_key: Optional[str]


class ApiKeyBody(TypedDict, total=False):
    # When the key stops working; null = never
    expires_at: Optional[str]
    description: Optional[str]


class ApiKeyCreateBody(TypedDict, total=False):
    # When the key stops working; null = never
    expires_at: Optional[str]
    description: Optional[str]
    # `sandboxd` (default): `sbx_sk_` + 43 base64url characters. `e2b`: `e2b_` + 40 hex digits, the shape
    # E2B's tools expect (docs/e2b.md); either format works with both the native and the E2B-compatible
    # API
    format: Literal["sandboxd", "e2b"]


class WebhookEndpoint(Model):
    __slots__ = ()
    _required_keys = frozenset({"created_at", "description", "enabled", "event_patterns", "id", "updated_at", "url", "user_id", "verified_at"})
    # we_…
    id: str
    user_id: int
    url: str
    description: Optional[str]
    event_patterns: List[str]
    enabled: bool
    # When POST …/verify last got a 2xx answer
    verified_at: Optional[str]
    created_at: str
    updated_at: str
    # The signing secret (whsec_…, Standard Webhooks): only in the response of the create operation; see
    # rotate-secret
    secret: Optional[str]


class WebhookDelivery(Model):
    __slots__ = ()
    _required_keys = frozenset({"created_at", "delivered_at", "endpoint_id", "error_message", "event_group", "event_id", "event_type", "final_http_status", "id", "last_attempt_at", "next_retry_at", "replay_of_delivery_id", "scheduled_attempt", "status", "updated_at", "user_id"})
    # wd_…
    id: str
    endpoint_id: str
    user_id: int
    # The event id: also the webhook-id header, the same on every retry and replay
    event_id: Optional[str]
    event_type: str
    # The event family: the part of event_type before the first dot
    event_group: Optional[str]
    status: Literal["pending", "delivering", "succeeded", "failed"]
    # The attempt due next while pending; the last attempt made once succeeded or failed
    scheduled_attempt: int
    # When the scheduled attempt is due; null once final
    next_retry_at: Optional[str]
    last_attempt_at: Optional[str]
    delivered_at: Optional[str]
    # The receiver's status in the last attempt; null when it did not answer
    final_http_status: Optional[int]
    error_message: Optional[str]
    # Set when the delivery replays another delivery
    replay_of_delivery_id: Optional[str]
    created_at: str
    updated_at: str


class WebhookDeliveryList(Model):
    __slots__ = ()
    _required_keys = frozenset({"items"})
    items: List[WebhookDelivery]
    # Pass as cursor for the next (older) page; null on the last page
    next_cursor: Optional[str]


class WebhookSecretRotation(Model):
    __slots__ = ()
    _required_keys = frozenset({"endpoint_id", "secret"})
    endpoint_id: str
    # The new signing secret (whsec_…); the old one keeps signing for the grace period
    secret: str


class AuditEvent(Model):
    __slots__ = ()
    _required_keys = frozenset({"action", "api_key_id", "created_at", "detail", "id", "outcome", "source_ip", "target_id", "target_type", "user_agent", "user_id", "username", "via"})
    id: int
    created_at: str
    # e.g. auth.sign_in, api_key.create, api_key.delete, webhook_endpoint.create,
    # webhook_endpoint.rotate_secret
    action: str
    # The status filter
    outcome: Literal["success", "failure"]
    # The acting user; null for a failed sign-in with an unknown username
    user_id: Optional[int]
    # The acting user's name, or the username a sign-in attempted
    username: Optional[str]
    # system: the server or the admin command
    via: Literal["password", "api_key", "access_token", "ssh_key", "session_token", "system"]
    # The key used, when via is api_key
    api_key_id: Optional[int]
    target_type: Optional[str]
    target_id: Optional[str]
    source_ip: Optional[str]
    user_agent: Optional[str]
    detail: Optional[Dict[str, Any]]


class AuditEventList(Model):
    __slots__ = ()
    _required_keys = frozenset({"items", "next_cursor"})
    items: List[AuditEvent]
    # Pass as cursor for the next (older) page; null on the last page
    next_cursor: Optional[str]


class LifecycleHooksPreStop(Model):
    """Run in the VM before it is stopped on purpose: killed (DELETE /v1/vms/{vm_id}, POST /kill, a session
    kill), paused, or at the end of its lifetime. It runs like a bash execute and is kept as an
    execution record with `trigger: "pre_stop"` (GET /v1/executions); the stop waits for it up to
    `timeout_seconds`, and a `vm.pre_stop_hook` event says how it ended. It does not run when the VM is
    already gone (it crashed, its agent or its node was lost) nor when the server shuts down.
    """
    __slots__ = ()
    _required_keys = frozenset({"command", "timeout_seconds"})
    # A bash command (`bash -c`, in /root, with the session's env), e.g. `pg_dump app > /data/app.sql`
    command: str
    # How long it may run, 1 to 120 seconds (default 30); then it is killed and the stop goes on
    timeout_seconds: int


class LifecycleHooks(Model):
    """Commands the VM runs at points of its life"""
    __slots__ = ()
    # Run in the VM before it is stopped on purpose: killed (DELETE /v1/vms/{vm_id}, POST /kill, a session
    # kill), paused, or at the end of its lifetime. It runs like a bash execute and is kept as an
    # execution record with `trigger: "pre_stop"` (GET /v1/executions); the stop waits for it up to
    # `timeout_seconds`, and a `vm.pre_stop_hook` event says how it ended. It does not run when the VM is
    # already gone (it crashed, its agent or its node was lost) nor when the server shuts down.
    pre_stop: Optional[LifecycleHooksPreStop]


class LifecycleHooksParamsPreStop(TypedDict):
    """Run in the VM before it is stopped on purpose: killed (DELETE /v1/vms/{vm_id}, POST /kill, a session
    kill), paused, or at the end of its lifetime. It runs like a bash execute and is kept as an
    execution record with `trigger: "pre_stop"` (GET /v1/executions); the stop waits for it up to
    `timeout_seconds`, and a `vm.pre_stop_hook` event says how it ended. It does not run when the VM is
    already gone (it crashed, its agent or its node was lost) nor when the server shuts down.
    """
    # A bash command (`bash -c`, in /root, with the session's env), e.g. `pg_dump app > /data/app.sql`
    command: str
    # How long it may run, 1 to 120 seconds (default 30); then it is killed and the stop goes on
    timeout_seconds: int


class LifecycleHooksParams(TypedDict, total=False):
    """Commands the VM runs at points of its life"""
    # Run in the VM before it is stopped on purpose: killed (DELETE /v1/vms/{vm_id}, POST /kill, a session
    # kill), paused, or at the end of its lifetime. It runs like a bash execute and is kept as an
    # execution record with `trigger: "pre_stop"` (GET /v1/executions); the stop waits for it up to
    # `timeout_seconds`, and a `vm.pre_stop_hook` event says how it ended. It does not run when the VM is
    # already gone (it crashed, its agent or its node was lost) nor when the server shuts down.
    pre_stop: LifecycleHooksParamsPreStop


class SessionCreateRequest(TypedDict, total=False):
    # The API key, for clients that send it in the body
    api_key: str
    # Seconds from spawn until the VM is killed; 20 to 2592000, default
    # SANDBOXD_DEFAULT_VM_LIFETIME_SECONDS (300)
    vm_lifetime_seconds: int
    # Guest memory in MiB, 128 to 8192; default SANDBOXD_DEFAULT_MEMORY_MB (512)
    memory_mb: int
    # vCPUs: 1, 2, 4, 6 or 8, default SANDBOXD_DEFAULT_VCPUS (2) (selects the snapshot variant
    # snap1…snap8)
    vcpu_count: Literal[1, 2, 4, 6, 8]
    # User-defined key/value pairs, for filtering sandboxes
    metadata: Dict[str, str]
    # Environment of every execution of the session
    env: Dict[str, str]
    # Acquire a standard VM at once, in the background (default false)
    prewarm: bool
    # Start VMs from your snapshot (or template) of this name; a snapshot fixes vCPUs and memory
    snapshot: str
    # Start VMs from the template (or snapshot) of this name; "default" is the built-in image
    template: str
    # Desktop sessions (`"template": "desktop"`) only: screen width in pixels, default 1280
    screen_width: int
    # Desktop sessions only: screen height in pixels, default 800
    screen_height: int
    lifecycle_hooks: LifecycleHooksParams
    egress_policy: EgressPolicyInput
    # Your vaults whose secrets the VMs may use without holding them: each secret becomes an environment
    # variable holding a placeholder, swapped for the value only at the secret's injection point of HTTPS
    # requests to its allowed_hosts (see POST /v1/vaults)
    vault_ids: List[str]
    # Private networks (your networks' names or ids) the VM joins at start, as do the session's next VMs
    # (see POST /v1/networks). Members reach each other over TCP at their addresses and at `<vm
    # name>.<network>.internal`; at most 253 per network
    networks: List[str]
    # Pause the VM after this many seconds of idleness (no execution running or started, no terminal
    # attached or typed into, no preview traffic, no file, process, SSH, browser or desktop call); null or
    # absent: never. A paused VM keeps its memory, processes and disk, stops counting its lifetime and its
    # quota, and is resumed by the next request that needs it (the answer then carries a
    # `Sandboxd-Resumed: <ms>` header). Paused VMs are kept for your plan's retention (free 7 days, pro
    # 30, enterprise 90), then deleted (`vm.pause_expired`).
    auto_pause: Optional[int]
    # `kill` (default): the VM is killed when its lifetime ends; `pause`: it is paused instead (with its
    # whole lifetime again for when it resumes), and kept for your plan's retention
    on_expiry: Literal["kill", "pause"]


class SessionCreateResponseSource(Model):
    """What VMs start from: a template (`default` is the built-in image) or a snapshot"""
    __slots__ = ()
    _required_keys = frozenset({"id", "kind", "name"})
    kind: Literal["template", "snapshot"]
    id: str
    name: str


class SessionCreateResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"auto_pause", "created_at", "lifecycle_hooks", "memory_mb", "metadata", "on_expiry", "prewarm", "session_id", "source", "status", "vcpu_count", "vm_id", "vm_lifetime_seconds"})
    session_id: str
    # "created" (no VM yet), "starting" (prewarm under way) or "active"
    status: Literal["created", "starting", "active"]
    created_at: str
    vm_id: Optional[str]
    vm_lifetime_seconds: int
    memory_mb: int
    vcpu_count: int
    metadata: Dict[str, str]
    prewarm: bool
    # What VMs start from: a template (`default` is the built-in image) or a snapshot
    source: SessionCreateResponseSource
    # Its lifecycle hooks (null: none)
    lifecycle_hooks: Optional[LifecycleHooks]
    # Seconds of idleness after which its VMs are paused (null: never)
    auto_pause: Optional[int]
    # `kill` (default): the VM is killed when its lifetime ends; `pause`: it is paused instead (with its
    # whole lifetime again for when it resumes), and kept for your plan's retention
    on_expiry: Literal["kill", "pause"]


class SessionStatus(Model):
    __slots__ = ()
    _required_keys = frozenset({"created_at", "exists", "expires_in_seconds", "session_id", "uptime_seconds", "vm_alive", "vm_assigned", "vm_id", "vm_status"})
    session_id: str
    exists: bool
    vm_assigned: bool
    vm_alive: bool
    vm_status: Optional[Literal["starting", "active", "paused", "killed"]]
    vm_id: Optional[str]
    uptime_seconds: Optional[float]
    expires_in_seconds: Optional[float]
    created_at: str


class SandboxInfo(Model):
    __slots__ = ()
    _required_keys = frozenset({"end_at", "memory_mb", "metadata", "name", "sandbox_id", "session_id", "started_at", "status", "template_id", "vcpu_count"})
    sandbox_id: str
    template_id: str
    name: str
    metadata: Dict[str, str]
    started_at: str
    end_at: Optional[str]
    status: Literal["starting", "active", "paused", "killed"]
    session_id: Optional[str]
    vcpu_count: int
    memory_mb: int


class VmRecord(Model):
    __slots__ = ()
    _required_keys = frozenset({"auto_pause", "base_snapshot_id", "created_at", "end_detail", "end_reason", "ended_at", "expires_at", "expires_in_seconds", "last_activity_at", "lifecycle_hooks", "memory_mb", "metadata", "name", "node_id", "on_expiry", "paused_at", "session_id", "started_at", "status", "template_id", "vcpu_count", "vm_id", "vm_ip", "vm_lifetime_seconds"})
    vm_id: str
    session_id: Optional[str]
    # A killed VM ended for the reason in end_reason
    status: Literal["starting", "active", "paused", "killed"]
    end_reason: Optional[Literal["user_kill", "lifetime", "node_lost", "server_stop", "error"]]
    end_detail: Optional[Literal["killed", "expired", "crashed", "failed", "server_restart", "server_shutdown", "agent_lost", "node_lost"]]
    vcpu_count: int
    memory_mb: int
    vm_lifetime_seconds: int
    template_id: str
    node_id: str
    vm_ip: Optional[str]
    created_at: str
    started_at: Optional[str]
    expires_at: str
    ended_at: Optional[str]
    # Seconds until it is killed; 0 once ended; while paused, the lifetime it has left (it stops counting)
    expires_in_seconds: float
    name: Optional[str]
    metadata: Dict[str, str]
    # The snapshot its disk builds on (it was cloned from it or snapshotted into it): kept while the VM
    # lives
    base_snapshot_id: Optional[str]
    paused_at: Optional[str]
    # Its lifecycle hooks (null: none)
    lifecycle_hooks: Optional[LifecycleHooks]
    # Seconds of idleness after which it is paused (null: never); its own, or its session's when it
    # started
    auto_pause: Optional[int]
    # `kill` (default): the VM is killed when its lifetime ends; `pause`: it is paused instead (with its
    # whole lifetime again for when it resumes), and kept for your plan's retention
    on_expiry: Literal["kill", "pause"]
    # Its last use as recorded in the store (written every few seconds at most; null: none recorded yet)
    last_activity_at: Optional[str]


class SessionUsageVm(Model):
    """The live VM's own figures while it runs"""
    __slots__ = ()
    _required_keys = frozenset({"cpu_seconds", "load_average", "memory_total_mb", "memory_used_mb", "uptime_seconds"})
    # Guest CPU seconds since boot
    cpu_seconds: float
    memory_total_mb: int
    memory_used_mb: int
    uptime_seconds: float
    # 1, 5 and 15 minutes
    load_average: List[float]


class SessionUsage(Model):
    __slots__ = ()
    _required_keys = frozenset({"cpu_seconds", "execution_seconds", "executions", "memory_mb", "session_id", "vcpu_count", "vm"})
    session_id: str
    # Executions of the session so far
    executions: int
    # CPU seconds of its executions
    cpu_seconds: float
    # Wall-clock seconds of its executions
    execution_seconds: float
    vcpu_count: int
    memory_mb: int
    vm: Optional[SessionUsageVm]
    # Only with credentials
    vm_id: Optional[str]
    # Only with credentials
    vm_status: Optional[str]


class EgressPolicyInput(TypedDict, total=False):
    # Open the Debian, PyPI and npm registries (deb.debian.org, security.debian.org, pypi.org,
    # files.pythonhosted.org, registry.npmjs.org, …) over HTTP and HTTPS
    allow_package_managers: bool
    # Port 80 at all (to allowed names and CIDRs); false refuses every port-80 connection
    allow_http: bool
    # Port 443 at all (to allowed names and CIDRs); false also closes UDP/443 (QUIC) unless allowed_ports
    # names 443/udp
    allow_https: bool
    # Names the guest may resolve and reach over HTTP and HTTPS, through the proxy (matched on its DNS
    # question, the TLS SNI and every HTTP request's Host): `example.com`, `*.example.com` (its
    # subdomains) or `*` (every name). Other ports and protocols to their addresses only as allowed_ports
    # names them: the addresses may be shared (CDNs) with any other name
    allowed_domains: List[str]
    # IPv4 addresses or CIDRs the guest may reach on any port and protocol (explicit address grants), and
    # by raw address over HTTP (`0.0.0.0/0`: every public address)
    allowed_cidrs: List[str]
    # Ports besides HTTP and HTTPS that the addresses of allowed names (as the VM's own DNS answers gave
    # them) are open on, `<port>/tcp` or `<port>/udp`: e.g. `22/tcp`, `5432/tcp`, `443/udp` (QUIC). Not
    # 80/tcp, 443/tcp (the proxy) or 53 (the policy resolver). Without it an allowed name gives HTTP and
    # HTTPS only
    allowed_ports: List[str]


class EgressPolicy(Model):
    __slots__ = ()
    _required_keys = frozenset({"allow_http", "allow_https", "allow_package_managers", "allowed_cidrs", "allowed_domains", "allowed_ports", "enforced", "source"})
    allow_package_managers: bool
    allow_http: bool
    allow_https: bool
    allowed_domains: List[str]
    allowed_cidrs: List[str]
    # Canonical `<port>/<tcp|udp>`, tcp first, ascending
    allowed_ports: List[str]
    # Whose policy it is: the VM's own, its session's, or the deployment's default
    source: Literal["vm", "session", "default"]
    # The host enforces it on the running VM now (false for an open policy, or a VM that is not running)
    enforced: bool
    # A session's PUT: the running VMs that follow the new policy
    updated_vm_ids: Optional[List[str]]


class EgressLogEntry(Model):
    __slots__ = ()
    _required_keys = frozenset({"address", "at", "bytes_received", "bytes_sent", "id", "name", "port", "protocol", "reason", "scheme", "verdict", "vm_id"})
    id: int
    at: str
    vm_id: str
    # `dns`: a name lookup the policy refused
    protocol: Literal["tcp", "udp", "icmp", "dns", "other"]
    # Set when the proxy handled the connection (ports 80 and 443)
    scheme: Optional[Literal["http", "https"]]
    # The name asked for (DNS question, SNI, Host), or the one whose DNS answer gave the address
    name: Optional[str]
    address: Optional[str]
    port: Optional[int]
    # Guest to destination (proxied connections only)
    bytes_sent: Optional[int]
    bytes_received: Optional[int]
    verdict: Literal["allowed", "refused"]
    # Why it was refused
    reason: Optional[str]


class EgressLogList(Model):
    __slots__ = ()
    _required_keys = frozenset({"items", "next_cursor"})
    items: List[EgressLogEntry]
    # Pass as cursor for the next (older) page; null on the last page
    next_cursor: Optional[str]


class VaultSecretInjection(Model):
    """Where in a request the placeholder is swapped for the value, and nowhere else (not the path, the
    query or another header, which a server may echo back). `{"type":"bearer"}` (the default):
    `Authorization: Bearer <placeholder>`. `{"type":"basic"}`: `Authorization: Basic
    base64(user:password)` with the placeholder as the user or the password.
    `{"type":"header","name":"X-Api-Key","prefix":""}`: that header, sent once, whose value is exactly
    prefix + placeholder (GitHub's `Authorization: token …` is name `Authorization`, prefix `token `).
    Prefixes and schemes compare case-insensitively. A placeholder found anywhere else goes out
    unchanged and is flagged in the request log
    """
    __slots__ = ()
    _required_keys = frozenset({"type"})
    type: Literal["bearer", "basic", "header"]
    # The header (type `header` only)
    name: Optional[str]
    # What comes before the placeholder in the header value (type `header` only; default "")
    prefix: Optional[str]


class _VaultSecretInjectionParamsRequired(TypedDict):
    type: Literal["bearer", "basic", "header"]


class VaultSecretInjectionParams(_VaultSecretInjectionParamsRequired, total=False):
    """Where in a request the placeholder is swapped for the value, and nowhere else (not the path, the
    query or another header, which a server may echo back). `{"type":"bearer"}` (the default):
    `Authorization: Bearer <placeholder>`. `{"type":"basic"}`: `Authorization: Basic
    base64(user:password)` with the placeholder as the user or the password.
    `{"type":"header","name":"X-Api-Key","prefix":""}`: that header, sent once, whose value is exactly
    prefix + placeholder (GitHub's `Authorization: token …` is name `Authorization`, prefix `token `).
    Prefixes and schemes compare case-insensitively. A placeholder found anywhere else goes out
    unchanged and is flagged in the request log
    """
    # The header (type `header` only)
    name: str
    # What comes before the placeholder in the header value (type `header` only; default "")
    prefix: str


class VaultSecret(Model):
    """A secret of a vault: its name and hosts, never its value"""
    __slots__ = ()
    _required_keys = frozenset({"allowed_hosts", "created_at", "inject", "name", "updated_at"})
    name: str
    allowed_hosts: List[str]
    inject: VaultSecretInjection
    created_at: str
    # Last change of the value, the hosts or the injection point
    updated_at: str


class Vault(Model):
    __slots__ = ()
    _required_keys = frozenset({"created_at", "description", "id", "name", "secrets", "updated_at", "user_id"})
    # `vlt_…`
    id: str
    user_id: int
    name: str
    description: Optional[str]
    secrets: List[VaultSecret]
    created_at: str
    updated_at: str


class _VaultSecretInputRequired(TypedDict):
    # The environment variable VMs see its placeholder in, e.g. OPENAI_API_KEY
    name: str
    # The secret; stored encrypted and never returned
    value: str
    # Hosts the value may be sent to over HTTPS: `api.example.com` or `*.example.com` (its subdomains)
    allowed_hosts: List[str]


class VaultSecretInput(_VaultSecretInputRequired, total=False):
    inject: VaultSecretInjectionParams


class VaultCreate(Model):
    __slots__ = ()
    _required_keys = frozenset({"name"})
    # Unique among your vaults
    name: str
    description: Optional[str]
    secrets: Optional[List[VaultSecretInput]]


class VaultUpdate(Model):
    __slots__ = ()
    name: Optional[str]
    description: Optional[str]


class VaultSecretSet(Model):
    __slots__ = ()
    _required_keys = frozenset({"allowed_hosts", "value"})
    # The new value; stored encrypted and never returned
    value: str
    # Hosts the value may be sent to over HTTPS: `api.example.com` or `*.example.com` (its subdomains)
    allowed_hosts: List[str]
    inject: Optional[VaultSecretInjection]


class VaultRequestLogEntry(Model):
    __slots__ = ()
    _required_keys = frozenset({"at", "detail", "host", "id", "method", "outcome", "path", "scheme", "secret_name", "session_id", "status", "vault_id", "vm_id"})
    id: int
    at: str
    vault_id: str
    secret_name: str
    session_id: str
    vm_id: str
    # `substituted`: the value replaced the placeholder in a request to a bound host; `flagged`: the
    # placeholder went out unchanged somewhere the secret is not bound to
    outcome: Literal["substituted", "flagged"]
    scheme: Literal["http", "https"]
    # The name the VM sent the request to (SNI or Host), or its address
    host: str
    method: Optional[str]
    # The request path as the VM sent it, without its query
    path: Optional[str]
    # The upstream's HTTP status (null: no answer, or a plain HTTP connection)
    status: Optional[int]
    detail: Optional[str]


class VaultRequestLogList(Model):
    __slots__ = ()
    _required_keys = frozenset({"items", "next_cursor"})
    items: List[VaultRequestLogEntry]
    # Pass as `cursor` for older entries; null on the last page
    next_cursor: Optional[str]


class SnapshotRecord(Model):
    __slots__ = ()
    _required_keys = frozenset({"created_at", "disk_bytes", "disk_size_mb", "duration_ms", "memory_bytes", "memory_mb", "metadata", "name", "node_id", "parent_id", "pause_ms", "size_bytes", "snapshot_id", "source_vm_id", "state_bytes", "status", "template_id", "user_id", "vcpu_count"})
    snapshot_id: str
    name: str
    # "creating" while the VM is being captured, then "ready"
    status: Literal["creating", "ready"]
    # The owner
    user_id: int
    # The VM it was taken of
    source_vm_id: Optional[str]
    # The snapshot its disk layer builds on (null: its template)
    parent_id: Optional[str]
    # The template the chain starts from (`default` is the built-in image)
    template_id: str
    # The node that holds its files
    node_id: str
    # A VM started from it has these vCPUs
    vcpu_count: int
    # and this memory
    memory_mb: int
    # Size of its root disk as the guest sees it
    disk_size_mb: int
    # Bytes its memory file takes on disk (what the VM held in RAM)
    memory_bytes: int
    # Bytes its disk layer takes: only what the VM wrote since its parent
    disk_bytes: int
    # Bytes of device state
    state_bytes: int
    # All of the above together
    size_bytes: int
    # How long the VM was stopped while it was taken
    pause_ms: int
    # How long taking it took
    duration_ms: int
    metadata: Dict[str, str]
    created_at: str


class VolumeRecordAttachmentsItem(Model):
    __slots__ = ()
    _required_keys = frozenset({"mount_path", "read_only", "vm_id"})
    vm_id: str
    mount_path: str
    read_only: bool


class VolumeRecord(Model):
    __slots__ = ()
    _required_keys = frozenset({"attachments", "created_at", "in_object_store", "name", "node_id", "size_mb", "user_id", "volume_id"})
    volume_id: str
    name: str
    size_mb: int
    # The owner
    user_id: int
    # The node whose disk holds its latest data. Without the cluster's object store (SANDBOXD_ARTIFACTS
    # off) VMs that mount it run there; with it, any node mounts it once `in_object_store` (it is fetched
    # first)
    node_id: str
    # Whether the object store has its latest data too: its last writer ended or paused and its image was
    # uploaded (false while a VM writes it)
    in_object_store: bool
    created_at: str
    # The VMs that have it mounted and have not ended
    attachments: List[VolumeRecordAttachmentsItem]


class NetworkMemberRecord(Model):
    __slots__ = ()
    _required_keys = frozenset({"address", "hostnames", "joined_at", "status", "vm_id", "vm_name"})
    vm_id: str
    # The VM's name (null: none)
    vm_name: Optional[str]
    # The VM's address on the network (kept while it is paused)
    address: str
    # Its names on the network, in the members' /etc/hosts: `<vm name>.<network>.internal` (the name
    # lower-cased, other characters as "-") and `<vm id>.<network>.internal`
    hostnames: List[str]
    # The VM's status (`starting`, `active` or `paused`)
    status: str
    joined_at: str


class NetworkRecord(Model):
    __slots__ = ()
    _required_keys = frozenset({"cidr", "created_at", "members", "name", "network_id", "user_id"})
    network_id: str
    name: str
    # The network's addresses (`10.250.<n>.0/24`); members get .2 onwards
    cidr: str
    # The owner
    user_id: int
    created_at: str
    # The VMs on it that have not ended
    members: List[NetworkMemberRecord]


class TemplateCreateRequestBuildArgs(TypedDict, total=False):
    # A repository (http, https or git URL, no credentials) cloned into `/workspace/<repository name>`;
    # the image needs git
    git_clone_url: str
    # The branch to clone (default: the remote's default branch)
    git_clone_branch: str
    # The environment of `post_build_cmd` (values are never stored or shown)
    envs: Dict[str, str]
    # A shell command run in the build VM (bash -lc, else sh -lc) in the clone (else /root); a non-zero
    # exit fails the build
    post_build_cmd: str


class TemplateCreateRequestRegistryAuth(TypedDict):
    """Credentials for the pull only: never stored, logged or shown"""
    username: str
    password: str


class _TemplateCreateRequestRequired(TypedDict):
    # Letters, digits, ".", "_" and "-", at most 63, starting with a letter or digit
    name: str
    # An OCI image reference `[registry/]repository[:tag][@digest]`, e.g.
    # `registry.example.com/team/python:3.12` (no scheme); linux/amd64 is pulled
    oci_image: str


class TemplateCreateRequest(_TemplateCreateRequestRequired, total=False):
    build_args: TemplateCreateRequestBuildArgs
    # Credentials for the pull only: never stored, logged or shown
    registry_auth: TemplateCreateRequestRegistryAuth
    # vCPUs: 1, 2, 4, 6 or 8 (selects the snapshot variant snap1…snap8)
    vcpu_count: Literal[1, 2, 4, 6, 8]
    # Memory of the build VM, MiB (default: the server's default VM memory)
    memory_mb: int


class TemplateRecordBuildArgs(Model):
    __slots__ = ()
    _required_keys = frozenset({"env_names", "git_clone_branch", "git_clone_url", "post_build_cmd"})
    git_clone_url: Optional[str]
    git_clone_branch: Optional[str]
    # The names of `envs` (their values are not kept)
    env_names: List[str]
    post_build_cmd: Optional[str]


class TemplateRecordProgress(Model):
    """How far the build got"""
    __slots__ = ()
    _required_keys = frozenset({"step", "step_count", "step_index"})
    # The step under way (building), the one it failed in (failed), null when ready
    step: Optional[Literal["resolve", "pull", "unpack", "runtime", "mkfs", "boot", "git_clone", "post_build_cmd", "snapshot"]]
    # 1-based position of `step` among the steps; all of them once ready
    step_index: int
    # How many steps a build has (resolve, pull, unpack, runtime, mkfs, boot, git_clone, post_build_cmd,
    # snapshot; git_clone and post_build_cmd are passed over when not asked for)
    step_count: int


class TemplateRecord(Model):
    __slots__ = ()
    _required_keys = frozenset({"build_args", "builtin", "created_at", "disk_size_mb", "error", "image_digest", "memory_mb", "name", "node_id", "oci_image", "progress", "ready_at", "status", "template_id", "updated_at", "vcpu_count"})
    # `tpl_…`, or `default` for the built-in image
    template_id: str
    name: str
    # "building" until the build ends "ready" (VMs can start from it) or "failed" (see `error`)
    status: Literal["building", "ready", "failed"]
    # The built-in image (listed, never deleted)
    builtin: bool
    # The image reference it was built from, normalised
    oci_image: Optional[str]
    # The manifest digest that was pulled
    image_digest: Optional[str]
    build_args: Optional[TemplateRecordBuildArgs]
    # The build VM's vCPUs: its snapshot of this shape is made at the end (other shapes on first use)
    vcpu_count: Optional[int]
    memory_mb: Optional[int]
    # Size of its root disk, once ready
    disk_size_mb: Optional[int]
    # The node that holds its files
    node_id: Optional[str]
    # How far the build got
    progress: TemplateRecordProgress
    # Why the build failed: the step, what happened and the last lines that step printed
    error: Optional[str]
    created_at: Optional[str]
    updated_at: Optional[str]
    ready_at: Optional[str]


class TemplateLogResponseProgress(Model):
    """How far the build got"""
    __slots__ = ()
    _required_keys = frozenset({"step", "step_count", "step_index"})
    # The step under way (building), the one it failed in (failed), null when ready
    step: Optional[Literal["resolve", "pull", "unpack", "runtime", "mkfs", "boot", "git_clone", "post_build_cmd", "snapshot"]]
    # 1-based position of `step` among the steps; all of them once ready
    step_index: int
    # How many steps a build has (resolve, pull, unpack, runtime, mkfs, boot, git_clone, post_build_cmd,
    # snapshot; git_clone and post_build_cmd are passed over when not asked for)
    step_count: int


class TemplateLogResponseLinesItem(Model):
    __slots__ = ()
    _required_keys = frozenset({"created_at", "id", "line"})
    # Pass the last one as `after` to read on
    id: int
    line: str
    created_at: str


class TemplateLogResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"error", "lines", "next_after", "progress", "status", "template_id"})
    template_id: str
    status: Literal["building", "ready", "failed"]
    # How far the build got
    progress: TemplateLogResponseProgress
    error: Optional[str]
    lines: List[TemplateLogResponseLinesItem]
    # The `after` of the next page (the last line's id, or the request's `after` when there was none)
    next_after: int


class _ExecuteCommandRequestRequired(TypedDict):
    # python runs in the session's stateful interpreter (variables survive between calls); bash and node
    # run a fresh process
    language: Literal["python", "bash", "node"]
    # How long the HTTP call waits, seconds (not the VM lifetime); the command goes on after a 408
    timeout: int


class ExecuteCommandRequest(_ExecuteCommandRequestRequired, total=False):
    # A command (bash) or code; `code` is the same field for code
    command: str
    code: str
    # Omit to run in a new session (its id is in the answer)
    session_id: Optional[str]
    # Python only: run in this context of the session (POST /v1/sessions/{session_id}/contexts), an
    # interpreter with variables of its own; omit (or `default`) for the session's own interpreter
    context_id: Optional[str]
    api_key: str


class RichResult(Model):
    """One rich result of a Python run, as a notebook shows it: each format the value shows itself in
    (IPython's `_repr_*_` methods, which pandas, matplotlib and PIL implement). A run's results come in
    the order they were made: what `display()` was given, then each matplotlib figure the code left open
    (drawn as PNG, then closed: `plt.show()` is not needed), then the last expression's value. At most 8
    MiB of results per run are kept; a result past that is replaced by a text note.
    """
    __slots__ = ()
    _required_keys = frozenset({"is_main_result"})
    # `repr()` of the value (always there)
    text: Optional[str]
    # HTML, e.g. a pandas DataFrame as a table
    html: Optional[str]
    markdown: Optional[str]
    svg: Optional[str]
    # A PNG image, base64 (a matplotlib figure)
    png: Optional[str]
    # A JPEG image, base64
    jpeg: Optional[str]
    # A PDF, base64
    pdf: Optional[str]
    latex: Optional[str]
    # JSON data (`_repr_json_`)
    json: Any
    javascript: Optional[str]
    # True for the value of the code's last expression; false for `display()` calls and figures
    is_main_result: bool


class PythonExceptionInfo(Model):
    """The exception a Python run ended with"""
    __slots__ = ()
    _required_keys = frozenset({"name", "traceback", "value"})
    # The exception class, e.g. `ZeroDivisionError`
    name: str
    # `str()` of the exception
    value: str
    # The traceback as Python prints it, without the interpreter's own frames
    traceback: str


class ExecuteResponseResumed(Model):
    """Present only when this execute resumed the session's paused VM first (auto-resume: paused by
    `auto_pause`, `on_expiry` or on request); the `Sandboxd-Resumed` header says the same
    """
    __slots__ = ()
    _required_keys = frozenset({"ms"})
    # How long the resume took, milliseconds
    ms: int


class ExecuteResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"context_id", "cpu_time", "exception", "execution_id", "execution_time", "exit_code", "results", "session_id", "status", "stderr", "stderr_truncated", "stdout", "stdout_truncated", "vm_id"})
    stdout: str
    stderr: str
    exit_code: Optional[int]
    # Seconds
    execution_time: Optional[float]
    # CPU seconds used by the code
    cpu_time: Optional[float]
    execution_id: int
    session_id: str
    vm_id: Optional[str]
    # completed, failed or timeout (queued and running only in task records)
    status: Literal["queued", "running", "completed", "failed", "timeout"]
    stdout_truncated: bool
    stderr_truncated: bool
    # Python only: rich results (figures, tables, display data); empty for commands
    results: List[RichResult]
    # Python only: the exception the run ended with, else null
    exception: Optional[PythonExceptionInfo]
    # Python only: the context it ran in (`default`: the session's own interpreter)
    context_id: str
    # Present only when this execute resumed the session's paused VM first (auto-resume: paused by
    # `auto_pause`, `on_expiry` or on request); the `Sandboxd-Resumed` header says the same
    resumed: Optional[ExecuteResponseResumed]


class TaskRecord(Model):
    __slots__ = ()
    _required_keys = frozenset({"code", "completed_at", "context_id", "cpu_time", "created_at", "error", "exception", "execution_time", "exit_code", "id", "is_complete", "language", "mode", "results", "serialized_stderr", "serialized_stdout", "session_id", "started_at", "status", "stderr_truncated", "stdout_truncated", "task_id", "trigger", "vm_id"})
    id: int
    # Same as id (the async answer calls it task_id)
    task_id: int
    session_id: str
    vm_id: Optional[str]
    mode: Literal["sync", "async"]
    # `request` (an execute call) or `pre_stop` (the VM's pre-stop lifecycle hook ran it before a kill,
    # pause or the end of its lifetime; `status` timeout means the hook was cut and the stop went on)
    trigger: Literal["request", "pre_stop"]
    language: Literal["python", "bash", "node"]
    # The code or command (first 64 KiB)
    code: str
    status: Literal["queued", "running", "completed", "failed", "timeout"]
    is_complete: bool
    exit_code: Optional[int]
    error: Optional[str]
    serialized_stdout: str
    serialized_stderr: str
    stdout_truncated: bool
    stderr_truncated: bool
    execution_time: Optional[float]
    cpu_time: Optional[float]
    created_at: str
    started_at: Optional[str]
    completed_at: Optional[str]
    # Python only: rich results (figures, tables, display data); empty for commands
    results: List[RichResult]
    # Python only: the exception the run ended with, else null
    exception: Optional[PythonExceptionInfo]
    # Python only: the context it ran in (`default`: the session's own interpreter)
    context_id: str


class FileEntry(Model):
    __slots__ = ()
    _required_keys = frozenset({"mode", "modified_at", "name", "path", "size", "symlink_target", "type"})
    name: str
    # Absolute path in the VM
    path: str
    type: Literal["file", "directory", "symlink", "other"]
    # Bytes
    size: int
    # Permission bits (0o644 = 420)
    mode: int
    modified_at: str
    symlink_target: Optional[str]


class FileListing(Model):
    __slots__ = ()
    _required_keys = frozenset({"entries", "path", "truncated"})
    # The directory, absolute
    path: str
    # Sorted by name; with depth > 1 each directory is followed by its contents (as `find` lists them).
    # Symlinks are not followed
    entries: List[FileEntry]
    # More entries were left out (`limit`)
    truncated: bool


class FileWatchEvent(Model):
    __slots__ = ()
    _required_keys = frozenset({"type"})
    # `start` first (the watch is in place: every later change is reported); then a change: `create` (also
    # the new name of a rename), `write`, `remove`, `rename` (the old name), `chmod`; `overflow` when the
    # guest dropped events (too many at once); `error` (a watch could not be added); `end` last when the
    # watched directory was removed or moved away, or the watch failed
    type: Literal["start", "create", "write", "remove", "rename", "chmod", "overflow", "error", "end"]
    # The path changed (absolute); for `start` and `end` the watched directory
    path: Optional[str]
    # The path is a directory
    is_dir: Optional[bool]
    # `start`: the tree under the directory is watched
    recursive: Optional[bool]
    # `error` and `end`: what happened
    message: Optional[str]


class ProcessStartRequest(TypedDict, total=False):
    # A command line, run by `/bin/bash -c`. Exactly one of command and argv
    command: str
    # A program and its arguments, run directly (no shell)
    argv: List[str]
    # Working directory (default: the user's home, /root for root); it must exist: a path in the VM
    # (absolute, or relative to /root) of at most 4095 bytes once resolved, each name at most 255 bytes,
    # without NUL bytes
    cwd: str
    # The account of the VM that runs it: `root` (the default, as executions run) or `user` (uid 1000,
    # home /home/user, no sudo), or one a template added. An unknown name is 400
    user: str
    # Environment on top of the session's env
    env: Dict[str, str]
    # Killed (its whole process group) after this long; default: runs until the VM's end (at most 24 h)
    timeout_seconds: int
    # Keep stdin open for POST …/stdin; otherwise the program reads /dev/null
    stdin: bool
    # A label of yours, shown in lists
    tag: str


class ProcessInfo(Model):
    __slots__ = ()
    _required_keys = frozenset({"argv", "command", "cwd", "ended_at", "error", "exit_code", "output_seq", "pid", "process_id", "session_id", "signal", "started_at", "status", "stdin", "tag", "timed_out", "user", "vm_id"})
    process_id: str
    session_id: str
    vm_id: str
    # The program's process id in the VM (its process group's too)
    pid: Optional[int]
    tag: Optional[str]
    command: Optional[str]
    argv: Optional[List[str]]
    cwd: str
    # The account it runs as
    user: str
    # Started with stdin open
    stdin: bool
    # `exited`: it ended (exit_code, or the signal that ended it); `failed`: its VM or agent went away
    # while it ran (error)
    status: Literal["running", "exited", "failed"]
    exit_code: Optional[int]
    # The signal that ended it (e.g. SIGKILL), or null
    signal: Optional[str]
    # Its timeout_seconds ended it
    timed_out: bool
    error: Optional[str]
    started_at: str
    ended_at: Optional[str]
    # Number of its newest output event: pass it as `after` to read only what follows
    output_seq: int


class ProcessList(Model):
    __slots__ = ()
    _required_keys = frozenset({"processes"})
    processes: List[ProcessInfo]


class ProcessEvent(Model):
    __slots__ = ()
    _required_keys = frozenset({"type"})
    # `start`: the process (a streamed start only); `stdout`/`stderr`: output; `dropped`: output no longer
    # kept was skipped; `exit`: how it ended (the last event)
    type: Literal["start", "stdout", "stderr", "dropped", "exit"]
    # stdout/stderr: the event number (SSE: also its id)
    seq: Optional[int]
    # stdout/stderr: the bytes, as `encoding` says
    data: Optional[str]
    # dropped: how many events were skipped
    events: Optional[int]
    process: Optional[ProcessInfo]


class ProcessOutputPage(Model):
    __slots__ = ()
    _required_keys = frozenset({"events", "next_after", "process"})
    events: List[ProcessEvent]
    process: ProcessInfo
    # Pass as `after` to read what comes next
    next_after: int


class ContextCreateRequest(TypedDict, total=False):
    # Where the context's interpreter starts (default /root); a directory that is not there makes its
    # first run fail: a path in the VM (absolute, or relative to /root) of at most 4095 bytes once
    # resolved, each name at most 255 bytes, without NUL bytes
    cwd: str


class ContextInfo(Model):
    __slots__ = ()
    _required_keys = frozenset({"created_at", "cwd", "id", "language", "session_id"})
    # `default` for the session's own interpreter; `ctx_…` for one you made
    id: str
    session_id: str
    language: Literal["python"]
    # Where its interpreter starts
    cwd: str
    # Null for the default context
    created_at: Optional[str]


class ContextList(Model):
    __slots__ = ()
    _required_keys = frozenset({"contexts"})
    contexts: List[ContextInfo]


class DailyUsageListDaysItem(Model):
    __slots__ = ()
    _required_keys = frozenset({"cpu_seconds", "date", "egress_attempts", "egress_bytes_received", "egress_bytes_sent", "egress_refused", "executions", "vault_flagged", "vault_substituted", "vm_seconds"})
    # The UTC day, YYYY-MM-DD
    date: str
    # Executions started that day
    executions: int
    # Seconds your VMs ran that day
    vm_seconds: float
    # CPU seconds your code used in executions started that day
    cpu_seconds: float
    # Connection attempts in your VMs' egress logs that day (VMs under a restricted egress policy or with
    # a vault)
    egress_attempts: int
    # Of those, refused by the policy
    egress_refused: int
    # Bytes your VMs sent through the egress proxy (HTTP and HTTPS)
    egress_bytes_sent: int
    egress_bytes_received: int
    # Requests a vault secret was swapped into
    vault_substituted: int
    # Vault placeholders seen going where their secret is not bound
    vault_flagged: int


class DailyUsageList(Model):
    __slots__ = ()
    _required_keys = frozenset({"days"})
    # Oldest first, today last; days without use are zeros
    days: List[DailyUsageListDaysItem]


class AdminUser(Model):
    __slots__ = ()
    _required_keys = frozenset({"created_at", "id", "is_admin", "plan", "username"})
    id: int
    username: str
    plan: str
    is_admin: bool
    created_at: str


class AdminUserList(Model):
    __slots__ = ()
    _required_keys = frozenset({"default_plan", "plans", "users"})
    users: List[AdminUser]
    # The plan names the server knows (SANDBOXD_PLANS and the built-in ones)
    plans: List[str]
    default_plan: str


class WorkerRecordCapacity(Model):
    __slots__ = ()
    _required_keys = frozenset({"memory_mb", "vcpus", "vm_slots"})
    vcpus: int
    memory_mb: int
    vm_slots: int


class WorkerRecordLoad(Model):
    __slots__ = ()
    _required_keys = frozenset({"running_vms", "used_memory_mb", "used_vcpus"})
    running_vms: int
    used_vcpus: int
    used_memory_mb: int


class WorkerRecord(Model):
    __slots__ = ()
    _required_keys = frozenset({"capacity", "dead_at", "deployment_drain", "drained", "heartbeat_at", "internal_url", "load", "started_at", "state", "templates", "this_node", "version", "worker_id"})
    worker_id: str
    # `dead`: it missed its heartbeats; `left`: it shut down cleanly
    state: Literal["live", "dead", "left"]
    # No new VMs are placed on it
    drained: bool
    deployment_drain: Optional[Literal["draining", "done", "cancelled"]]
    internal_url: str
    capacity: WorkerRecordCapacity
    load: WorkerRecordLoad
    templates: List[str]
    version: str
    started_at: str
    heartbeat_at: str
    dead_at: Optional[str]
    # The node whose admin listener answered
    this_node: bool


class AdminNodeList(Model):
    __slots__ = ()
    _required_keys = frozenset({"nodes"})
    nodes: List[WorkerRecord]


class AdminStorageByKindValue(Model):
    __slots__ = ()
    _required_keys = frozenset({"artifacts", "data_bytes", "logical_bytes"})
    artifacts: int
    # What their files would take whole (holes and chunks shared with others counted)
    logical_bytes: int
    # Their non-zero chunks (what fetching them moves; chunks shared with other artifacts counted in each)
    data_bytes: int


class AdminStorageByUserItemUsage(Model):
    __slots__ = ()
    _required_keys = frozenset({"artifacts", "data_bytes", "logical_bytes"})
    artifacts: int
    # What their files would take whole (holes and chunks shared with others counted)
    logical_bytes: int
    # Their non-zero chunks (what fetching them moves; chunks shared with other artifacts counted in each)
    data_bytes: int


class AdminStorageByUserItem(Model):
    __slots__ = ()
    _required_keys = frozenset({"usage", "user_id"})
    user_id: int
    usage: AdminStorageByUserItemUsage


class AdminStorageChunks(Model):
    """Every chunk in the store, referenced or not (garbage collection deletes the unreferenced ones past
    their grace period)
    """
    __slots__ = ()
    _required_keys = frozenset({"bytes", "count"})
    count: int
    # What the store really holds: each distinct chunk once
    bytes: int


class AdminStorageNodesItem(Model):
    __slots__ = ()
    _required_keys = frozenset({"entries", "hit_rate", "hits", "hits_by_kind", "limit_bytes", "misses", "misses_by_kind", "node_id", "reported_at", "used_bytes"})
    node_id: str
    # SANDBOXD_ARTIFACT_CACHE_MB
    limit_bytes: int
    used_bytes: int
    entries: int
    # Uses of an artifact the node had (since it started)
    hits: int
    # Uses that fetched it from the object store
    misses: int
    hit_rate: Optional[float]
    hits_by_kind: Dict[str, int]
    misses_by_kind: Dict[str, int]
    # Each node reports its cache once a minute; this node’s is current
    reported_at: str


class AdminStorage(Model):
    __slots__ = ()
    _required_keys = frozenset({"by_kind", "by_user", "chunks", "enabled", "nodes", "store"})
    # Whether captures and templates go to the object store (SANDBOXD_ARTIFACTS); false: they stay on
    # their nodes
    enabled: bool
    # The object store (s3://bucket/prefix at endpoint, or local:/dir)
    store: Optional[str]
    # By kind: pause, snapshot, template, variant (a template’s snapshot of one shape), image (a root
    # filesystem or kernel snapshots build on), volume
    by_kind: Dict[str, AdminStorageByKindValue]
    # By owner, largest first (built-in templates’ shapes and images have none)
    by_user: List[AdminStorageByUserItem]
    # Every chunk in the store, referenced or not (garbage collection deletes the unreferenced ones past
    # their grace period)
    chunks: AdminStorageChunks
    nodes: List[AdminStorageNodesItem]


class AdminStorageGc(Model):
    __slots__ = ()
    _required_keys = frozenset({"chunks", "deleted", "dry_run", "freed_bytes", "kept_young", "referenced"})
    # Chunks in the store when it was listed
    chunks: int
    # Those an artifact references
    referenced: int
    # Unreferenced chunks older than the grace period (SANDBOXD_ARTIFACT_GC_GRACE_SECONDS), deleted (a dry
    # run: would be)
    deleted: int
    freed_bytes: int
    # Unreferenced chunks spared as younger than the grace period (an upload under way writes its chunks
    # first)
    kept_young: int
    dry_run: bool


class _CLIAuthStartRequestRequired(TypedDict):
    # Name of the machine logging in; the key is described "CLI - <hostname>"
    hostname: str
    # base64url(SHA-256(code_verifier)), no padding (PKCE S256)
    code_challenge: str


class CLIAuthStartRequest(_CLIAuthStartRequestRequired, total=False):
    # Only S256
    code_challenge_method: Literal["S256"]


class CLIAuthStartResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"device_code", "expires_in", "interval", "user_code", "verification_uri", "verification_uri_complete"})
    # Secret of the command line: send it to /api/cli-auth/exchange with the code_verifier
    device_code: str
    # Short code the user confirms in the browser, e.g. BCDF-GHJK
    user_code: str
    # Page where the user signs in and approves
    verification_uri: str
    # The same page with the user code filled in
    verification_uri_complete: str
    # Seconds until the device code expires
    expires_in: int
    # Seconds to wait between two polls of the exchange
    interval: int


class _CLIAuthApproveRequestRequired(TypedDict):
    # The code the command line shows (any case; the dash is optional)
    user_code: str


class CLIAuthApproveRequest(_CLIAuthApproveRequestRequired, total=False):
    # true denies the login instead of approving it
    deny: bool


class CLIAuthApproveResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"expires_at", "hostname", "status", "user_code"})
    # "approved" or "denied"
    status: str
    user_code: str
    hostname: str
    expires_at: str


class _CLIAuthExchangeRequestRequired(TypedDict):
    device_code: str
    # The PKCE verifier whose S256 challenge started the login
    code_verifier: str


class CLIAuthExchangeRequest(_CLIAuthExchangeRequestRequired, total=False):
    # Ignored; accepted for RFC 8628 clients
    grant_type: str


class CLIAuthExchangeResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"api_key", "api_key_id", "created_at", "description", "key_prefix", "user_id", "username"})
    # The new API key: shown here once, never again
    api_key: str
    api_key_id: int
    key_prefix: str
    user_id: int
    username: str
    # "CLI - <hostname>"
    description: str
    created_at: str


class AppUrlResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"direct_url", "expires_in_seconds", "port", "session_id", "status", "url", "vm_id", "vm_ip"})
    # The port through the API: {public URL}/v1/app/{session_id}/{port}/
    url: str
    # The port at / of its own host name: {vm_id}-{port}.{SANDBOXD_APP_DOMAIN} (needs wildcard DNS, and
    # wildcard TLS for https)
    direct_url: str
    # The guest's address on its private network, for debugging (nothing routes to it from outside)
    vm_ip: str
    port: int
    vm_id: str
    session_id: str
    # VM status (killed also after expiry)
    status: Literal["active", "killed"]
    # Seconds until the VM is killed; 0 when it is no longer running
    expires_in_seconds: float


class _ShareCreateRequestRequired(TypedDict):
    # A session of yours
    session_id: str
    # TCP port inside the VM, 1 to 65535
    port: int
    # true: anyone may open it; false: only holders of the signed link it hands out (and you)
    is_public: bool


class ShareCreateRequest(_ShareCreateRequestRequired, total=False):
    # Revoke it by itself after this many seconds (60 to 2592000); null or absent: until deleted
    expires_in_seconds: Optional[int]


class Share(Model):
    __slots__ = ()
    _required_keys = frozenset({"created_at", "direct_url", "expires_at", "is_public", "link_expires_at", "port", "session_id", "share_id", "url"})
    share_id: str
    session_id: str
    port: int
    is_public: bool
    # Address to hand out. For a private share a signed link (…?sandboxd_token=…), freshly signed on every
    # read
    url: str
    # The same by host name; null while the session has no VM
    direct_url: Optional[str]
    # When the link in url (and the cookie it sets) stops working; null for public shares
    link_expires_at: Optional[str]
    # When the share ends by itself; null: until deleted
    expires_at: Optional[str]
    created_at: str


class ShareList(Model):
    __slots__ = ()
    _required_keys = frozenset({"shares"})
    shares: List[Share]


class AppRecordCustomDomainsItem(Model):
    __slots__ = ()
    _required_keys = frozenset({"domain", "id", "status", "url"})
    # cd_… (see /v1/custom-domains/{domain_id})
    id: str
    domain: str
    # Where the domain serves the app once verified
    url: str
    # pending: waiting for its DNS TXT record; verified: served
    status: Literal["pending", "verified"]


class AppRecord(Model):
    __slots__ = ()
    _required_keys = frozenset({"created_at", "custom_domains", "id", "latest_version", "live_version", "name", "public", "replicas", "status", "updated_at", "url"})
    # `app-` + 12 characters
    id: str
    # Unique among your apps: 1 to 40 lower-case letters, digits and single hyphens
    name: str
    # Where the app is served: `<scheme>://<name>--<owner>.<SANDBOXD_APP_DOMAIN>[:port]/` (the owner is
    # your username when it is a DNS label, else `u<user id>`)
    url: str
    # deploying: no version live yet; live; failed: its first version failed; crashed: a replica is being
    # restarted
    status: Literal["deploying", "live", "failed", "crashed", "stopped"]
    # The version the URL serves, null before the first goes live
    live_version: Optional[int]
    # The newest version deployed (live or not)
    latest_version: int
    # VMs serving the URL (round robin)
    replicas: int
    # false: only requests with the owner's API key or token are served
    public: bool
    created_at: str
    updated_at: str
    # The custom domains that serve the app (POST /v1/custom-domains with app_id), pending or verified
    custom_domains: List[AppRecordCustomDomainsItem]


class DeploymentRecord(Model):
    __slots__ = ()
    _required_keys = frozenset({"app_id", "created_at", "ended_at", "error", "live_at", "manifest", "status", "version", "vm_ids"})
    app_id: str
    # 1, 2, … per app
    version: int
    # pending (queued behind the app’s previous job), building (VM, upload, install, snapshot), starting
    # (replicas and their start command), checking (health), live, failed, superseded (a later version or
    # a rollback went live), stopped (the app was deleted during it)
    status: Literal["pending", "building", "starting", "checking", "live", "failed", "superseded", "stopped"]
    # The manifest as validated: aliases resolved, defaults applied
    manifest: Dict[str, Any]
    # The VMs of its replicas (the newest ones it ran on)
    vm_ids: List[str]
    error: Optional[str]
    created_at: str
    # When it last went live
    live_at: Optional[str]
    ended_at: Optional[str]


class AppDeploymentAccepted(Model):
    __slots__ = ()
    _required_keys = frozenset({"app", "deployment"})
    app: AppRecord
    deployment: DeploymentRecord


class AppList(Model):
    __slots__ = ()
    _required_keys = frozenset({"apps"})
    apps: List[AppRecord]


class DeploymentList(Model):
    __slots__ = ()
    _required_keys = frozenset({"deployments"})
    deployments: List[DeploymentRecord]


class PtyCreateRequest(TypedDict, total=False):
    # Terminal columns, 1 to 1000 (default 80)
    cols: int
    # Terminal rows, 1 to 1000 (default 24)
    rows: int
    # Command line to run instead of an interactive shell (run with `<shell> -lc`); the terminal exits
    # with it
    command: str
    # Absolute path of the shell (default /bin/bash), started as a login shell: a path in the VM
    # (absolute, or relative to /root) of at most 4095 bytes once resolved, each name at most 255 bytes,
    # without NUL bytes
    shell: str
    # Environment on top of the session's env (TERM is xterm-256color unless set here)
    env: Dict[str, str]
    # Working directory (default /root): a path in the VM (absolute, or relative to /root) of at most 4095
    # bytes once resolved, each name at most 255 bytes, without NUL bytes
    cwd: str
    # Recent output replayed to each new attachment (default 65536)
    scrollback_bytes: int


class PtyResizeRequest(TypedDict):
    cols: int
    rows: int


class PtySession(Model):
    __slots__ = ()
    _required_keys = frozenset({"attachments", "cols", "command", "connect_token", "connect_token_expires_in", "created_at", "cwd", "exit_code", "exited_at", "pid", "pty_id", "rows", "session_id", "signal", "status", "vm_id", "websocket_url"})
    pty_id: str
    session_id: Optional[str]
    vm_id: str
    cols: int
    rows: int
    # The program and its arguments
    command: List[str]
    cwd: str
    pid: int
    status: Literal["running", "exited"]
    exit_code: Optional[int]
    # The signal that ended it, e.g. SIGKILL
    signal: Optional[str]
    created_at: str
    exited_at: Optional[str]
    # WebSocket connections attached right now
    attachments: int
    # Where to attach (WebSocket): send X-API-Key/Authorization, or append ?token=<connect_token>
    websocket_url: str
    # Single-use attach token for clients that cannot set headers (browsers); a fresh one on every read
    connect_token: str
    # Seconds the connect token works
    connect_token_expires_in: int


class PtySessionState(Model):
    __slots__ = ()
    _required_keys = frozenset({"attachments", "cols", "command", "created_at", "cwd", "exit_code", "exited_at", "pid", "pty_id", "rows", "session_id", "signal", "status", "vm_id"})
    pty_id: str
    session_id: Optional[str]
    vm_id: str
    cols: int
    rows: int
    # The program and its arguments
    command: List[str]
    cwd: str
    pid: int
    status: Literal["running", "exited"]
    exit_code: Optional[int]
    # The signal that ended it, e.g. SIGKILL
    signal: Optional[str]
    created_at: str
    exited_at: Optional[str]
    # WebSocket connections attached right now
    attachments: int


class PtySessionList(Model):
    __slots__ = ()
    _required_keys = frozenset({"sessions"})
    sessions: List[PtySessionState]


class _CustomDomainCreateRequestRequired(TypedDict):
    # The fully qualified domain name to serve, e.g. app.example.com (stored in lower case;
    # internationalized names in their xn-- form). Not an IP address, not this server's own host name, not
    # SANDBOXD_APP_DOMAIN or a name under it. Point it (CNAME or A/AAAA) at this server or its reverse
    # proxy.
    domain: str


class CustomDomainCreateRequest(_CustomDomainCreateRequestRequired, total=False):
    # A share of yours: the domain is served like it (public, or private with its signed link and cookie).
    # Deleting the share deletes the domain
    share_id: str
    # Without share_id: a session of yours whose port the domain serves, to you only (like a private
    # preview, or as a share of that port allows). With share_id: optional, must be the share's
    session_id: str
    # The port inside the VM, with session_id. With share_id: optional, must be the share's
    port: int
    # A deployed app of yours, by id (app-…) or name: the domain serves it like its own URL (its live
    # replicas, round robin; a private app to you only). Not with share_id, session_id or port. Deleting
    # the app deletes the domain
    app_id: str
    # Who creates the TXT record: manual (you, at your DNS host; the only supported value)
    dns_provider: Literal["manual"]
    # Credentials for a DNS provider that sandboxd would drive itself. None is supported yet, so a
    # non-empty object is refused (422); never stored, logged or shown
    dns_credentials: Optional[Dict[str, str]]


class CustomDomainVerification(Model):
    """The DNS record that proves the claim: create it at your DNS host, then POST …/verify"""
    __slots__ = ()
    _required_keys = frozenset({"name", "type", "value"})
    # _sandboxd-challenge.<domain>
    name: str
    type: Literal["TXT"]
    # This claim's token: the record's value, exactly
    value: str


class CustomDomain(Model):
    __slots__ = ()
    _required_keys = frozenset({"app_id", "created_at", "dns_provider", "domain", "expires_at", "failure_reason", "id", "last_checked_at", "last_error", "link", "link_expires_at", "next_check_at", "port", "session_id", "share_id", "status", "url", "verification", "verified_at"})
    # cd_…
    id: str
    # Lower case, without a trailing dot
    domain: str
    # pending: waiting for the TXT record (checked by POST …/verify and every
    # SANDBOXD_CUSTOM_DOMAIN_CHECK_INTERVAL_SECONDS); verified: requests with this Host are served while
    # the record stays (re-checked every SANDBOXD_CUSTOM_DOMAIN_REVERIFY_SECONDS), until the claim is
    # deleted; failed: final, see failure_reason and last_error
    status: Literal["pending", "verified", "failed"]
    # Why a claim failed: expired (not verified in time), verified_elsewhere (another account verified the
    # domain first) or record_missing (a verified domain's TXT record was not found at
    # SANDBOXD_CUSTOM_DOMAIN_REVERIFY_MISSES re-checks in a row; it is no longer served); null unless
    # failed
    failure_reason: Optional[Literal["expired", "verified_elsewhere", "record_missing"]]
    # The share it is served like; null when it maps session_id and port directly, or an app
    share_id: Optional[str]
    # The session whose port it serves; null when it serves an app
    session_id: Optional[str]
    # The port inside the VM; null when it serves an app
    port: Optional[int]
    # The deployed app it serves (app-…); null for a share or a port
    app_id: Optional[str]
    dns_provider: Literal["manual"]
    # The DNS record that proves the claim: create it at your DNS host, then POST …/verify
    verification: CustomDomainVerification
    # Where the domain serves its target once verified: {scheme}://{domain}[:port]/ with the scheme and
    # port of the public URL
    url: str
    # For a verified domain of a private share: url with a freshly signed share link (?sandboxd_token=…),
    # which sets the preview cookie on first use; else null
    link: Optional[str]
    # When link (and the cookie it sets) stops working
    link_expires_at: Optional[str]
    created_at: str
    # A pending claim not verified by then fails (expired); null once verified or failed
    expires_at: Optional[str]
    verified_at: Optional[str]
    # When DNS was last asked for the record
    last_checked_at: Optional[str]
    # What the last check or re-check found wrong (or why the claim failed); null after a successful one
    last_error: Optional[str]
    # When the background checker looks next: a pending claim's next check, a verified one's next re-check
    # of its record; null once failed
    next_check_at: Optional[str]


class CustomDomainList(Model):
    __slots__ = ()
    _required_keys = frozenset({"custom_domains"})
    custom_domains: List[CustomDomain]


class CustomDomainTlsCheck(Model):
    __slots__ = ()
    _required_keys = frozenset({"domain", "verified"})
    domain: str
    verified: Literal[True]


class BrowserSessionCreateRequest(TypedDict, total=False):
    # Viewport width, pixels (100 to 3840, default 1280)
    viewport_width: int
    # Viewport height, pixels (100 to 2160, default 720)
    viewport_height: int
    # The User-Agent header and navigator.userAgent (default: the browser's own)
    user_agent: Optional[str]
    # Seconds without an interaction after which the session is closed; the default and the largest value
    # allowed are the server's (see `GET /v1/browser/capabilities`)
    idle_timeout_seconds: int
    # The API key, for clients that send it in the body (a header works too)
    api_key: str


class BrowserSessionResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"closed_at", "created_at", "end_reason", "expires_at", "idle_timeout_seconds", "last_activity", "pages_visited", "screenshots_taken", "session_id", "status", "url", "user_agent", "viewport_height", "viewport_width"})
    session_id: str
    # `active` until it is closed (DELETE), idle past its idle timeout, past its lifetime, or its VM ends
    # (`failed`)
    status: Literal["active", "closed", "expired", "failed"]
    viewport_width: int
    viewport_height: int
    user_agent: Optional[str]
    created_at: str
    last_activity: str
    # When the session closes unless used again (idle timeout), never later than its lifetime allows
    expires_at: str
    idle_timeout_seconds: int
    # The page the session shows now (about:blank at first)
    url: str
    pages_visited: int
    screenshots_taken: int
    closed_at: Optional[str]
    # Why it ended: `closed` (DELETE), `idle`, `lifetime`, `vm_ended` or `server_shutdown`; null while
    # active
    end_reason: Optional[str]


class BrowserSessionListResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"sessions"})
    sessions: List[BrowserSessionResponse]


class BrowserSessionCloseResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"message", "session_id", "success"})
    success: Literal[True]
    session_id: str
    message: str


class BrowserInteractionResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"data", "execution_time", "message", "session_id", "success"})
    success: bool
    message: str
    # Seconds the interaction took
    execution_time: float
    session_id: str
    # What the interaction found or did, e.g. `{url, title}` after navigate, `{x, y}` after scroll
    data: Optional[Dict[str, Any]]


class _BrowserNavigateRequestRequired(TypedDict):
    # The browser session (from `POST /v1/browser/sessions/`)
    session_id: str
    # Where to go: http, https, data or about URLs
    url: str


class BrowserNavigateRequest(_BrowserNavigateRequestRequired, total=False):
    # Milliseconds to wait for the page to load (0 to 120000, default 30000); past it, 408 BROWSER_TIMEOUT
    wait_timeout: int
    # When a page counts as loaded: `load` (default), `domcontentloaded`, `networkidle` (no requests for
    # 500 ms) or `commit` (the response arrived)
    wait_until: Literal["load", "domcontentloaded", "networkidle", "commit"]


class _BrowserClickRequestRequired(TypedDict):
    # The browser session (from `POST /v1/browser/sessions/`)
    session_id: str
    # CSS selector (or a Playwright selector such as `text=Sign in`) of the element to click
    selector: str


class BrowserClickRequest(_BrowserClickRequestRequired, total=False):
    # Click even if the element is covered, hidden or disabled (default false)
    force: bool
    # Milliseconds to wait for the element to be clickable (0 to 120000, default 30000)
    timeout: int
    # Mouse button (default left)
    button: Literal["left", "right", "middle"]
    # 1 (default), 2 for a double click, 3 for a triple click
    click_count: int


class _BrowserTypeRequestRequired(TypedDict):
    # The browser session (from `POST /v1/browser/sessions/`)
    session_id: str
    # The element to type into (it is focused first)
    selector: str
    # Typed key by key, as a user would (at most 100000 characters); `fill` sets a value at once
    text: str


class BrowserTypeRequest(_BrowserTypeRequestRequired, total=False):
    # Milliseconds between key presses (0 to 1000, default 100)
    delay: int
    # Milliseconds to wait for the element (0 to 120000, default 30000)
    timeout: int


class _BrowserFillRequestRequired(TypedDict):
    # The browser session (from `POST /v1/browser/sessions/`)
    session_id: str
    # An input, textarea, select or contenteditable element
    selector: str
    # The value it gets, replacing what it had (at most 100000 characters)
    value: str


class BrowserFillRequest(_BrowserFillRequestRequired, total=False):
    # Milliseconds to wait for the element (0 to 120000, default 30000)
    timeout: int


class _BrowserScrollRequestRequired(TypedDict):
    # The browser session (from `POST /v1/browser/sessions/`)
    session_id: str


class BrowserScrollRequest(_BrowserScrollRequestRequired, total=False):
    """Give `selector`, or `x` and/or `y`: a body with neither is a 422"""
    selector: Optional[str]
    # Scroll the page to this horizontal position, pixels (absolute)
    x: Optional[int]
    # Scroll the page to this vertical position, pixels (absolute)
    y: Optional[int]


class _BrowserWaitRequestRequired(TypedDict):
    # The browser session (from `POST /v1/browser/sessions/`)
    session_id: str
    # Playwright's element states, each needing `selector`: `visible` (or `selector`: the element is
    # visible), `hidden` (it is hidden or gone), `attached` (it is in the page), `detached` (it is not);
    # the load states `navigation` or `load` (the load event), `domcontentloaded`, `networkidle`; or
    # `timeout` (just wait `timeout` milliseconds)
    condition: Literal["selector", "visible", "hidden", "attached", "detached", "navigation", "load", "domcontentloaded", "networkidle", "timeout"]


class BrowserWaitRequest(_BrowserWaitRequestRequired, total=False):
    selector: Optional[str]
    # Milliseconds to wait for the condition (for `timeout`: how long to wait) (0 to 120000, default
    # 30000)
    timeout: int


class _BrowserTargetRequestRequired(TypedDict):
    # The browser session (from `POST /v1/browser/sessions/`)
    session_id: str
    # The element
    selector: str


class BrowserTargetRequest(_BrowserTargetRequestRequired, total=False):
    # Milliseconds to wait for the element (0 to 120000, default 30000)
    timeout: int


class _BrowserKeyPressRequestRequired(TypedDict):
    # The browser session (from `POST /v1/browser/sessions/`)
    session_id: str
    # A key name as Playwright names them: `Enter`, `Tab`, `ArrowDown`, `a`, or a chord such as
    # `Control+A`
    key: str


class BrowserKeyPressRequest(_BrowserKeyPressRequestRequired, total=False):
    selector: Optional[str]
    # Milliseconds to wait for the element (0 to 120000, default 30000)
    timeout: int


class BrowserScreenshotRequestClip(TypedDict):
    """The part of the page to capture, pixels from the top left of the page"""
    x: float
    y: float
    width: float
    height: float


class _BrowserScreenshotRequestRequired(TypedDict):
    # The browser session (from `POST /v1/browser/sessions/`)
    session_id: str


class BrowserScreenshotRequest(_BrowserScreenshotRequestRequired, total=False):
    # The whole scrollable page instead of the viewport (default false)
    full_page: bool
    # Image format: `png` (default) or `jpeg`
    format: Literal["png", "jpeg"]
    clip: Optional[BrowserScreenshotRequestClip]
    # JPEG quality, 0 to 100 (jpeg only; the browser's default when absent)
    quality: Optional[int]


class BrowserScreenshotResponseUsageInfo(Model):
    """What the session has used so far"""
    __slots__ = ()
    _required_keys = frozenset({"pages_visited", "screenshots_taken", "session_seconds"})
    # Navigations of the session so far
    pages_visited: int
    screenshots_taken: int
    # Seconds since the session was created
    session_seconds: float


class BrowserScreenshotResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"execution_time", "format", "height", "screenshot", "session_id", "usage_info", "width"})
    # The image, base64
    screenshot: str
    format: Literal["png", "jpeg"]
    # Image width, pixels
    width: int
    # Image height, pixels
    height: int
    # Seconds
    execution_time: float
    session_id: str
    # What the session has used so far
    usage_info: BrowserScreenshotResponseUsageInfo


class _BrowserExtractRequestRequired(TypedDict):
    # The browser session (from `POST /v1/browser/sessions/`)
    session_id: str


class BrowserExtractRequest(_BrowserExtractRequestRequired, total=False):
    selector: Optional[str]
    # Attributes to read from each element besides its text and tag, e.g. `["href", "class"]` (at most 50)
    attributes: List[str]
    # At most this many elements, in document order (1 to 1000, default 100)
    max_elements: int


class BrowserExtractResponseElementsItem(Model):
    __slots__ = ()
    _required_keys = frozenset({"attributes", "selector", "tag", "text", "value", "visible"})
    tag: str
    text: str
    # The attributes asked for; null where the element has none of that name
    attributes: Dict[str, Optional[str]]
    # A CSS selector that finds this element again
    selector: str
    visible: bool
    # The value of a form control (input, textarea, select), else null
    value: Optional[str]


class BrowserExtractResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"count", "elements", "execution_time", "session_id"})
    elements: List[BrowserExtractResponseElementsItem]
    count: int
    # Seconds
    execution_time: float
    session_id: str


class _BrowserContentRequestRequired(TypedDict):
    # The browser session (from `POST /v1/browser/sessions/`)
    session_id: str


class BrowserContentRequest(_BrowserContentRequestRequired, total=False):
    # List the links, buttons and form fields (default true)
    include_interactive: bool
    # List text anchors with selectors to reach them (default true)
    include_anchors: bool
    # At most this many anchors (0 to 1000, default 50)
    max_anchors: int


class BrowserContentResponseReadableContent(Model):
    """The page's main text, cleaned of clutter when the page is an article (`extractor` says how it was
    read)
    """
    __slots__ = ()
    _required_keys = frozenset({"byline", "content", "excerpt", "extractor", "length", "published_time", "site_name", "title", "word_count"})
    # The article's title as Readability finds it (the page's title, less a site name); else the page's
    # title
    title: str
    # The article's author line (`By Ada Lovelace`), from the page's metadata or its text; null when none
    # is found
    byline: Optional[str]
    # The article's summary: the page's description metadata, else its first paragraph
    excerpt: Optional[str]
    # The site's name, from the page's metadata
    site_name: Optional[str]
    # When the article was published, as the page's metadata states it
    published_time: Optional[str]
    # The readable text: blocks on lines of their own, a blank line after paragraphs, headings and lists,
    # no markup
    content: str
    # Words of `content` (runs of characters between spaces)
    word_count: int
    # Characters of `content`
    length: int
    # `readability`: the page reads as an article and `content` is that article, as Mozilla's Readability
    # (Firefox's Reader View) finds it: navigation, headers and footers, ads, cookie banners, comments and
    # sidebars left out. `page_text`: the page is no article (a form, a list of links, an app) or
    # Readability found none, and `content` is all of the page's visible text; byline, excerpt, site name
    # and published time are then null
    extractor: Literal["readability", "page_text"]


class BrowserContentResponseInteractiveElementsItemPosition(Model):
    """The element's box as laid out when the page was read, in the coordinates of a `full_page` screenshot"""
    __slots__ = ()
    _required_keys = frozenset({"height", "width", "x", "y"})
    # Left edge, CSS pixels from the left of the page
    x: int
    # Top edge, CSS pixels from the top of the page (not of the viewport: scrolling does not change it)
    y: int
    # CSS pixels
    width: int
    # CSS pixels
    height: int


class BrowserContentResponseInteractiveElementsItem(Model):
    __slots__ = ()
    _required_keys = frozenset({"attributes", "interactive_type", "position", "selector", "tag", "text", "type"})
    # `link`, `input`, else its ARIA role or its tag (`button`, `textarea`, `select`, …);
    # `interactive_type` is finer
    type: str
    # What the user does with it: `link`, `button` (also a submit, reset or image input), `input`,
    # `checkbox`, `radio`, `textarea`, `select`, another ARIA role it has (`tab`, `menuitem`, …),
    # `editable` (contenteditable) or `clickable` (an onclick handler)
    interactive_type: str
    # Its element name: `a`, `button`, `input`, …
    tag: str
    # Its text, else its value, aria-label or placeholder (at most 200 characters)
    text: str
    # A CSS selector that finds it again (for click, fill, type)
    selector: str
    # Those it has of name, type, placeholder, href, aria-label and role; the current value of a form
    # field
    attributes: Dict[str, str]
    # The element's box as laid out when the page was read, in the coordinates of a `full_page` screenshot
    position: BrowserContentResponseInteractiveElementsItemPosition


class BrowserContentResponseContentAnchorsItem(Model):
    __slots__ = ()
    _required_keys = frozenset({"href", "length", "selector", "tag", "text"})
    # The block's or link's text, whitespace collapsed: its first 200 characters (`length` counts them
    # all)
    text: str
    # A CSS selector that finds the element again (for click, scroll, extract)
    selector: str
    # A link's absolute URL; null for a text block
    href: Optional[str]
    # Characters of the whole text
    length: int
    # `a` for a link; for a text block its element: `h1`–`h6`, `p`, `li`, `blockquote`, `pre`, `td`,
    # `div`, …
    tag: str


class BrowserContentResponseUsageInfo(Model):
    """What the session has used so far"""
    __slots__ = ()
    _required_keys = frozenset({"pages_visited", "screenshots_taken", "session_seconds"})
    # Navigations of the session so far
    pages_visited: int
    screenshots_taken: int
    # Seconds since the session was created
    session_seconds: float


class BrowserContentResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"content_anchors", "execution_time", "extraction_time", "interactive_elements", "readable_content", "session_id", "success", "title", "url", "usage_info"})
    # Always true (a failure is an error status)
    success: bool
    # The page's main text, cleaned of clutter when the page is an article (`extractor` says how it was
    # read)
    readable_content: BrowserContentResponseReadableContent
    # The visible links, buttons, form fields and other clickable elements, in document order (at most
    # 200; empty when `include_interactive` is false)
    interactive_elements: List[BrowserContentResponseInteractiveElementsItem]
    # Text mapped to selectors: the text blocks (headings, paragraphs, list items, …) and links of the
    # readable part (the article, else the whole page) in document order, then the other links of the
    # page, at most `max_anchors` (empty when `include_anchors` is false)
    content_anchors: List[BrowserContentResponseContentAnchorsItem]
    # The page's title (`readable_content.title` is the article's)
    title: str
    url: str
    # Seconds spent reading the page
    extraction_time: float
    # Seconds the interaction took, waiting for the session included
    execution_time: float
    session_id: str
    # What the session has used so far
    usage_info: BrowserContentResponseUsageInfo


class _BrowserFillCredentialRequestRequired(TypedDict):
    # The browser session (from `POST /v1/browser/sessions/`)
    session_id: str
    # A stored credential (`POST /v1/browser/credentials`) allowed on the page's host
    credential_id: str


class BrowserFillCredentialRequest(_BrowserFillCredentialRequestRequired, total=False):
    username_selector: Optional[str]
    password_selector: Optional[str]
    # Press Enter in the password field after filling (default false)
    submit: bool
    # Milliseconds to wait for the fields (0 to 120000, default 30000)
    timeout: int


class _BrowserRenderNavigateActionRequired(TypedDict):
    # The interaction
    type: Literal["navigate"]
    # Where to go: http, https, data or about URLs
    url: str


class BrowserRenderNavigateAction(_BrowserRenderNavigateActionRequired, total=False):
    """Go to another page, as `POST /v1/browser/interactions/navigate`:
    `{"type":"navigate","url":"https://example.com/next"}`
    """
    # Milliseconds to wait for the page to load (0 to 120000, default 30000); past it, 408 BROWSER_TIMEOUT
    wait_timeout: int
    # When a page counts as loaded: `load` (default), `domcontentloaded`, `networkidle` (no requests for
    # 500 ms) or `commit` (the response arrived)
    wait_until: Literal["load", "domcontentloaded", "networkidle", "commit"]


class _BrowserRenderClickActionRequired(TypedDict):
    # The interaction
    type: Literal["click"]
    # CSS selector (or a Playwright selector such as `text=Sign in`) of the element to click
    selector: str


class BrowserRenderClickAction(_BrowserRenderClickActionRequired, total=False):
    """Click an element, as `POST /v1/browser/interactions/click`: `{"type":"click","selector":"#accept"}`"""
    # Click even if the element is covered, hidden or disabled (default false)
    force: bool
    # Milliseconds to wait for the element to be clickable (0 to 120000, default 30000)
    timeout: int
    # Mouse button (default left)
    button: Literal["left", "right", "middle"]
    # 1 (default), 2 for a double click, 3 for a triple click
    click_count: int


class _BrowserRenderTypeActionRequired(TypedDict):
    # The interaction
    type: Literal["type"]
    # The element to type into (it is focused first)
    selector: str
    # Typed key by key, as a user would (at most 100000 characters); `fill` sets a value at once
    text: str


class BrowserRenderTypeAction(_BrowserRenderTypeActionRequired, total=False):
    """Type text key by key, as `POST /v1/browser/interactions/type` (no delay between keys unless `delay`
    says so)
    """
    # Milliseconds between key presses (0 to 1000, default 0)
    delay: int
    # Milliseconds to wait for the element (0 to 120000, default 30000)
    timeout: int


class _BrowserRenderFillActionRequired(TypedDict):
    # The interaction
    type: Literal["fill"]
    # An input, textarea, select or contenteditable element
    selector: str
    # The value it gets, replacing what it had (at most 100000 characters)
    value: str


class BrowserRenderFillAction(_BrowserRenderFillActionRequired, total=False):
    """Set a form field's value, as `POST /v1/browser/interactions/fill`:
    `{"type":"fill","selector":"#q","value":"otters"}`
    """
    # Milliseconds to wait for the element (0 to 120000, default 30000)
    timeout: int


class _BrowserRenderScrollActionRequired(TypedDict):
    # The interaction
    type: Literal["scroll"]


class BrowserRenderScrollAction(_BrowserRenderScrollActionRequired, total=False):
    """Scroll an element into view, or the page to `x`/`y`, as `POST /v1/browser/interactions/scroll` (give
    `selector`, or `x` and/or `y`)
    """
    selector: Optional[str]
    # Scroll the page to this horizontal position, pixels (absolute)
    x: Optional[int]
    # Scroll the page to this vertical position, pixels (absolute)
    y: Optional[int]


class _BrowserRenderWaitActionRequired(TypedDict):
    # The interaction
    type: Literal["wait"]
    # Playwright's element states, each needing `selector`: `visible` (or `selector`: the element is
    # visible), `hidden` (it is hidden or gone), `attached` (it is in the page), `detached` (it is not);
    # the load states `navigation` or `load` (the load event), `domcontentloaded`, `networkidle`; or
    # `timeout` (just wait `timeout` milliseconds)
    condition: Literal["selector", "visible", "hidden", "attached", "detached", "navigation", "load", "domcontentloaded", "networkidle", "timeout"]


class BrowserRenderWaitAction(_BrowserRenderWaitActionRequired, total=False):
    """Wait for an element, a load state or a time, as `POST /v1/browser/interactions/wait`:
    `{"type":"wait","condition":"networkidle"}`
    """
    selector: Optional[str]
    # Milliseconds to wait for the condition (for `timeout`: how long to wait) (0 to 120000, default
    # 30000)
    timeout: int


class _BrowserRenderHoverActionRequired(TypedDict):
    # The interaction
    type: Literal["hover"]
    # The element
    selector: str


class BrowserRenderHoverAction(_BrowserRenderHoverActionRequired, total=False):
    """Move the mouse over an element, as `POST /v1/browser/interactions/hover`"""
    # Milliseconds to wait for the element (0 to 120000, default 30000)
    timeout: int


class _BrowserRenderKeyPressActionRequired(TypedDict):
    # The interaction
    type: Literal["keypress"]
    # A key name as Playwright names them: `Enter`, `Tab`, `ArrowDown`, `a`, or a chord such as
    # `Control+A`
    key: str


class BrowserRenderKeyPressAction(_BrowserRenderKeyPressActionRequired, total=False):
    """Press a key or a chord, as `POST /v1/browser/interactions/keypress`:
    `{"type":"keypress","key":"Enter"}`
    """
    selector: Optional[str]
    # Milliseconds to wait for the element (0 to 120000, default 30000)
    timeout: int


# An interaction run after the page loaded: `type` and the fields of that interaction's request
# without `session_id`
BrowserRenderAction = Union[BrowserRenderNavigateAction, BrowserRenderClickAction, BrowserRenderTypeAction, BrowserRenderFillAction, BrowserRenderScrollAction, BrowserRenderWaitAction, BrowserRenderHoverAction, BrowserRenderKeyPressAction]


class BrowserRenderRequestClip(TypedDict):
    """The part of the page to capture, pixels from the top left of the page"""
    x: float
    y: float
    width: float
    height: float


class BrowserRenderRequest(TypedDict, total=False):
    """Give exactly one of `url` and `html`"""
    url: Optional[str]
    html: Optional[str]
    # Viewport width, pixels (100 to 3840, default 1280)
    width: int
    # Viewport height, pixels (100 to 2160, default 720)
    height: int
    # The User-Agent header and navigator.userAgent (default: the browser's own)
    user_agent: Optional[str]
    # When a page counts as loaded: `load` (default), `domcontentloaded`, `networkidle` (no requests for
    # 500 ms) or `commit` (the response arrived)
    wait_until: Literal["load", "domcontentloaded", "networkidle", "commit"]
    wait_for_selector: Optional[str]
    # Milliseconds for loading and `wait_for_selector` together (0 to 120000, default 30000)
    wait_timeout: int
    # The whole scrollable page instead of the viewport (default false)
    full_page: bool
    clip: Optional[BrowserRenderRequestClip]
    # Image format: `png` (default) or `jpeg`
    format: Literal["png", "jpeg"]
    # JPEG quality, 0 to 100 (jpeg only; the browser's default when absent)
    quality: Optional[int]
    # Answer the page's HTML after the actions ran (default false)
    return_html: bool
    # Answer the page's readable text (default false)
    return_text: bool
    # Answer a screenshot, base64 (default true); it is stored either way while retention keeps it
    return_screenshot: bool
    # Interactions run in order after loading (at most 50)
    actions: List[BrowserRenderAction]
    # The API key, for clients that send it in the body (a header works too)
    api_key: str


class BrowserRenderResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"execution_time", "format", "height", "html", "screenshot", "screenshot_url", "status_code", "success", "text", "title", "url", "usage_id", "width"})
    success: bool
    # The usage record of this render (`GET /v1/browser/screenshot/{usage_id}`)
    usage_id: int
    # The final URL, after redirects
    url: str
    title: str
    # The main document's HTTP status; null for inline HTML
    status_code: Optional[int]
    # The image, base64; null when `return_screenshot` was false
    screenshot: Optional[str]
    format: Optional[Literal["png", "jpeg"]]
    # Image width, pixels
    width: int
    # Image height, pixels
    height: int
    html: Optional[str]
    text: Optional[str]
    # Seconds
    execution_time: float
    # Where the stored screenshot can be fetched again while retention keeps it
    screenshot_url: Optional[str]


class BrowserUsageSummaryLast30Days(Model):
    __slots__ = ()
    _required_keys = frozenset({"pages", "renders", "screenshots", "sessions", "total_seconds"})
    renders: int
    sessions: int
    pages: int
    screenshots: int
    # Seconds of browser time
    total_seconds: float


class BrowserUsageSummary(Model):
    __slots__ = ()
    _required_keys = frozenset({"active_sessions", "last_30_days", "max_sessions", "pages", "renders", "screenshots", "sessions", "total_seconds", "user_id"})
    user_id: int
    renders: int
    sessions: int
    pages: int
    screenshots: int
    # Seconds of browser time
    total_seconds: float
    active_sessions: int
    # The plan's limit of open sessions
    max_sessions: int
    last_30_days: BrowserUsageSummaryLast30Days


class BrowserUsageRecord(Model):
    """One per render and per browser session"""
    __slots__ = ()
    _required_keys = frozenset({"created_at", "duration_seconds", "error", "has_screenshot", "kind", "pages", "screenshots", "session_id", "status", "url", "usage_id"})
    usage_id: int
    kind: Literal["render", "session"]
    session_id: Optional[str]
    url: Optional[str]
    status: Literal["ok", "failed", "active"]
    error: Optional[str]
    pages: int
    screenshots: int
    duration_seconds: float
    # A screenshot is stored (`GET /v1/browser/screenshot/{usage_id}`)
    has_screenshot: bool
    created_at: str


class BrowserUsageHistory(Model):
    __slots__ = ()
    _required_keys = frozenset({"items", "limit", "offset", "total"})
    items: List[BrowserUsageRecord]
    total: int
    limit: int
    offset: int


class BrowserStoredScreenshot(Model):
    __slots__ = ()
    _required_keys = frozenset({"bytes", "content_type", "created_at", "expires_at", "format", "screenshot", "usage_id"})
    usage_id: int
    format: Literal["png", "jpeg"]
    # `image/png` or `image/jpeg`
    content_type: str
    # The image, base64
    screenshot: str
    # Size of the image
    bytes: int
    created_at: str
    # When retention deletes it; null: kept
    expires_at: Optional[str]


class BrowserCapabilitiesMaxViewport(Model):
    __slots__ = ()
    _required_keys = frozenset({"height", "width"})
    width: int
    height: int


class BrowserCapabilitiesDefaultViewport(Model):
    __slots__ = ()
    _required_keys = frozenset({"height", "width"})
    width: int
    height: int


class BrowserCapabilities(Model):
    __slots__ = ()
    _required_keys = frozenset({"default_viewport", "engine", "idle_timeout_seconds", "interactions", "max_session_seconds", "max_sessions", "max_viewport", "screenshot_formats", "version", "wait_conditions", "wait_until", "warm_pool_size"})
    engine: Literal["chromium"]
    # The browser's version
    version: str
    # The interaction operations served
    interactions: List[str]
    screenshot_formats: List[Literal["png", "jpeg"]]
    wait_conditions: List[Literal["selector", "visible", "hidden", "attached", "detached", "navigation", "load", "domcontentloaded", "networkidle", "timeout"]]
    wait_until: List[Literal["load", "domcontentloaded", "networkidle", "commit"]]
    max_viewport: BrowserCapabilitiesMaxViewport
    default_viewport: BrowserCapabilitiesDefaultViewport
    # The default idle timeout of a session
    idle_timeout_seconds: int
    # The longest a session lives, used or not
    max_session_seconds: int
    # Open sessions your plan allows
    max_sessions: int
    # Browsers kept started ahead of need
    warm_pool_size: int


class BrowserAuthTestRequest(TypedDict, total=False):
    """Optional: the key may come in a header instead"""
    # The API key, for clients that send it in the body (a header works too)
    api_key: str


class BrowserAuthTestResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"authenticated", "browser_available", "message", "plan", "success", "user_id", "username"})
    success: Literal[True]
    authenticated: Literal[True]
    user_id: int
    username: str
    plan: str
    # A browser can be started now
    browser_available: bool
    message: str


class BrowserCredentialRecord(Model):
    """A stored login: never its password"""
    __slots__ = ()
    _required_keys = frozenset({"allowed_hosts", "created_at", "credential_id", "last_used_at", "name", "updated_at", "username"})
    credential_id: str
    name: str
    username: str
    allowed_hosts: List[str]
    created_at: str
    updated_at: str
    last_used_at: Optional[str]


class BrowserCredentialList(Model):
    __slots__ = ()
    _required_keys = frozenset({"credentials"})
    credentials: List[BrowserCredentialRecord]


class BrowserCredentialCreateRequest(TypedDict):
    # Unique among your credentials
    name: str
    username: str
    # Never shown again: no answer or list has it
    password: str
    # The hosts it may be filled on (1 to 50): the page must be on one of them
    allowed_hosts: List[str]


class BrowserCredentialUpdateRequest(TypedDict, total=False):
    """Absent fields are kept"""
    username: str
    # Never shown again: no answer or list has it
    password: str
    # The hosts it may be filled on (1 to 50): the page must be on one of them
    allowed_hosts: List[str]


class ViewerUrlResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"expires_at", "session_id", "view_only", "viewer_url", "websocket_url"})
    session_id: str
    # sandboxd's own noVNC viewer page for the desktop (nothing of the VM's is served to it), its VNC
    # token in the fragment (`#token=…`); opens in any browser without other credentials while it is valid
    viewer_url: str
    # The VNC WebSocket (RFB over binary frames) the page connects to, for other VNC clients
    websocket_url: str
    # Input from this viewer is dropped by the server (not only hidden by the page)
    view_only: bool
    # Both URLs stop working then; a viewer connected by then stays connected
    expires_at: str


class DesktopRecording(Model):
    __slots__ = ()
    _required_keys = frozenset({"download_url", "duration_seconds", "error", "height", "recording_id", "saved_at", "session_id", "size_bytes", "started_at", "status", "stopped_at", "vm_id", "width"})
    # The id the desktop service gave it (`rec_…`)
    recording_id: str
    session_id: str
    vm_id: str
    # "saving" while the MP4 is copied from the VM into the object store, then "ready" (downloadable) or
    # "failed"
    status: Literal["saving", "ready", "failed"]
    duration_seconds: Optional[float]
    size_bytes: Optional[int]
    width: int
    height: int
    error: Optional[str]
    started_at: str
    stopped_at: str
    saved_at: Optional[str]
    # Where the MP4 downloads from once ready (same credentials as this API)
    download_url: Optional[str]


class DesktopRecordingList(Model):
    __slots__ = ()
    _required_keys = frozenset({"count", "recordings"})
    recordings: List[DesktopRecording]
    count: int


class SshKeyRecord(Model):
    __slots__ = ()
    _required_keys = frozenset({"created_at", "fingerprint", "id", "key_type", "last_used_at", "name", "public_key", "user_id"})
    id: int
    user_id: int
    # Your label for the key (default: the key's comment)
    name: str
    # e.g. ssh-ed25519, ecdsa-sha2-nistp256, ssh-rsa
    key_type: str
    # The key as one authorized_keys line, without the comment
    public_key: str
    # `SHA256:…`, as `ssh-keygen -l -E sha256 -f key.pub` prints it
    fingerprint: str
    created_at: str
    # Last login through the SSH gateway (minute precision)
    last_used_at: Optional[str]


class SshKeyCreateBody(Model):
    __slots__ = ()
    _required_keys = frozenset({"public_key"})
    # One line of a .pub file: ed25519, ECDSA or RSA (at least 2048 bits)
    public_key: str
    # A label; default the key's comment
    name: Optional[str]


class SshGatewayInfo(Model):
    __slots__ = ()
    _required_keys = frozenset({"enabled", "host", "host_key_fingerprint", "port", "usage"})
    # False when the server runs without its SSH gateway (SANDBOXD_SSH_LISTEN=off)
    enabled: bool
    # The host name to connect to
    host: Optional[str]
    port: Optional[int]
    # The gateway's host key, `SHA256:…`: compare it with what ssh shows at the first connection
    host_key_fingerprint: Optional[str]
    # How to log in
    usage: str


class DeploymentDrainRequest(TypedDict, total=False):
    # Why (kept in the log)
    reason: str


class GetHealthzResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"status"})
    status: Literal["ok"]


class GetReadyzResponseChecks(Model):
    """Each check of readiness and its result"""
    __slots__ = ()
    _required_keys = frozenset({"default_template", "store"})
    # The store answered a trivial query
    store: Literal["ok", "unreachable"]
    # The built-in template on this node: `ready` once the snapshots a first VM restores from are made;
    # `idle` before the engine was started (it starts on the first VM when the server was not told to warm
    # up), `building` while it prepares, `failed` when that failed (see the log). The warm pool's fill is
    # not checked
    default_template: Literal["idle", "building", "ready", "failed"]


class GetReadyzResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"checks", "status", "store"})
    status: Literal["ready"]
    # The store: sqlite or postgres
    store: str
    # Each check of readiness and its result
    checks: GetReadyzResponseChecks


class _PostV1AuthTokenRequestRequired(TypedDict):
    username: str
    password: str


class PostV1AuthTokenRequest(_PostV1AuthTokenRequestRequired, total=False):
    # Only "password" is supported
    grant_type: str
    scope: str
    client_id: str
    client_secret: str


class PostV1AuthTokenResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"access_token", "expires_in", "token_type"})
    access_token: str
    token_type: Literal["bearer"]
    # Seconds until the token expires
    expires_in: int


class GetV1AuthSessionResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"is_admin", "user_id", "username"})
    user_id: int
    username: str
    is_admin: bool
    # Send it in X-CSRF-Token with every request but GET and HEAD (also in the sandboxd_csrf cookie,
    # __Host-sandboxd_csrf over HTTPS); it is bound to this session
    csrf_token: Optional[str]
    # Seconds until the session ends
    expires_in: Optional[int]


class PostV1AuthSessionRequest(TypedDict, total=False):
    """A username and password, or an API key"""
    username: str
    password: str
    # Instead of username and password
    api_key: str


class PostV1AuthSessionResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"is_admin", "user_id", "username"})
    user_id: int
    username: str
    is_admin: bool
    # Send it in X-CSRF-Token with every request but GET and HEAD (also in the sandboxd_csrf cookie,
    # __Host-sandboxd_csrf over HTTPS); it is bound to this session
    csrf_token: Optional[str]
    # Seconds until the session ends
    expires_in: Optional[int]


GetV1ApiKeysResponse = List[ApiKeyRecord]


PostV1ApiKeysRequest = Optional[ApiKeyCreateBody]


PostV1ApiKeysResponse = ApiKeyRecord


GetV1ApiKeysItemIdResponse = ApiKeyRecord


class DeleteV1ApiKeysItemIdResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"deleted", "id", "message"})
    id: int
    deleted: Literal[True]
    message: str


PatchV1ApiKeysItemIdRequest = ApiKeyBody


PatchV1ApiKeysItemIdResponse = ApiKeyRecord


GetV1WebhooksEndpointsResponse = List[WebhookEndpoint]


class _PostV1WebhooksEndpointsRequestRequired(TypedDict):
    # http(s) URL that receives the events (POST)
    url: str


class PostV1WebhooksEndpointsRequest(_PostV1WebhooksEndpointsRequestRequired, total=False):
    # Default ["*"]: every event
    event_patterns: List[str]
    description: Optional[str]
    # Default true
    enabled: bool


PostV1WebhooksEndpointsResponse = WebhookEndpoint


GetV1WebhooksEndpointsEndpointIdResponse = WebhookEndpoint


class DeleteV1WebhooksEndpointsEndpointIdResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"deleted", "id", "message"})
    id: str
    deleted: Literal[True]
    message: str


class PatchV1WebhooksEndpointsEndpointIdRequest(TypedDict, total=False):
    # http(s) URL that receives the events (POST)
    url: str
    # Default ["*"]: every event
    event_patterns: List[str]
    description: Optional[str]
    # Default true
    enabled: bool


PatchV1WebhooksEndpointsEndpointIdResponse = WebhookEndpoint


PostV1WebhooksEndpointsEndpointIdRotateSecretResponse = WebhookSecretRotation


PostV1WebhooksEndpointsEndpointIdTestResponse = WebhookDelivery


class PostV1WebhooksEndpointsEndpointIdVerifyResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"challenge_echoed", "duration_ms", "endpoint_id", "error", "http_status", "verified"})
    endpoint_id: str
    # The receiver answered 2xx to the signed webhook.verify challenge
    verified: bool
    # The receiver's answer contained data.challenge
    challenge_echoed: bool
    http_status: Optional[int]
    error: Optional[str]
    duration_ms: int


GetV1WebhooksDeliveriesResponse = WebhookDeliveryList


class GetV1WebhooksDeliveriesDeliveryIdResponseAttemptsItem(Model):
    __slots__ = ()
    _required_keys = frozenset({"attempt", "duration_ms", "error", "http_status", "started_at", "succeeded"})
    attempt: int
    started_at: str
    duration_ms: int
    http_status: Optional[int]
    error: Optional[str]
    succeeded: bool


class GetV1WebhooksDeliveriesDeliveryIdResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"attempts", "created_at", "delivered_at", "endpoint_id", "error_message", "event_group", "event_id", "event_type", "final_http_status", "id", "last_attempt_at", "next_retry_at", "replay_of_delivery_id", "scheduled_attempt", "status", "updated_at", "user_id"})
    # wd_…
    id: str
    endpoint_id: str
    user_id: int
    # The event id: also the webhook-id header, the same on every retry and replay
    event_id: Optional[str]
    event_type: str
    # The event family: the part of event_type before the first dot
    event_group: Optional[str]
    status: Literal["pending", "delivering", "succeeded", "failed"]
    # The attempt due next while pending; the last attempt made once succeeded or failed
    scheduled_attempt: int
    # When the scheduled attempt is due; null once final
    next_retry_at: Optional[str]
    last_attempt_at: Optional[str]
    delivered_at: Optional[str]
    # The receiver's status in the last attempt; null when it did not answer
    final_http_status: Optional[int]
    error_message: Optional[str]
    # Set when the delivery replays another delivery
    replay_of_delivery_id: Optional[str]
    created_at: str
    updated_at: str
    # Every attempt made so far, oldest first
    attempts: List[GetV1WebhooksDeliveriesDeliveryIdResponseAttemptsItem]


PostV1WebhooksDeliveriesDeliveryIdReplayResponse = WebhookDelivery


GetV1AuditEventsResponse = AuditEventList


PostV1SessionsSessionRequest = Optional[SessionCreateRequest]


PostV1SessionsSessionResponse = SessionCreateResponse


GetV1SessionsSessionSessionIdResponse = Dict[str, Any]


GetV1SessionsStatusSessionIdResponse = SessionStatus


GetV1SessionsUsageSessionIdResponse = SessionUsage


GetV1SessionsSandboxesResponse = List[SandboxInfo]


GetV1VmsResponse = List[VmRecord]


class PostV1VmsRequestVolumesItem(TypedDict):
    volume_id: str
    # Where the guest mounts it: absolute and normalized, of letters, digits, ".", "_" and "-"; not /,
    # /opt, /root, /tmp, /var, nor at or below /bin, /boot, /dev, /etc, /lib, /lib32, /lib64,
    # /opt/sandboxd, /proc, /run, /sbin, /sys, /usr
    mount_path: str
    # Mount it read-only: writes fail, and other VMs may mount it read-only at the same time
    read_only: bool


class PostV1VmsRequest(TypedDict, total=False):
    # Bind the VM to this session of yours (it must have no running VM); default: a new session
    session_id: str
    # Seconds from spawn until the VM is killed
    vm_lifetime_seconds: int
    # Guest memory in MiB; the guest sees exactly this much
    memory_mb: int
    # vCPUs: 1, 2, 4, 6 or 8 (selects the snapshot variant snap1…snap8)
    vcpu_count: Literal[1, 2, 4, 6, 8]
    # Start VMs from your snapshot (or template) of this name; a snapshot fixes vCPUs and memory
    snapshot: str
    # Start VMs from the template (or snapshot) of this name; "default" is the built-in image
    template: str
    # Older name of `snapshot`
    snapshot_name: Any
    # A name for the VM (not unique)
    name: str
    # User-defined key/value pairs of the VM (and of the new session, when one is made)
    metadata: Dict[str, str]
    # Alternate image: build a template from it (POST /v1/templates) and pass `template`
    image: Any
    # Persistent volumes to mount (at most 4, at distinct paths). A volume mounted read-write by a VM that
    # has not ended cannot be mounted by another (409); they become the session's, mounted again in its
    # next VMs. A snapshot or clone unmounts them in the guest for its moment (409 naming the path if a
    # process keeps one busy) and holds none of them; a pause keeps them mounted.
    volumes: List[PostV1VmsRequestVolumesItem]
    # Private networks (your networks' names or ids) the VM joins at start, as do the session's next VMs
    # (see POST /v1/networks). Members reach each other over TCP at their addresses and at `<vm
    # name>.<network>.internal`; at most 253 per network
    networks: List[str]
    lifecycle_hooks: LifecycleHooksParams
    egress_policy: EgressPolicyInput
    # Your vaults whose secrets the VMs may use without holding them: each secret becomes an environment
    # variable holding a placeholder, swapped for the value only at the secret's injection point of HTTPS
    # requests to its allowed_hosts (see POST /v1/vaults)
    vault_ids: List[str]
    # Pause the VM after this many seconds of idleness (10 to 2592000; null: never); default: the
    # session's. The next request that needs it resumes it
    auto_pause: Optional[int]
    # `kill`: killed when its lifetime ends; `pause`: paused instead (resumed by its next use); default:
    # the session's
    on_expiry: Literal["kill", "pause"]
    api_key: str


PostV1VmsResponse = VmRecord


GetV1VmsVmIdResponse = VmRecord


class DeleteV1VmsVmIdResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"message", "session_id", "success", "vm_id"})
    success: bool
    # Names the killed VM
    message: str
    vm_id: str
    session_id: Optional[str]


class _PostV1VmsVmIdSnapshotRequestRequired(TypedDict):
    # Letters, digits, ".", "_" and "-", at most 63, starting with a letter or digit
    name: str


class PostV1VmsVmIdSnapshotRequest(_PostV1VmsVmIdSnapshotRequestRequired, total=False):
    # Key/value pairs of the snapshot
    metadata: Dict[str, str]


PostV1VmsVmIdSnapshotResponse = SnapshotRecord


class PostV1VmsVmIdCloneRequest(TypedDict, total=False):
    # Letters, digits, ".", "_" and "-", at most 63, starting with a letter or digit
    snapshot_name: str
    # How many clones (default 1)
    count: int


class PostV1VmsVmIdCloneResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"clones", "snapshot"})
    snapshot: SnapshotRecord
    clones: List[VmRecord]


class PostV1VmsVmIdPauseResponsePause(Model):
    __slots__ = ()
    _required_keys = frozenset({"disk_bytes", "duration_ms", "memory_bytes"})
    # How long pausing took (the VM was stopped from its start)
    duration_ms: int
    # Bytes its saved memory takes on disk
    memory_bytes: int
    # Bytes its disk layer takes
    disk_bytes: int


class PostV1VmsVmIdPauseResponse(VmRecord):
    __slots__ = ()
    _required_keys = frozenset({"pause"})
    pause: PostV1VmsVmIdPauseResponsePause


PostV1VmsVmIdResumeResponse = VmRecord


class PostV1VmsVmIdLifetimeRequest(TypedDict):
    # Seconds from now until the VM ends: 1 to 2592000 (30 days)
    lifetime_seconds: int


PostV1VmsVmIdLifetimeResponse = VmRecord


GetV1VmsVmIdEgressResponse = EgressPolicy


PutV1VmsVmIdEgressRequest = EgressPolicyInput


PutV1VmsVmIdEgressResponse = EgressPolicy


GetV1SessionsSessionIdEgressResponse = EgressPolicy


PutV1SessionsSessionIdEgressRequest = EgressPolicyInput


PutV1SessionsSessionIdEgressResponse = EgressPolicy


GetV1VmsVmIdEgressLogResponse = EgressLogList


GetV1VaultsResponse = List[Vault]


class _PostV1VaultsRequestRequired(TypedDict):
    # Unique among your vaults
    name: str


class PostV1VaultsRequest(_PostV1VaultsRequestRequired, total=False):
    description: Optional[str]
    secrets: List[VaultSecretInput]


PostV1VaultsResponse = Vault


GetV1VaultsVaultIdResponse = Vault


class PatchV1VaultsVaultIdRequest(TypedDict, total=False):
    name: str
    description: Optional[str]


PatchV1VaultsVaultIdResponse = Vault


class _PutV1VaultsVaultIdSecretsNameRequestRequired(TypedDict):
    # The new value; stored encrypted and never returned
    value: str
    # Hosts the value may be sent to over HTTPS: `api.example.com` or `*.example.com` (its subdomains)
    allowed_hosts: List[str]


class PutV1VaultsVaultIdSecretsNameRequest(_PutV1VaultsVaultIdSecretsNameRequestRequired, total=False):
    inject: VaultSecretInjectionParams


PutV1VaultsVaultIdSecretsNameResponse = VaultSecret


GetV1VaultsVaultIdRequestLogsResponse = VaultRequestLogList


GetV1SnapshotsResponse = List[SnapshotRecord]


PostV1SnapshotsRequest = TemplateCreateRequest


PostV1SnapshotsResponse = TemplateRecord


GetV1SnapshotsSnapshotIdResponse = SnapshotRecord


class DeleteV1SnapshotsSnapshotIdResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"deleted", "name", "snapshot_id"})
    deleted: bool
    snapshot_id: str
    name: str


class PostV1SnapshotsSnapshotIdCloneRequest(TypedDict, total=False):
    # How many clones (default 1)
    count: int


class PostV1SnapshotsSnapshotIdCloneResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"clones", "snapshot"})
    snapshot: SnapshotRecord
    clones: List[VmRecord]


GetV1VolumesResponse = List[VolumeRecord]


class _PostV1VolumesRequestRequired(TypedDict):
    # Unique among your volumes: letters, digits, ".", "_" and "-", at most 63, starting with a letter or
    # digit
    name: str


class PostV1VolumesRequest(_PostV1VolumesRequestRequired, total=False):
    # Size, GiB
    size_gb: int
    # Size, MiB
    size_mb: int


PostV1VolumesResponse = VolumeRecord


GetV1VolumesVolumeIdResponse = VolumeRecord


GetV1NetworksResponse = List[NetworkRecord]


class PostV1NetworksRequest(TypedDict):
    # Unique among your networks; a DNS label (a-z, 0-9 and "-"), since members are named `<vm
    # name>.<network>.internal`
    name: str


PostV1NetworksResponse = NetworkRecord


GetV1NetworksNetworkIdResponse = NetworkRecord


class PostV1NetworksNetworkIdMembersRequest(TypedDict):
    vm_id: str


PostV1NetworksNetworkIdMembersResponse = NetworkMemberRecord


GetV1TemplatesResponse = List[TemplateRecord]


PostV1TemplatesRequest = TemplateCreateRequest


PostV1TemplatesResponse = TemplateRecord


GetV1TemplatesTemplateIdResponse = TemplateRecord


GetV1TemplatesTemplateIdLogsResponse = TemplateLogResponse


PostExecuteRequest = ExecuteCommandRequest


PostExecuteResponse = ExecuteResponse


PostExecuteAsyncRequest = ExecuteCommandRequest


class PostExecuteAsyncResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"estimated_start_seconds", "execution_id", "queue_position", "session_id", "status", "task_id"})
    # Poll GET /v1/executions/{task_id} until is_complete
    task_id: int
    execution_id: int
    session_id: str
    status: Literal["queued", "running", "completed", "failed", "timeout"]
    # When the run waits for a new VM while the host restores others: VM starts ahead of it; null when its
    # VM is ready (or came from the warm pool)
    queue_position: Optional[int]
    # Expected wait for that VM, seconds; null with queue_position
    estimated_start_seconds: Optional[int]


PostV1ExecuteAsyncRequest = ExecuteCommandRequest


class PostV1ExecuteAsyncResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"estimated_start_seconds", "execution_id", "queue_position", "session_id", "status", "task_id"})
    # Poll GET /v1/executions/{task_id} until is_complete
    task_id: int
    execution_id: int
    session_id: str
    status: Literal["queued", "running", "completed", "failed", "timeout"]
    # When the run waits for a new VM while the host restores others: VM starts ahead of it; null when its
    # VM is ready (or came from the warm pool)
    queue_position: Optional[int]
    # Expected wait for that VM, seconds; null with queue_position
    estimated_start_seconds: Optional[int]


class _PostKillRequestRequired(TypedDict):
    session_id: str


class PostKillRequest(_PostKillRequestRequired, total=False):
    api_key: str


class PostKillResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"message", "session_id", "success", "vm_id"})
    success: bool
    # Names the killed VM
    message: str
    vm_id: str
    session_id: Optional[str]


GetV1ExecutionsResponse = List[TaskRecord]


GetV1ExecutionsItemIdResponse = TaskRecord


PostV1ExecutionsItemIdCancelResponse = TaskRecord


class _PostDownloadRequestRequired(TypedDict):
    # The file to read: a path in the VM (absolute, or relative to /root) of at most 4095 bytes once
    # resolved, each name at most 255 bytes, without NUL bytes
    filename: str
    session_id: str


class PostDownloadRequest(_PostDownloadRequestRequired, total=False):
    api_key: str


class PostDownloadResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"content", "filename", "path", "size"})
    # The file, base64
    content: str
    filename: str
    path: str
    size: int


GetV1SessionsSessionIdFilesResponse = FileListing


class DeleteV1SessionsSessionIdFilesResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"path", "removed"})
    # The path, absolute
    path: str
    removed: bool


GetV1SessionsSessionIdFilesStatResponse = FileEntry


class GetV1SessionsSessionIdFilesExistsResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"exists", "path"})
    # The path, absolute
    path: str
    exists: bool


class _PostV1SessionsSessionIdFilesMkdirRequestRequired(TypedDict):
    # The directory: a path in the VM (absolute, or relative to /root) of at most 4095 bytes once
    # resolved, each name at most 255 bytes, without NUL bytes
    path: str


class PostV1SessionsSessionIdFilesMkdirRequest(_PostV1SessionsSessionIdFilesMkdirRequestRequired, total=False):
    # Make missing parents too (default true)
    parents: bool


class PostV1SessionsSessionIdFilesMkdirResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"created", "path"})
    # The directory, absolute
    path: str
    created: bool


_PostV1SessionsSessionIdFilesRenameRequestRequired = TypedDict("_PostV1SessionsSessionIdFilesRenameRequestRequired", {"from": str, "to": str}, total=True)
class PostV1SessionsSessionIdFilesRenameRequest(_PostV1SessionsSessionIdFilesRenameRequestRequired, total=False):
    """"""
    overwrite: bool


PostV1SessionsSessionIdFilesRenameResponse = FileEntry


class _PostV1SessionsSessionIdFilesWriteRequestFilesItemRequired(TypedDict):
    # Where to write it: a path in the VM (absolute, or relative to /root) of at most 4095 bytes once
    # resolved, each name at most 255 bytes, without NUL bytes
    path: str


class PostV1SessionsSessionIdFilesWriteRequestFilesItem(_PostV1SessionsSessionIdFilesWriteRequestFilesItemRequired, total=False):
    # The contents as text (UTF-8)
    content: str
    # The contents as base64 (instead of content)
    content_base64: str
    # Permission bits (default 0o644 = 420)
    mode: int


class PostV1SessionsSessionIdFilesWriteRequest(TypedDict):
    files: List[PostV1SessionsSessionIdFilesWriteRequestFilesItem]


class PostV1SessionsSessionIdFilesWriteResponseFilesItem(Model):
    __slots__ = ()
    _required_keys = frozenset({"path", "size"})
    # Absolute
    path: str
    # Bytes written
    size: int


class PostV1SessionsSessionIdFilesWriteResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"files"})
    files: List[PostV1SessionsSessionIdFilesWriteResponseFilesItem]


GetV1SessionsSessionIdProcessesResponse = ProcessList


PostV1SessionsSessionIdProcessesRequest = ProcessStartRequest


PostV1SessionsSessionIdProcessesResponse = ProcessInfo


GetV1SessionsSessionIdProcessesProcessIdResponse = ProcessInfo


DeleteV1SessionsSessionIdProcessesProcessIdResponse = ProcessInfo


GetV1SessionsSessionIdProcessesProcessIdOutputResponse = ProcessOutputPage


class PostV1SessionsSessionIdProcessesProcessIdStdinRequest(TypedDict, total=False):
    # Text for stdin (UTF-8)
    data: str
    # Bytes for stdin, base64 (instead of data)
    data_base64: str
    # Close stdin after writing
    eof: bool


PostV1SessionsSessionIdProcessesProcessIdStdinResponse = ProcessInfo


class PostV1SessionsSessionIdProcessesProcessIdSignalRequest(TypedDict):
    # Sent to the program's process group
    signal: Literal["SIGINT", "SIGTERM", "SIGKILL", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGSTOP", "SIGCONT"]


PostV1SessionsSessionIdProcessesProcessIdSignalResponse = ProcessInfo


GetV1SessionsSessionIdContextsResponse = ContextList


PostV1SessionsSessionIdContextsRequest = ContextCreateRequest


PostV1SessionsSessionIdContextsResponse = ContextInfo


GetV1SessionsSessionIdContextsContextIdResponse = ContextInfo


PostV1SessionsSessionIdContextsContextIdRestartResponse = ContextInfo


GetV1UsageResponse = DailyUsageList


GetV1AdminUsersResponse = AdminUserList


class PatchV1AdminUsersUserIdRequest(TypedDict):
    # One of the plans GET /v1/admin/users lists
    plan: str


PatchV1AdminUsersUserIdResponse = AdminUser


GetV1AdminNodesResponse = AdminNodeList


GetV1AdminStorageResponse = AdminStorage


PostV1AdminStorageGcResponse = AdminStorageGc


PostApiCliAuthStartRequest = CLIAuthStartRequest


PostApiCliAuthStartResponse = CLIAuthStartResponse


PostApiCliAuthApproveRequest = CLIAuthApproveRequest


PostApiCliAuthApproveResponse = CLIAuthApproveResponse


PostApiCliAuthExchangeRequest = CLIAuthExchangeRequest


PostApiCliAuthExchangeResponse = CLIAuthExchangeResponse


GetV1SessionsAppUrlSessionIdResponse = AppUrlResponse


GetV1SharesResponse = ShareList


PostV1SharesRequest = ShareCreateRequest


PostV1SharesResponse = Share


GetV1SharesShareIdResponse = Share


DeleteV1SharesShareIdResponse = Share


GetV1AppsResponse = AppList


GetV1AppsAppResponse = AppRecord


GetV1AppsAppDeploymentsResponse = DeploymentList


GetV1AppsAppDeploymentsVersionResponse = DeploymentRecord


class PostV1AppsAppRollbackRequest(TypedDict, total=False):
    # A version of the app: 1, 2, …
    version: int


PostV1AppsAppRollbackResponse = AppDeploymentAccepted


PostV1AppsAppRestartResponse = AppDeploymentAccepted


GetV1SessionsSessionIdPtySessionsResponse = PtySessionList


PostV1SessionsSessionIdPtySessionsRequest = PtyCreateRequest


PostV1SessionsSessionIdPtySessionsResponse = PtySession


GetV1SessionsSessionIdPtySessionsPtyIdResponse = PtySession


DeleteV1SessionsSessionIdPtySessionsPtyIdResponse = PtySessionState


PostV1SessionsSessionIdPtySessionsPtyIdResizeRequest = PtyResizeRequest


PostV1SessionsSessionIdPtySessionsPtyIdResizeResponse = PtySessionState


GetV1VmsVmIdPtySessionsResponse = PtySessionList


PostV1VmsVmIdPtySessionsRequest = PtyCreateRequest


PostV1VmsVmIdPtySessionsResponse = PtySession


GetV1VmsVmIdPtySessionsPtyIdResponse = PtySession


DeleteV1VmsVmIdPtySessionsPtyIdResponse = PtySessionState


PostV1VmsVmIdPtySessionsPtyIdResizeRequest = PtyResizeRequest


PostV1VmsVmIdPtySessionsPtyIdResizeResponse = PtySessionState


GetV1CustomDomainsResponse = CustomDomainList


PostV1CustomDomainsRequest = CustomDomainCreateRequest


PostV1CustomDomainsResponse = CustomDomain


GetV1CustomDomainsTlsCheckResponse = CustomDomainTlsCheck


GetV1CustomDomainsDomainIdResponse = CustomDomain


DeleteV1CustomDomainsDomainIdResponse = CustomDomain


PostV1CustomDomainsDomainIdVerifyResponse = CustomDomain


GetV1BrowserSessionsResponse = BrowserSessionListResponse


PostV1BrowserSessionsRequest = BrowserSessionCreateRequest


PostV1BrowserSessionsResponse = BrowserSessionResponse


GetV1BrowserSessionsSessionIdResponse = BrowserSessionResponse


DeleteV1BrowserSessionsSessionIdResponse = BrowserSessionCloseResponse


GetV1BrowserCapabilitiesResponse = BrowserCapabilities


PostV1BrowserInteractionsNavigateRequest = BrowserNavigateRequest


PostV1BrowserInteractionsNavigateResponse = BrowserInteractionResponse


PostV1BrowserInteractionsClickRequest = BrowserClickRequest


PostV1BrowserInteractionsClickResponse = BrowserInteractionResponse


PostV1BrowserInteractionsTypeRequest = BrowserTypeRequest


PostV1BrowserInteractionsTypeResponse = BrowserInteractionResponse


PostV1BrowserInteractionsFillRequest = BrowserFillRequest


PostV1BrowserInteractionsFillResponse = BrowserInteractionResponse


PostV1BrowserInteractionsScrollRequest = BrowserScrollRequest


PostV1BrowserInteractionsScrollResponse = BrowserInteractionResponse


PostV1BrowserInteractionsWaitRequest = BrowserWaitRequest


PostV1BrowserInteractionsWaitResponse = BrowserInteractionResponse


PostV1BrowserInteractionsHoverRequest = BrowserTargetRequest


PostV1BrowserInteractionsHoverResponse = BrowserInteractionResponse


PostV1BrowserInteractionsKeypressRequest = BrowserKeyPressRequest


PostV1BrowserInteractionsKeypressResponse = BrowserInteractionResponse


PostV1BrowserInteractionsScreenshotRequest = BrowserScreenshotRequest


PostV1BrowserInteractionsScreenshotResponse = BrowserScreenshotResponse


PostV1BrowserInteractionsExtractRequest = BrowserExtractRequest


PostV1BrowserInteractionsExtractResponse = BrowserExtractResponse


PostV1BrowserInteractionsContentRequest = BrowserContentRequest


PostV1BrowserInteractionsContentResponse = BrowserContentResponse


PostV1BrowserInteractionsFillCredentialRequest = BrowserFillCredentialRequest


PostV1BrowserInteractionsFillCredentialResponse = BrowserInteractionResponse


PostV1BrowserRenderRequest = BrowserRenderRequest


PostV1BrowserRenderResponse = BrowserRenderResponse


GetV1BrowserUsageResponse = BrowserUsageSummary


GetV1BrowserUsageHistoryResponse = BrowserUsageHistory


GetV1BrowserScreenshotUsageIdResponse = BrowserStoredScreenshot


PostV1BrowserAuthTestRequest = Optional[BrowserAuthTestRequest]


PostV1BrowserAuthTestResponse = BrowserAuthTestResponse


GetV1BrowserCredentialsResponse = BrowserCredentialList


PostV1BrowserCredentialsRequest = BrowserCredentialCreateRequest


PostV1BrowserCredentialsResponse = BrowserCredentialRecord


GetV1BrowserCredentialsCredentialIdResponse = BrowserCredentialRecord


PatchV1BrowserCredentialsCredentialIdRequest = BrowserCredentialUpdateRequest


PatchV1BrowserCredentialsCredentialIdResponse = BrowserCredentialRecord


GetV1ComputeruseSessionIdViewerUrlResponse = ViewerUrlResponse


GetV1SessionsSessionIdRecordingsResponse = DesktopRecordingList


GetV1SessionsSessionIdRecordingsRecordingIdResponse = DesktopRecording


DeleteV1SessionsSessionIdRecordingsRecordingIdResponse = DesktopRecording


class PostMcpRequestVariant1(TypedDict, total=False):
    """A JSON-RPC 2.0 request (with its "id") or notification"""
    # Always "2.0"
    jsonrpc: str
    # initialize, tools/list, tools/call, resources/list, resources/templates/list, resources/read, ping,
    # notifications/…
    method: str
    # The method's parameters, as the MCP specification defines them
    params: Dict[str, Any]


class PostMcpRequestVariant2Item(TypedDict, total=False):
    """A JSON-RPC 2.0 request (with its "id") or notification"""
    # Always "2.0"
    jsonrpc: str
    # initialize, tools/list, tools/call, resources/list, resources/templates/list, resources/read, ping,
    # notifications/…
    method: str
    # The method's parameters, as the MCP specification defines them
    params: Dict[str, Any]


PostMcpRequest = Union[PostMcpRequestVariant1, List[PostMcpRequestVariant2Item]]


GetV1SshKeysResponse = List[SshKeyRecord]


class _PostV1SshKeysRequestRequired(TypedDict):
    # One line of a .pub file: ed25519, ECDSA or RSA (at least 2048 bits)
    public_key: str


class PostV1SshKeysRequest(_PostV1SshKeysRequestRequired, total=False):
    # A label; default the key's comment
    name: Optional[str]


PostV1SshKeysResponse = SshKeyRecord


GetV1SshKeysKeyIdResponse = SshKeyRecord


GetV1SshInfoResponse = SshGatewayInfo


PostWorkersWorkerIdDrainResponse = Dict[str, Any]


PostWorkersWorkerIdUndrainResponse = Dict[str, Any]


PostWorkersWorkerIdDeploymentDrainActionRequest = DeploymentDrainRequest


PostWorkersWorkerIdDeploymentDrainActionResponse = Dict[str, Any]


class PostUploadResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"message", "path", "recursive", "session_id", "size", "success", "vm_id"})
    success: bool
    message: str
    # Absolute path in the VM
    path: str
    # Bytes written (null for an unpacked archive)
    size: Optional[int]
    recursive: bool
    session_id: str
    vm_id: str


class PostV1UploadResponse(Model):
    __slots__ = ()
    _required_keys = frozenset({"message", "path", "recursive", "session_id", "size", "success", "vm_id"})
    success: bool
    message: str
    # Absolute path in the VM
    path: str
    # Bytes written (null for an unpacked archive)
    size: Optional[int]
    recursive: bool
    session_id: str
    vm_id: str


PostV1AppsDeploymentsResponse = AppDeploymentAccepted


# Every operation of the document: (JSON request body type, JSON answer type), by name.
OPERATIONS: Dict[str, Tuple[Optional[str], Optional[str]]] = {
    "GET /healthz": (None, "GetHealthzResponse"),
    "GET /readyz": (None, "GetReadyzResponse"),
    "POST /v1/auth/token": ("PostV1AuthTokenRequest", "PostV1AuthTokenResponse"),
    "GET /v1/auth/session": (None, "GetV1AuthSessionResponse"),
    "POST /v1/auth/session": ("PostV1AuthSessionRequest", "PostV1AuthSessionResponse"),
    "DELETE /v1/auth/session": (None, None),
    "GET /v1/api-keys/": (None, "GetV1ApiKeysResponse"),
    "POST /v1/api-keys/": ("PostV1ApiKeysRequest", "PostV1ApiKeysResponse"),
    "HEAD /v1/api-keys/": (None, None),
    "GET /v1/api-keys/{item_id}": (None, "GetV1ApiKeysItemIdResponse"),
    "DELETE /v1/api-keys/{item_id}": (None, "DeleteV1ApiKeysItemIdResponse"),
    "PATCH /v1/api-keys/{item_id}": ("PatchV1ApiKeysItemIdRequest", "PatchV1ApiKeysItemIdResponse"),
    "GET /v1/webhooks/endpoints": (None, "GetV1WebhooksEndpointsResponse"),
    "POST /v1/webhooks/endpoints": ("PostV1WebhooksEndpointsRequest", "PostV1WebhooksEndpointsResponse"),
    "GET /v1/webhooks/endpoints/{endpoint_id}": (None, "GetV1WebhooksEndpointsEndpointIdResponse"),
    "DELETE /v1/webhooks/endpoints/{endpoint_id}": (None, "DeleteV1WebhooksEndpointsEndpointIdResponse"),
    "PATCH /v1/webhooks/endpoints/{endpoint_id}": ("PatchV1WebhooksEndpointsEndpointIdRequest", "PatchV1WebhooksEndpointsEndpointIdResponse"),
    "POST /v1/webhooks/endpoints/{endpoint_id}/rotate-secret": (None, "PostV1WebhooksEndpointsEndpointIdRotateSecretResponse"),
    "POST /v1/webhooks/endpoints/{endpoint_id}/test": (None, "PostV1WebhooksEndpointsEndpointIdTestResponse"),
    "POST /v1/webhooks/endpoints/{endpoint_id}/verify": (None, "PostV1WebhooksEndpointsEndpointIdVerifyResponse"),
    "GET /v1/webhooks/deliveries": (None, "GetV1WebhooksDeliveriesResponse"),
    "GET /v1/webhooks/deliveries/{delivery_id}": (None, "GetV1WebhooksDeliveriesDeliveryIdResponse"),
    "POST /v1/webhooks/deliveries/{delivery_id}/replay": (None, "PostV1WebhooksDeliveriesDeliveryIdReplayResponse"),
    "GET /v1/audit/events": (None, "GetV1AuditEventsResponse"),
    "GET /v1/events/stream": (None, None),
    "POST /v1/sessions/session": ("PostV1SessionsSessionRequest", "PostV1SessionsSessionResponse"),
    "GET /v1/sessions/session/{session_id}": (None, "GetV1SessionsSessionSessionIdResponse"),
    "GET /v1/sessions/status/{session_id}": (None, "GetV1SessionsStatusSessionIdResponse"),
    "GET /v1/sessions/usage/{session_id}": (None, "GetV1SessionsUsageSessionIdResponse"),
    "GET /v1/sessions/sandboxes": (None, "GetV1SessionsSandboxesResponse"),
    "GET /v1/vms": (None, "GetV1VmsResponse"),
    "POST /v1/vms": ("PostV1VmsRequest", "PostV1VmsResponse"),
    "GET /v1/vms/{vm_id}": (None, "GetV1VmsVmIdResponse"),
    "DELETE /v1/vms/{vm_id}": (None, "DeleteV1VmsVmIdResponse"),
    "POST /v1/vms/{vm_id}/snapshot": ("PostV1VmsVmIdSnapshotRequest", "PostV1VmsVmIdSnapshotResponse"),
    "POST /v1/vms/{vm_id}/clone": ("PostV1VmsVmIdCloneRequest", "PostV1VmsVmIdCloneResponse"),
    "POST /v1/vms/{vm_id}/pause": (None, "PostV1VmsVmIdPauseResponse"),
    "POST /v1/vms/{vm_id}/resume": (None, "PostV1VmsVmIdResumeResponse"),
    "POST /v1/vms/{vm_id}/lifetime": ("PostV1VmsVmIdLifetimeRequest", "PostV1VmsVmIdLifetimeResponse"),
    "GET /v1/vms/{vm_id}/egress": (None, "GetV1VmsVmIdEgressResponse"),
    "PUT /v1/vms/{vm_id}/egress": ("PutV1VmsVmIdEgressRequest", "PutV1VmsVmIdEgressResponse"),
    "GET /v1/sessions/{session_id}/egress": (None, "GetV1SessionsSessionIdEgressResponse"),
    "PUT /v1/sessions/{session_id}/egress": ("PutV1SessionsSessionIdEgressRequest", "PutV1SessionsSessionIdEgressResponse"),
    "GET /v1/vms/{vm_id}/egress/log": (None, "GetV1VmsVmIdEgressLogResponse"),
    "GET /v1/vaults": (None, "GetV1VaultsResponse"),
    "POST /v1/vaults": ("PostV1VaultsRequest", "PostV1VaultsResponse"),
    "GET /v1/vaults/{vault_id}": (None, "GetV1VaultsVaultIdResponse"),
    "DELETE /v1/vaults/{vault_id}": (None, None),
    "PATCH /v1/vaults/{vault_id}": ("PatchV1VaultsVaultIdRequest", "PatchV1VaultsVaultIdResponse"),
    "PUT /v1/vaults/{vault_id}/secrets/{name}": ("PutV1VaultsVaultIdSecretsNameRequest", "PutV1VaultsVaultIdSecretsNameResponse"),
    "DELETE /v1/vaults/{vault_id}/secrets/{name}": (None, None),
    "GET /v1/vaults/{vault_id}/request-logs": (None, "GetV1VaultsVaultIdRequestLogsResponse"),
    "GET /v1/snapshots": (None, "GetV1SnapshotsResponse"),
    "POST /v1/snapshots": ("PostV1SnapshotsRequest", "PostV1SnapshotsResponse"),
    "GET /v1/snapshots/{snapshot_id}": (None, "GetV1SnapshotsSnapshotIdResponse"),
    "DELETE /v1/snapshots/{snapshot_id}": (None, "DeleteV1SnapshotsSnapshotIdResponse"),
    "POST /v1/snapshots/{snapshot_id}/clone": ("PostV1SnapshotsSnapshotIdCloneRequest", "PostV1SnapshotsSnapshotIdCloneResponse"),
    "GET /v1/volumes": (None, "GetV1VolumesResponse"),
    "POST /v1/volumes": ("PostV1VolumesRequest", "PostV1VolumesResponse"),
    "GET /v1/volumes/{volume_id}": (None, "GetV1VolumesVolumeIdResponse"),
    "DELETE /v1/volumes/{volume_id}": (None, None),
    "GET /v1/networks": (None, "GetV1NetworksResponse"),
    "POST /v1/networks": ("PostV1NetworksRequest", "PostV1NetworksResponse"),
    "GET /v1/networks/{network_id}": (None, "GetV1NetworksNetworkIdResponse"),
    "DELETE /v1/networks/{network_id}": (None, None),
    "POST /v1/networks/{network_id}/members": ("PostV1NetworksNetworkIdMembersRequest", "PostV1NetworksNetworkIdMembersResponse"),
    "DELETE /v1/networks/{network_id}/members/{vm_id}": (None, None),
    "GET /v1/templates": (None, "GetV1TemplatesResponse"),
    "POST /v1/templates": ("PostV1TemplatesRequest", "PostV1TemplatesResponse"),
    "GET /v1/templates/{template_id}": (None, "GetV1TemplatesTemplateIdResponse"),
    "DELETE /v1/templates/{template_id}": (None, None),
    "GET /v1/templates/{template_id}/logs": (None, "GetV1TemplatesTemplateIdLogsResponse"),
    "POST /execute": ("PostExecuteRequest", "PostExecuteResponse"),
    "POST /execute_async": ("PostExecuteAsyncRequest", "PostExecuteAsyncResponse"),
    "POST /v1/execute_async": ("PostV1ExecuteAsyncRequest", "PostV1ExecuteAsyncResponse"),
    "POST /kill": ("PostKillRequest", "PostKillResponse"),
    "GET /v1/executions/": (None, "GetV1ExecutionsResponse"),
    "HEAD /v1/executions/": (None, None),
    "GET /v1/executions/{item_id}": (None, "GetV1ExecutionsItemIdResponse"),
    "POST /v1/executions/{item_id}/cancel": (None, "PostV1ExecutionsItemIdCancelResponse"),
    "POST /download": ("PostDownloadRequest", "PostDownloadResponse"),
    "GET /v1/sessions/{session_id}/files": (None, "GetV1SessionsSessionIdFilesResponse"),
    "DELETE /v1/sessions/{session_id}/files": (None, "DeleteV1SessionsSessionIdFilesResponse"),
    "GET /v1/sessions/{session_id}/files/stat": (None, "GetV1SessionsSessionIdFilesStatResponse"),
    "GET /v1/sessions/{session_id}/files/exists": (None, "GetV1SessionsSessionIdFilesExistsResponse"),
    "POST /v1/sessions/{session_id}/files/mkdir": ("PostV1SessionsSessionIdFilesMkdirRequest", "PostV1SessionsSessionIdFilesMkdirResponse"),
    "POST /v1/sessions/{session_id}/files/rename": ("PostV1SessionsSessionIdFilesRenameRequest", "PostV1SessionsSessionIdFilesRenameResponse"),
    "POST /v1/sessions/{session_id}/files/write": ("PostV1SessionsSessionIdFilesWriteRequest", "PostV1SessionsSessionIdFilesWriteResponse"),
    "GET /v1/sessions/{session_id}/files/watch": (None, None),
    "GET /v1/sessions/{session_id}/processes": (None, "GetV1SessionsSessionIdProcessesResponse"),
    "POST /v1/sessions/{session_id}/processes": ("PostV1SessionsSessionIdProcessesRequest", "PostV1SessionsSessionIdProcessesResponse"),
    "GET /v1/sessions/{session_id}/processes/{process_id}": (None, "GetV1SessionsSessionIdProcessesProcessIdResponse"),
    "DELETE /v1/sessions/{session_id}/processes/{process_id}": (None, "DeleteV1SessionsSessionIdProcessesProcessIdResponse"),
    "GET /v1/sessions/{session_id}/processes/{process_id}/output": (None, "GetV1SessionsSessionIdProcessesProcessIdOutputResponse"),
    "POST /v1/sessions/{session_id}/processes/{process_id}/stdin": ("PostV1SessionsSessionIdProcessesProcessIdStdinRequest", "PostV1SessionsSessionIdProcessesProcessIdStdinResponse"),
    "POST /v1/sessions/{session_id}/processes/{process_id}/signal": ("PostV1SessionsSessionIdProcessesProcessIdSignalRequest", "PostV1SessionsSessionIdProcessesProcessIdSignalResponse"),
    "GET /v1/sessions/{session_id}/contexts": (None, "GetV1SessionsSessionIdContextsResponse"),
    "POST /v1/sessions/{session_id}/contexts": ("PostV1SessionsSessionIdContextsRequest", "PostV1SessionsSessionIdContextsResponse"),
    "GET /v1/sessions/{session_id}/contexts/{context_id}": (None, "GetV1SessionsSessionIdContextsContextIdResponse"),
    "DELETE /v1/sessions/{session_id}/contexts/{context_id}": (None, None),
    "POST /v1/sessions/{session_id}/contexts/{context_id}/restart": (None, "PostV1SessionsSessionIdContextsContextIdRestartResponse"),
    "GET /v1/usage": (None, "GetV1UsageResponse"),
    "GET /v1/admin/users": (None, "GetV1AdminUsersResponse"),
    "PATCH /v1/admin/users/{user_id}": ("PatchV1AdminUsersUserIdRequest", "PatchV1AdminUsersUserIdResponse"),
    "GET /v1/admin/nodes": (None, "GetV1AdminNodesResponse"),
    "GET /v1/admin/storage": (None, "GetV1AdminStorageResponse"),
    "POST /v1/admin/storage/gc": (None, "PostV1AdminStorageGcResponse"),
    "POST /api/cli-auth/start": ("PostApiCliAuthStartRequest", "PostApiCliAuthStartResponse"),
    "POST /api/cli-auth/approve": ("PostApiCliAuthApproveRequest", "PostApiCliAuthApproveResponse"),
    "POST /api/cli-auth/exchange": ("PostApiCliAuthExchangeRequest", "PostApiCliAuthExchangeResponse"),
    "GET /v1/sessions/app-url/{session_id}": (None, "GetV1SessionsAppUrlSessionIdResponse"),
    "GET /v1/shares": (None, "GetV1SharesResponse"),
    "POST /v1/shares": ("PostV1SharesRequest", "PostV1SharesResponse"),
    "GET /v1/shares/{share_id}": (None, "GetV1SharesShareIdResponse"),
    "DELETE /v1/shares/{share_id}": (None, "DeleteV1SharesShareIdResponse"),
    "GET /v1/apps": (None, "GetV1AppsResponse"),
    "GET /v1/apps/{app}": (None, "GetV1AppsAppResponse"),
    "DELETE /v1/apps/{app}": (None, None),
    "GET /v1/apps/{app}/deployments": (None, "GetV1AppsAppDeploymentsResponse"),
    "GET /v1/apps/{app}/deployments/{version}": (None, "GetV1AppsAppDeploymentsVersionResponse"),
    "GET /v1/apps/{app}/deployments/{version}/logs": (None, None),
    "GET /v1/apps/{app}/logs": (None, None),
    "POST /v1/apps/{app}/rollback": ("PostV1AppsAppRollbackRequest", "PostV1AppsAppRollbackResponse"),
    "POST /v1/apps/{app}/restart": (None, "PostV1AppsAppRestartResponse"),
    "GET /v1/sessions/{session_id}/pty/sessions": (None, "GetV1SessionsSessionIdPtySessionsResponse"),
    "POST /v1/sessions/{session_id}/pty/sessions": ("PostV1SessionsSessionIdPtySessionsRequest", "PostV1SessionsSessionIdPtySessionsResponse"),
    "GET /v1/sessions/{session_id}/pty/sessions/{pty_id}": (None, "GetV1SessionsSessionIdPtySessionsPtyIdResponse"),
    "DELETE /v1/sessions/{session_id}/pty/sessions/{pty_id}": (None, "DeleteV1SessionsSessionIdPtySessionsPtyIdResponse"),
    "GET /v1/sessions/{session_id}/pty/sessions/{pty_id}/connect": (None, None),
    "POST /v1/sessions/{session_id}/pty/sessions/{pty_id}/resize": ("PostV1SessionsSessionIdPtySessionsPtyIdResizeRequest", "PostV1SessionsSessionIdPtySessionsPtyIdResizeResponse"),
    "GET /v1/vms/{vm_id}/pty/sessions": (None, "GetV1VmsVmIdPtySessionsResponse"),
    "POST /v1/vms/{vm_id}/pty/sessions": ("PostV1VmsVmIdPtySessionsRequest", "PostV1VmsVmIdPtySessionsResponse"),
    "GET /v1/vms/{vm_id}/pty/sessions/{pty_id}": (None, "GetV1VmsVmIdPtySessionsPtyIdResponse"),
    "DELETE /v1/vms/{vm_id}/pty/sessions/{pty_id}": (None, "DeleteV1VmsVmIdPtySessionsPtyIdResponse"),
    "GET /v1/vms/{vm_id}/pty/sessions/{pty_id}/connect": (None, None),
    "POST /v1/vms/{vm_id}/pty/sessions/{pty_id}/resize": ("PostV1VmsVmIdPtySessionsPtyIdResizeRequest", "PostV1VmsVmIdPtySessionsPtyIdResizeResponse"),
    "GET /v1/custom-domains": (None, "GetV1CustomDomainsResponse"),
    "POST /v1/custom-domains": ("PostV1CustomDomainsRequest", "PostV1CustomDomainsResponse"),
    "GET /v1/custom-domains/tls-check": (None, "GetV1CustomDomainsTlsCheckResponse"),
    "GET /v1/custom-domains/{domain_id}": (None, "GetV1CustomDomainsDomainIdResponse"),
    "DELETE /v1/custom-domains/{domain_id}": (None, "DeleteV1CustomDomainsDomainIdResponse"),
    "POST /v1/custom-domains/{domain_id}/verify": (None, "PostV1CustomDomainsDomainIdVerifyResponse"),
    "GET /v1/browser/sessions/": (None, "GetV1BrowserSessionsResponse"),
    "POST /v1/browser/sessions/": ("PostV1BrowserSessionsRequest", "PostV1BrowserSessionsResponse"),
    "GET /v1/browser/sessions/{session_id}": (None, "GetV1BrowserSessionsSessionIdResponse"),
    "DELETE /v1/browser/sessions/{session_id}": (None, "DeleteV1BrowserSessionsSessionIdResponse"),
    "GET /v1/browser/capabilities": (None, "GetV1BrowserCapabilitiesResponse"),
    "POST /v1/browser/interactions/navigate": ("PostV1BrowserInteractionsNavigateRequest", "PostV1BrowserInteractionsNavigateResponse"),
    "POST /v1/browser/interactions/click": ("PostV1BrowserInteractionsClickRequest", "PostV1BrowserInteractionsClickResponse"),
    "POST /v1/browser/interactions/type": ("PostV1BrowserInteractionsTypeRequest", "PostV1BrowserInteractionsTypeResponse"),
    "POST /v1/browser/interactions/fill": ("PostV1BrowserInteractionsFillRequest", "PostV1BrowserInteractionsFillResponse"),
    "POST /v1/browser/interactions/scroll": ("PostV1BrowserInteractionsScrollRequest", "PostV1BrowserInteractionsScrollResponse"),
    "POST /v1/browser/interactions/wait": ("PostV1BrowserInteractionsWaitRequest", "PostV1BrowserInteractionsWaitResponse"),
    "POST /v1/browser/interactions/hover": ("PostV1BrowserInteractionsHoverRequest", "PostV1BrowserInteractionsHoverResponse"),
    "POST /v1/browser/interactions/keypress": ("PostV1BrowserInteractionsKeypressRequest", "PostV1BrowserInteractionsKeypressResponse"),
    "POST /v1/browser/interactions/screenshot": ("PostV1BrowserInteractionsScreenshotRequest", "PostV1BrowserInteractionsScreenshotResponse"),
    "POST /v1/browser/interactions/extract": ("PostV1BrowserInteractionsExtractRequest", "PostV1BrowserInteractionsExtractResponse"),
    "POST /v1/browser/interactions/content": ("PostV1BrowserInteractionsContentRequest", "PostV1BrowserInteractionsContentResponse"),
    "POST /v1/browser/interactions/fill-credential": ("PostV1BrowserInteractionsFillCredentialRequest", "PostV1BrowserInteractionsFillCredentialResponse"),
    "POST /v1/browser/render": ("PostV1BrowserRenderRequest", "PostV1BrowserRenderResponse"),
    "GET /v1/browser/usage": (None, "GetV1BrowserUsageResponse"),
    "GET /v1/browser/usage/history": (None, "GetV1BrowserUsageHistoryResponse"),
    "GET /v1/browser/screenshot/{usage_id}": (None, "GetV1BrowserScreenshotUsageIdResponse"),
    "POST /v1/browser/auth/test": ("PostV1BrowserAuthTestRequest", "PostV1BrowserAuthTestResponse"),
    "GET /v1/browser/credentials": (None, "GetV1BrowserCredentialsResponse"),
    "POST /v1/browser/credentials": ("PostV1BrowserCredentialsRequest", "PostV1BrowserCredentialsResponse"),
    "GET /v1/browser/credentials/{credential_id}": (None, "GetV1BrowserCredentialsCredentialIdResponse"),
    "DELETE /v1/browser/credentials/{credential_id}": (None, None),
    "PATCH /v1/browser/credentials/{credential_id}": ("PatchV1BrowserCredentialsCredentialIdRequest", "PatchV1BrowserCredentialsCredentialIdResponse"),
    "GET /v1/computeruse/{session_id}/viewer-url": (None, "GetV1ComputeruseSessionIdViewerUrlResponse"),
    "GET /v1/computeruse/{session_id}/vnc/websockify": (None, None),
    "GET /v1/sessions/{session_id}/recordings": (None, "GetV1SessionsSessionIdRecordingsResponse"),
    "GET /v1/sessions/{session_id}/recordings/{recording_id}": (None, "GetV1SessionsSessionIdRecordingsRecordingIdResponse"),
    "DELETE /v1/sessions/{session_id}/recordings/{recording_id}": (None, "DeleteV1SessionsSessionIdRecordingsRecordingIdResponse"),
    "GET /v1/sessions/{session_id}/recordings/{recording_id}/download": (None, None),
    "GET /mcp": (None, None),
    "POST /mcp": ("PostMcpRequest", None),
    "DELETE /mcp": (None, None),
    "GET /v1/ssh-keys": (None, "GetV1SshKeysResponse"),
    "POST /v1/ssh-keys": ("PostV1SshKeysRequest", "PostV1SshKeysResponse"),
    "GET /v1/ssh-keys/{key_id}": (None, "GetV1SshKeysKeyIdResponse"),
    "DELETE /v1/ssh-keys/{key_id}": (None, None),
    "GET /v1/ssh/info": (None, "GetV1SshInfoResponse"),
    "POST /workers/{worker_id}/drain": (None, "PostWorkersWorkerIdDrainResponse"),
    "POST /workers/{worker_id}/undrain": (None, "PostWorkersWorkerIdUndrainResponse"),
    "POST /workers/{worker_id}/deployment-drain/{action}": ("PostWorkersWorkerIdDeploymentDrainActionRequest", "PostWorkersWorkerIdDeploymentDrainActionResponse"),
    "POST /upload": (None, "PostUploadResponse"),
    "POST /v1/upload": (None, "PostV1UploadResponse"),
    "POST /v1/apps/deployments": (None, "PostV1AppsDeploymentsResponse"),
    "GET /v1/app/{session_id}/{port}": (None, None),
    "PUT /v1/app/{session_id}/{port}": (None, None),
    "POST /v1/app/{session_id}/{port}": (None, None),
    "DELETE /v1/app/{session_id}/{port}": (None, None),
    "PATCH /v1/app/{session_id}/{port}": (None, None),
    "HEAD /v1/app/{session_id}/{port}": (None, None),
    "OPTIONS /v1/app/{session_id}/{port}": (None, None),
    "GET /v1/app/{session_id}/{port}/{path}": (None, None),
    "PUT /v1/app/{session_id}/{port}/{path}": (None, None),
    "POST /v1/app/{session_id}/{port}/{path}": (None, None),
    "DELETE /v1/app/{session_id}/{port}/{path}": (None, None),
    "PATCH /v1/app/{session_id}/{port}/{path}": (None, None),
    "HEAD /v1/app/{session_id}/{port}/{path}": (None, None),
    "OPTIONS /v1/app/{session_id}/{port}/{path}": (None, None),
    "GET /v1/computeruse/{session_id}/{path}": (None, None),
    "PUT /v1/computeruse/{session_id}/{path}": (None, None),
    "POST /v1/computeruse/{session_id}/{path}": (None, None),
    "DELETE /v1/computeruse/{session_id}/{path}": (None, None),
    "PATCH /v1/computeruse/{session_id}/{path}": (None, None),
    "HEAD /v1/computeruse/{session_id}/{path}": (None, None),
    "OPTIONS /v1/computeruse/{session_id}/{path}": (None, None),
}
