/** The /mcp endpoint's bodies as the OpenAPI document shows them: JSON-RPC 2.0 messages of the Model Context Protocol. */
import { Type } from 'typebox';
import { byMediaType, errorRef } from '../../schemas/common.ts';

/**
 * One JSON-RPC message. Only its envelope is described: what `params` holds depends on `method` and is the MCP
 * specification's to define (the SDK checks it). Its `id` is the JSON-RPC request id, not a resource of the API,
 * so it is left to `additionalProperties` rather than listed.
 */
const JsonRpcMessage = Type.Object(
  {
    jsonrpc: Type.Optional(Type.String({ maxLength: 16, description: 'Always "2.0"' })),
    method: Type.Optional(
      Type.String({
        maxLength: 256,
        description: 'initialize, tools/list, tools/call, resources/list, resources/templates/list, resources/read, ping, notifications/…',
      }),
    ),
    params: Type.Optional(Type.Object({}, { additionalProperties: true, description: "The method's parameters, as the MCP specification defines them" })),
  },
  { additionalProperties: true, description: 'A JSON-RPC 2.0 request (with its "id") or notification' },
);

export const McpRequestBody = Type.Union([JsonRpcMessage, Type.Array(JsonRpcMessage, { minItems: 1, maxItems: 100 })], {
  description: 'A JSON-RPC 2.0 message of the Model Context Protocol, or a batch of them',
});

export const JsonRpcErrorBody = Type.Object(
  {
    jsonrpc: Type.Literal('2.0'),
    error: Type.Object({ code: Type.Integer(), message: Type.String(), data: Type.Optional(Type.Unknown()) }),
    id: Type.Union([Type.String(), Type.Number(), Type.Null()]),
  },
  { description: 'A JSON-RPC error (the MCP transport refused the message)' },
);

/** An error either of sandboxd (before the message reached MCP: the body could not be read) or of the MCP transport. */
const eitherError = (description: string) => ({ anyOf: [errorRef('sandboxd refused the request'), JsonRpcErrorBody], description });

/** Answers of POST /mcp besides the standard 401 and 422. */
export const postResponses = {
  200: byMediaType(
    'An event stream (text/event-stream) of JSON-RPC messages: progress notifications while a tool runs, then the response to each request of the body',
    {
      'text/event-stream': Type.String({ description: 'Server-sent events, one JSON-RPC message in each `data:`' }),
    },
  ),
  202: Type.Null({ description: 'Accepted: the body held only notifications or responses, which have no answer' }),
  400: eitherError('The body is not a JSON-RPC message (JSON-RPC error -32700 or -32600), or an unsupported MCP-Protocol-Version header'),
  406: { ...JsonRpcErrorBody, description: 'The Accept header must list both application/json and text/event-stream' },
  415: eitherError('The Content-Type must be application/json'),
};

export const methodNotAllowed = {
  405: { ...JsonRpcErrorBody, description: 'This endpoint is stateless: only POST carries messages (no server-to-client stream, no sessions to end)' },
};
