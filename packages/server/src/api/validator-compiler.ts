/**
 * Input validation like FastAPI's: query strings, path parameters and headers are text, so they are
 * coerced to the schema's types ("5" → 5); JSON bodies are not, because Ajv's coercion would silently
 * turn `null` into `""` or `42` into `"42"` where pydantic reports an error. Both use Fastify's own
 * Ajv compiler (same shared schemas, same formats), with coercion switched per part of the request.
 *
 * Numbers in text are converted here, before Ajv sees them, and only from their canonical decimal form
 * ("3", "-1", "2.5", "1e3" for numbers): Ajv's coercion takes anything `Number()` takes, so "0x3", "3e0",
 * "+3" and " 3" all meant 3, and "1e309" or "-Infinity" became ±Infinity, which its minimum and maximum
 * checks let through (strictNumbers skips them for non-finite values) and the store then refused.
 */
import { AjvCompiler } from '@fastify/ajv-compiler';
import type { FastifyServerOptions } from 'fastify';
import type { FastifyRouteSchemaDef } from 'fastify/types/schema.js';
import { GUEST_PATH_FORMAT, guestPathProblem } from './schemas/guest-path.ts';
import { lazySerializerFactory } from './serializer-compiler.ts';

type SchemaController = NonNullable<FastifyServerOptions['schemaController']>;
type BuildValidator = NonNullable<NonNullable<SchemaController['compilersFactory']>['buildValidator']>;

const COMMON_OPTIONS = {
  allErrors: true,
  removeAdditional: true,
  useDefaults: true,
  // A `oneOf` with an OpenAPI discriminator (a render's actions) is checked against the one member its tag names.
  discriminator: true,
  formats: { [GUEST_PATH_FORMAT]: (text: string) => guestPathProblem(text) === null },
} as const;

const CANONICAL: Record<'integer' | 'number', RegExp> = {
  integer: /^-?(0|[1-9][0-9]*)$/,
  number: /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/,
};

type Validate = ((data: unknown) => boolean) & { errors?: unknown[] | null };

/** The top-level properties of a query or path schema that hold numbers, with their type. */
function numericProperties(schema: unknown): [string, 'integer' | 'number'][] {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> } | undefined)?.properties ?? {};
  return Object.entries(properties).flatMap(([name, property]) =>
    property.type === 'integer' || property.type === 'number' ? [[name, property.type] as [string, 'integer' | 'number']] : [],
  );
}

/** Wraps a coercing validator: numeric text must be canonical and finite, and is converted before Ajv runs. */
function withCanonicalNumbers(validate: Validate, numeric: [string, 'integer' | 'number'][]): Validate {
  const checked: Validate = (data) => {
    const record = data as Record<string, unknown> | null;
    const errors: unknown[] = [];
    for (const [name, type] of numeric) {
      const raw = record?.[name];
      const text = Array.isArray(raw) && raw.length === 1 ? raw[0] : raw;
      if (typeof text !== 'string') continue;
      const value = Number(text);
      if (CANONICAL[type].test(text) && Number.isFinite(value)) record![name] = value;
      else errors.push({ keyword: 'type', instancePath: `/${name}`, schemaPath: `#/properties/${name}/type`, params: { type }, message: `must be ${type}` });
    }
    if (errors.length > 0) {
      checked.errors = errors;
      return false;
    }
    const valid = validate(data);
    checked.errors = validate.errors ?? null;
    return valid;
  };
  return checked;
}

export function partAwareSchemaController(): SchemaController {
  const factory = AjvCompiler();
  return {
    compilersFactory: {
      buildValidator: ((externalSchemas: Parameters<BuildValidator>[0], ajvOptions: Parameters<BuildValidator>[1]) => {
        const base = (ajvOptions ?? {}) as { customOptions?: Record<string, unknown>; plugins?: unknown[] };
        const withCoercion = (coerceTypes: false | 'array') =>
          factory(externalSchemas, { plugins: [], ...base, customOptions: { ...base.customOptions, ...COMMON_OPTIONS, coerceTypes } } as never);
        const strict = withCoercion(false);
        const coercing = withCoercion('array');
        return (route: FastifyRouteSchemaDef<unknown>) => {
          if (route.httpPart === 'body') return strict(route);
          const numeric = numericProperties(route.schema);
          const validate = coercing(route) as Validate;
          return numeric.length === 0 ? validate : withCanonicalNumbers(validate, numeric);
        };
      }) as BuildValidator,
      // Response serializers on first use: compiling them all made up most of a start (serializer-compiler.ts).
      buildSerializer: lazySerializerFactory() as NonNullable<SchemaController['compilersFactory']>['buildSerializer'],
    },
  };
}
