/** Reading operations out of the served OpenAPI document, for tests generated from it (access matrix, fuzz). */

export type Schema = Record<string, any>;

export interface OpenApiDocument {
  paths: Record<string, Record<string, any>>;
  components: { schemas: Record<string, Schema> };
}

export interface Operation {
  method: string;
  /** The document's path, e.g. `/v1/api-keys/{item_id}`. */
  path: string;
  spec: Record<string, any>;
}

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: Schema;
}

const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options'];

export function operationsOf(doc: OpenApiDocument): Operation[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method]).map((method) => ({ method: method.toUpperCase(), path, spec: item[method] })),
  );
}

/** Follows `$ref`s into the document's components. */
export function resolve(doc: OpenApiDocument, schema: Schema | undefined): Schema {
  let current = schema ?? {};
  for (let hops = 0; typeof current.$ref === 'string' && hops < 10; hops++) current = doc.components.schemas[current.$ref.split('/').pop()!] ?? {};
  return current;
}

export function parametersOf(operation: Operation, where: Parameter['in']): Parameter[] {
  return ((operation.spec.parameters ?? []) as Parameter[]).filter((p) => p.in === where);
}

/** The request body's media type and schema, JSON first; null when the operation takes none. */
export function requestBodyOf(doc: OpenApiDocument, operation: Operation): { mediaType: string; schema: Schema } | null {
  const content = (operation.spec.requestBody?.content ?? {}) as Record<string, { schema?: Schema }>;
  const mediaType = ['application/json', 'multipart/form-data', 'application/x-www-form-urlencoded'].find((type) => content[type]);
  if (!mediaType) return null;
  return { mediaType, schema: objectSchemaOf(doc, content[mediaType]!.schema) };
}

/** The object branch of a body schema (bodies may be declared `X | null`). */
export function objectSchemaOf(doc: OpenApiDocument, schema: Schema | undefined): Schema {
  const resolved = resolve(doc, schema);
  const branches = (resolved.anyOf ?? resolved.oneOf) as Schema[] | undefined;
  if (branches) return objectSchemaOf(doc, branches.map((b) => resolve(doc, b)).find((b) => b.type === 'object' || b.properties) ?? {});
  return resolved;
}

/** A URL with the path parameters filled in (each value URI-encoded) and a query string. */
export function urlOf(path: string, params: Record<string, string>, query: Record<string, string> = {}): string {
  const filled = path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? `missing-${name}`));
  const search = new URLSearchParams(query).toString();
  return search ? `${filled}?${search}` : filled;
}

/** How {@link validValue} chooses where a schema allows several values. */
export interface Choices {
  pick<T>(items: readonly T[]): T;
  /** Whether an optional property is included. */
  optional(name: string): boolean;
  /** Values for inputs known by name (checked first). */
  named: Record<string, () => unknown>;
}

/** A value the schema accepts (in most cases: patterns are not honoured), built from its defaults, enums and bounds. */
export function validValue(doc: OpenApiDocument, name: string, schema: Schema | undefined, choices: Choices, depth = 0): unknown {
  if (name in choices.named) return choices.named[name]!();
  const s = resolve(doc, schema);
  if (s.default !== undefined) return s.default;
  if (s.enum) return choices.pick(s.enum);
  if (s.const !== undefined) return s.const;
  const branches = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (branches) return validValue(doc, name, choices.pick(branches), choices, depth);
  if (s.type === 'integer' || s.type === 'number') return s.minimum ?? 1;
  if (s.type === 'boolean') return choices.pick([false, true]);
  if (s.type === 'null') return null;
  if (s.type === 'array') return depth > 3 ? [] : [validValue(doc, name, s.items, choices, depth + 1)];
  if (s.type === 'object' || s.properties) {
    const value: Record<string, unknown> = {};
    for (const [key, property] of Object.entries<Schema>(s.properties ?? {})) {
      if ((s.required ?? []).includes(key) || choices.optional(key)) value[key] = validValue(doc, key, property, choices, depth + 1);
    }
    return value;
  }
  if (s.format === 'date-time') return new Date(Date.now() + 86_400_000).toISOString();
  return 'x'.repeat(Math.max(1, s.minLength ?? 1));
}
