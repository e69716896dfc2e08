/** GET /v1/sessions/{session_id}/files?path=: the entries of a directory in the session's VM (the console's file browser). */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY, StringEnum } from '../../schemas/common.ts';
import { GuestPath } from '../../schemas/guest-path.ts';
import type { App, RouteContext } from '../../types.ts';
import type { FileStat } from '@sandboxd/agent/protocol';

export const FileEntry = Type.Object(
  {
    name: Type.String(),
    path: Type.String({ description: 'Absolute path in the VM' }),
    type: StringEnum(['file', 'directory', 'symlink', 'other']),
    size: Type.Integer({ description: 'Bytes' }),
    mode: Type.Integer({ description: 'Permission bits (0o644 = 420)' }),
    modified_at: Type.String({ format: 'date-time' }),
    symlink_target: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'FileEntry', title: 'FileEntry' },
);

/** A file's record on the wire. */
export function fileEntryOf(entry: FileStat) {
  return {
    name: entry.name,
    path: entry.path,
    type: entry.type,
    size: entry.size,
    mode: entry.mode,
    modified_at: new Date(entry.mtimeMs).toISOString(),
    symlink_target: entry.symlinkTarget ?? null,
  };
}

export const FileListing = Type.Object(
  {
    path: Type.String({ description: 'The directory, absolute' }),
    entries: Type.Array(Type.Ref('FileEntry'), {
      description: 'Sorted by name; with depth > 1 each directory is followed by its contents (as `find` lists them). Symlinks are not followed',
    }),
    truncated: Type.Boolean({ description: 'More entries were left out (`limit`)' }),
  },
  { $id: 'FileListing', title: 'FileListing' },
);

export function registerFileList(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/sessions/:session_id/files',
    {
      schema: {
        tags: ['files'],
        summary: 'List a directory in the VM',
        description: "Starts the session's VM if it has none (like upload and download). A relative path is resolved against /root.",
        security: BEARER_OR_API_KEY,
        params: Type.Object({ session_id: Type.String({ minLength: 1, maxLength: 64 }) }),
        querystring: Type.Object({
          path: Type.Optional({ ...GuestPath('The directory (default /root)') }),
          depth: Type.Optional(
            Type.Integer({ minimum: 1, maximum: 16, default: 1, description: 'Levels to list: 1 the directory itself, 2 its subdirectories too, …' }),
          ),
          limit: Type.Optional(
            Type.Integer({ minimum: 1, maximum: 100_000, default: 10_000, description: 'Most entries to answer (`truncated` says when more were left out)' }),
          ),
        }),
        response: authedResponses(
          { 200: Type.Ref('FileListing') },
          { 404: 'No such session among yours, or no such directory', 409: 'The path is not a directory' },
        ),
      },
      onRequest: requireAuth,
    },
    async (request) => {
      const { path, depth, limit } = request.query;
      const listing = await services.sandbox.files.list(principalOf(request), request.params.session_id, path ?? '/root', {
        depth: depth ?? 1,
        limit: limit ?? 10_000,
      });
      return { path: listing.path, entries: listing.entries.map(fileEntryOf), truncated: listing.truncated };
    },
  );
}
