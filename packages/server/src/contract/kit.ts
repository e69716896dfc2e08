/**
 * Building blocks of the wire contracts (`src/contract/`): the TypeBox pieces several areas' schemas share. The
 * contract floor sits below core and api: it imports nothing of the project, so the core may type its service
 * methods with the very shapes the routes validate and publish.
 */
import { Type, type TSchemaOptions } from 'typebox';

/** A string from a closed union of the domain vocabulary (`src/model.ts`): its values are listed in the OpenAPI document. */
export function StringEnum<const T extends string>(values: readonly T[], options: TSchemaOptions = {}) {
  return Type.Unsafe<T>({ type: 'string', enum: [...values], ...options });
}

/** Largest id of a stored record: ids are 32-bit `serial` columns on PostgreSQL. */
export const MAX_RECORD_ID = 2_147_483_647;

/** How far into a list a page may start; no list holds more records than there are ids. */
export const ListOffset = Type.Integer({ minimum: 0, maximum: MAX_RECORD_ID, default: 0, description: 'Records to skip' });

export const DateTime = Type.String({ format: 'date-time' });
export const DateTimeOrNull = Type.Union([DateTime, Type.Null()]);
export const StringOrNull = Type.Union([Type.String(), Type.Null()]);

/**
 * A rule across fields that a schema cannot state, broken: FastAPI's 422 item (`loc` from `body`), which the route
 * throws as an InputError.
 */
export interface FieldProblem {
  loc: (string | number)[];
  msg: string;
  type: string;
}
