/**
 * Translates Ajv validation errors into FastAPI's 422 body, `{"detail":[{"loc":[…],"msg":"…","type":"…"}]}`,
 * so clients written for the original service parse them unchanged. `loc` starts with where the input
 * was (`body`, `query`, `path`, `header`); `type` uses pydantic's names.
 */
import type { FastifySchemaValidationError } from 'fastify/types/schema.js';
import { GUEST_PATH_FORMAT, GUEST_PATH_RULE } from './schemas/guest-path.ts';

export interface ValidationDetail {
  loc: (string | number)[];
  msg: string;
  type: string;
}

const LOCATION: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };

/** Maps one location's Ajv errors to detail items. `input` is the validated value (to spot a missing body). */
export function toValidationDetails(errors: FastifySchemaValidationError[], context: string | undefined, input: unknown): ValidationDetail[] {
  const where = LOCATION[context ?? 'body'] ?? 'body';
  const details: ValidationDetail[] = [];
  for (const error of withoutUnionNoise(errors)) {
    const loc: (string | number)[] = [where, ...pathSegments(error.instancePath)];
    const params = (error.params ?? {}) as Record<string, unknown>;
    if (error.keyword === 'required' && typeof params.missingProperty === 'string') loc.push(params.missingProperty);
    if (error.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') loc.push(params.additionalProperty);
    if (error.keyword === 'discriminator' && typeof params.tag === 'string') loc.push(params.tag);
    if (where === 'body' && error.instancePath === '' && error.keyword === 'type' && (input === undefined || input === null)) {
      details.push({ loc: ['body'], msg: 'Field required', type: 'missing' });
      continue;
    }
    details.push({ loc, ...describe(error.keyword, params, error.message, error.instancePath === '' && where === 'body') });
  }
  // anyOf/oneOf report each branch and then the union itself; the branches say more, so keep one line per place.
  return dedupe(details);
}

/**
 * A failed union (`anyOf`, used for nullable fields) reports every branch plus itself. Like pydantic for
 * `Optional[X]`, report only the non-null branch: drop "must be null" and the union's own error when a
 * more specific error exists at the same place or below it.
 */
function withoutUnionNoise(errors: FastifySchemaValidationError[]): FastifySchemaValidationError[] {
  const specific = (e: FastifySchemaValidationError) => !isNullBranch(e) && e.keyword !== 'anyOf' && e.keyword !== 'oneOf';
  return errors.filter((error) => {
    if (!isNullBranch(error) && error.keyword !== 'anyOf' && error.keyword !== 'oneOf') return true;
    const others = errors.filter(
      (o) => o !== error && specific(o) && (o.instancePath === error.instancePath || o.instancePath.startsWith(`${error.instancePath}/`)),
    );
    return others.length === 0 && !isNullBranch(error);
  });
}

function isNullBranch(error: FastifySchemaValidationError): boolean {
  return error.keyword === 'type' && (error.params as { type?: unknown } | undefined)?.type === 'null';
}

function pathSegments(instancePath: string): (string | number)[] {
  if (!instancePath) return [];
  return instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

function describe(keyword: string, params: Record<string, unknown>, message: string | undefined, isBodyRoot: boolean): { msg: string; type: string } {
  switch (keyword) {
    case 'required':
      return { msg: 'Field required', type: 'missing' };
    case 'type':
      return describeType(String(params.type ?? ''), isBodyRoot);
    case 'minimum':
      return { msg: `Input should be greater than or equal to ${params.limit}`, type: 'greater_than_equal' };
    case 'maximum':
      return { msg: `Input should be less than or equal to ${params.limit}`, type: 'less_than_equal' };
    case 'exclusiveMinimum':
      return { msg: `Input should be greater than ${params.limit}`, type: 'greater_than' };
    case 'exclusiveMaximum':
      return { msg: `Input should be less than ${params.limit}`, type: 'less_than' };
    case 'minLength':
      return { msg: `String should have at least ${params.limit} character${params.limit === 1 ? '' : 's'}`, type: 'string_too_short' };
    case 'maxLength':
      return { msg: `String should have at most ${params.limit} characters`, type: 'string_too_long' };
    case 'pattern':
      return { msg: `String should match pattern '${params.pattern}'`, type: 'string_pattern_mismatch' };
    case 'minItems':
      return { msg: `List should have at least ${params.limit} item${params.limit === 1 ? '' : 's'}`, type: 'too_short' };
    case 'maxItems':
      return { msg: `List should have at most ${params.limit} items`, type: 'too_long' };
    case 'minProperties':
      return { msg: `Object should have at least ${params.limit} field${params.limit === 1 ? '' : 's'}`, type: 'too_short' };
    case 'maxProperties':
      return { msg: `Object should have at most ${params.limit} fields`, type: 'too_long' };
    case 'enum': {
      const allowed = (params.allowedValues as unknown[] | undefined) ?? [];
      return { msg: `Input should be ${allowed.map((v) => JSON.stringify(v)).join(', ')}`, type: 'enum' };
    }
    case 'const':
      return { msg: `Input should be ${JSON.stringify(params.allowedValue)}`, type: 'literal_error' };
    case 'format':
      return describeFormat(String(params.format ?? ''));
    case 'additionalProperties':
      return { msg: 'Extra inputs are not permitted', type: 'extra_forbidden' };
    case 'anyOf':
    case 'oneOf':
      return { msg: 'Input does not match any allowed form', type: 'union_tag_invalid' };
    case 'discriminator':
      // A tagged union (`type` names the member): the tag is missing or names no member.
      return params.error === 'tag'
        ? { msg: `Unable to extract tag using discriminator '${params.tag}'`, type: 'union_tag_not_found' }
        : { msg: `Input tag '${String(params.tagValue)}' found using '${params.tag}' does not match any of the expected tags`, type: 'union_tag_invalid' };
    default:
      return { msg: message ?? 'Invalid input', type: 'value_error' };
  }
}

function describeType(type: string, isBodyRoot: boolean): { msg: string; type: string } {
  if (type.startsWith('integer')) return { msg: 'Input should be a valid integer', type: 'int_parsing' };
  if (type.startsWith('number')) return { msg: 'Input should be a valid number', type: 'float_parsing' };
  if (type.startsWith('boolean')) return { msg: 'Input should be a valid boolean', type: 'bool_parsing' };
  if (type.startsWith('string')) return { msg: 'Input should be a valid string', type: 'string_type' };
  if (type.startsWith('array')) return { msg: 'Input should be a valid list', type: 'list_type' };
  if (type.startsWith('object')) {
    return isBodyRoot
      ? { msg: 'Input should be a valid dictionary or object to extract fields from', type: 'model_attributes_type' }
      : { msg: 'Input should be a valid dictionary', type: 'dict_type' };
  }
  return { msg: `Input should be of type ${type}`, type: 'type_error' };
}

function describeFormat(format: string): { msg: string; type: string } {
  switch (format) {
    case 'date-time':
      return { msg: 'Input should be a valid datetime', type: 'datetime_parsing' };
    case 'date':
      return { msg: 'Input should be a valid date', type: 'date_parsing' };
    case 'uuid':
      return { msg: 'Input should be a valid UUID', type: 'uuid_parsing' };
    case 'uri':
    case 'url':
      return { msg: 'Input should be a valid URL', type: 'url_parsing' };
    case GUEST_PATH_FORMAT:
      return { msg: `Input should be ${GUEST_PATH_RULE}`, type: 'value_error' };
    default:
      return { msg: `Input should be a valid ${format}`, type: 'value_error' };
  }
}

function dedupe(details: ValidationDetail[]): ValidationDetail[] {
  const seen = new Set<string>();
  return details.filter((d) => {
    const key = JSON.stringify([d.loc, d.type]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
