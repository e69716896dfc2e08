/**
 * Response serializers compiled when a route first answers with a status, not all at start. Fastify compiles
 * one fast-json-stringify function per route, status and content type when the app gets ready: ~170 operations
 * with their error statuses took 3.5-4 s of a 5 s start on a 2-core machine, paid again by every restart and
 * every test that starts a server, for serializers most of them never use. Compiled on first use, a route's
 * first answer with a status pays a few milliseconds instead.
 *
 * The compiler is Fastify's own (`@fastify/fast-json-stringify-compiler`, resolved from Fastify so the two
 * always match); only the moment of compiling changes. A schema it cannot compile now fails at that route's
 * first answer rather than at start, so `test/api/serializers.test.ts` compiles every response schema of the
 * served document.
 */
import { createRequire } from 'node:module';

/** What Fastify gives a serializer compiler for one route, status and content type. */
interface RouteSerializerDefinition {
  schema: unknown;
  method: string;
  url: string;
  httpStatus: string;
  contentType?: string;
}

type Serialize = (data: unknown) => string;
type BuildSerializer = (externalSchemas: unknown, serializerOptions: unknown) => (route: RouteSerializerDefinition) => Serialize;

/** Fastify's default serializer factory, from Fastify's own dependencies. */
export function fastifySerializerFactory(): BuildSerializer {
  const fromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'));
  const SerializerSelector = fromFastify('@fastify/fast-json-stringify-compiler') as () => BuildSerializer;
  return SerializerSelector();
}

/** A `compilersFactory.buildSerializer` that compiles each serializer on its first use. */
export function lazySerializerFactory(): BuildSerializer {
  const build = fastifySerializerFactory();
  return (externalSchemas, serializerOptions) => {
    const compile = build(externalSchemas, serializerOptions);
    return (route) => {
      let serialize: Serialize | undefined;
      return (data) => (serialize ??= compile(route))(data);
    };
  };
}
