/**
 * The browser's wire contract: every request and answer of `/v1/browser/*` as a TypeBox schema (bounds, defaults,
 * descriptions) and its type (`Static<>`), in snake_case as the published clients of the hosted service send and
 * read them (`../shared/spec/wire-notes.md`). The routes validate with these schemas and publish them as OpenAPI
 * components; the core (`core/browser/browser-api.ts`) types its service with the same shapes. One source: a field
 * added here is in the document, the validation and the service's types at once.
 */
import type { TSchema } from 'typebox';
import { BrowserCredentialCreateRequest, BrowserCredentialList, BrowserCredentialRecord, BrowserCredentialUpdateRequest } from './credentials.ts';
import {
  BrowserClickRequest,
  BrowserContentRequest,
  BrowserContentResponse,
  BrowserExtractRequest,
  BrowserExtractResponse,
  BrowserFillCredentialRequest,
  BrowserFillRequest,
  BrowserInteractionResponse,
  BrowserKeyPressRequest,
  BrowserNavigateRequest,
  BrowserScreenshotRequest,
  BrowserScreenshotResponse,
  BrowserScrollRequest,
  BrowserTargetRequest,
  BrowserTypeRequest,
  BrowserWaitRequest,
} from './interactions.ts';
import { RENDER_SCHEMAS } from './renders.ts';
import {
  BrowserAuthTestRequest,
  BrowserAuthTestResponse,
  BrowserCapabilities,
  BrowserSessionCloseResponse,
  BrowserSessionCreateRequest,
  BrowserSessionListResponse,
  BrowserSessionResponse,
} from './sessions.ts';
import { BrowserStoredScreenshot, BrowserUsageHistory, BrowserUsageRecord, BrowserUsageSummary } from './usage.ts';

export * from './common.ts';
export * from './credentials.ts';
export * from './interactions.ts';
export * from './renders.ts';
export * from './sessions.ts';
export * from './usage.ts';

/** The named schemas (OpenAPI components), registered once on the app. */
export const BROWSER_SCHEMAS: TSchema[] = [
  BrowserSessionCreateRequest,
  BrowserSessionResponse,
  BrowserSessionListResponse,
  BrowserSessionCloseResponse,
  BrowserInteractionResponse,
  BrowserNavigateRequest,
  BrowserClickRequest,
  BrowserTypeRequest,
  BrowserFillRequest,
  BrowserScrollRequest,
  BrowserWaitRequest,
  BrowserTargetRequest,
  BrowserKeyPressRequest,
  BrowserScreenshotRequest,
  BrowserScreenshotResponse,
  BrowserExtractRequest,
  BrowserExtractResponse,
  BrowserContentRequest,
  BrowserContentResponse,
  BrowserFillCredentialRequest,
  ...RENDER_SCHEMAS,
  BrowserUsageSummary,
  BrowserUsageRecord,
  BrowserUsageHistory,
  BrowserStoredScreenshot,
  BrowserCapabilities,
  BrowserAuthTestRequest,
  BrowserAuthTestResponse,
  BrowserCredentialRecord,
  BrowserCredentialList,
  BrowserCredentialCreateRequest,
  BrowserCredentialUpdateRequest,
];
