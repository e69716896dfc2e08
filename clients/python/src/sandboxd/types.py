"""Friendly names for the records the client returns (the TypeScript client's ``api-types.ts``), over the
classes generated from the served OpenAPI document in ``models.py``."""

from __future__ import annotations

from typing import Literal

from .models import (
    AppUrlResponse,
    BrowserAuthTestResponse,
    BrowserCapabilities,
    BrowserContentResponse,
    BrowserCredentialRecord,
    BrowserExtractResponse,
    BrowserInteractionResponse,
    BrowserRenderResponse,
    BrowserScreenshotResponse,
    BrowserSessionCloseResponse,
    BrowserSessionResponse,
    BrowserStoredScreenshot,
    BrowserUsageHistory,
    BrowserUsageSummary,
    DeleteV1ApiKeysItemIdResponse,
    DeleteV1SnapshotsSnapshotIdResponse,
    DeleteV1VmsVmIdResponse,
    DeleteV1WebhooksEndpointsEndpointIdResponse,
    DesktopRecording,
    ExecuteResponse,
    GetHealthzResponse,
    GetV1SessionsSessionSessionIdResponse,
    GetV1WebhooksDeliveriesDeliveryIdResponse,
    PostKillResponse,
    PostUploadResponse,
    PostV1AuthTokenResponse,
    PostV1ExecuteAsyncResponse,
    PostV1SessionsSessionIdFilesWriteResponseFilesItem,
    PostV1SnapshotsSnapshotIdCloneResponse,
    PostV1VmsVmIdCloneResponse,
    PostV1VmsVmIdPauseResponse,
    PostV1WebhooksEndpointsEndpointIdVerifyResponse,
    TaskRecord,
    TemplateLogResponse,
    ViewerUrlResponse,
)

__all__ = [
    "Language",
    "ExecuteResult",
    "ExecutionRecord",
    "KillResult",
    "UploadResult",
    "AsyncExecuteResponse",
    "SessionDetails",
    "AppUrl",
    "VmPauseResult",
    "VmDeleteResult",
    "CloneResult",
    "SnapshotCloneResult",
    "SnapshotDeleteResult",
    "TokenResponse",
    "ApiKeyDeleteResult",
    "WebhookEndpointDeleteResult",
    "WebhookDeliveryDetails",
    "WebhookVerification",
    "TemplateLog",
    "HealthStatus",
    "BrowserSessionInfo",
    "BrowserSessionClosed",
    "BrowserInteractionResult",
    "BrowserScreenshotResult",
    "BrowserExtractResult",
    "BrowserContentResult",
    "BrowserRenderResult",
    "BrowserAuthTestResult",
    "BrowserCredential",
    "BrowserCapabilities",
    "BrowserUsageSummary",
    "BrowserUsageHistory",
    "BrowserStoredScreenshot",
    "ViewerUrl",
    "SavedRecording",
    "ProcessSignal",
    "WrittenFile",
]

#: ``python`` (a stateful interpreter per session), ``bash`` or ``node`` (a fresh process each call).
Language = Literal["python", "bash", "node"]

#: The signals ``processes.signal`` sends (to the program's process group).
ProcessSignal = Literal["SIGINT", "SIGTERM", "SIGKILL", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGSTOP", "SIGCONT"]

ExecuteResult = ExecuteResponse
ExecutionRecord = TaskRecord
KillResult = PostKillResponse
UploadResult = PostUploadResponse
AsyncExecuteResponse = PostV1ExecuteAsyncResponse
SessionDetails = GetV1SessionsSessionSessionIdResponse
AppUrl = AppUrlResponse
VmPauseResult = PostV1VmsVmIdPauseResponse
VmDeleteResult = DeleteV1VmsVmIdResponse
CloneResult = PostV1VmsVmIdCloneResponse
SnapshotCloneResult = PostV1SnapshotsSnapshotIdCloneResponse
SnapshotDeleteResult = DeleteV1SnapshotsSnapshotIdResponse
TokenResponse = PostV1AuthTokenResponse
ApiKeyDeleteResult = DeleteV1ApiKeysItemIdResponse
WebhookEndpointDeleteResult = DeleteV1WebhooksEndpointsEndpointIdResponse
WebhookDeliveryDetails = GetV1WebhooksDeliveriesDeliveryIdResponse
WebhookVerification = PostV1WebhooksEndpointsEndpointIdVerifyResponse
TemplateLog = TemplateLogResponse
HealthStatus = GetHealthzResponse
BrowserSessionInfo = BrowserSessionResponse
BrowserSessionClosed = BrowserSessionCloseResponse
BrowserInteractionResult = BrowserInteractionResponse
BrowserScreenshotResult = BrowserScreenshotResponse
BrowserExtractResult = BrowserExtractResponse
BrowserContentResult = BrowserContentResponse
BrowserRenderResult = BrowserRenderResponse
BrowserAuthTestResult = BrowserAuthTestResponse
BrowserCredential = BrowserCredentialRecord
ViewerUrl = ViewerUrlResponse
SavedRecording = DesktopRecording
WrittenFile = PostV1SessionsSessionIdFilesWriteResponseFilesItem
