/** docs/events.md and the code's event catalogue list the same types with the same payload fields. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { EVENT_CATALOGUE } from '../src/core/event-catalogue.ts';

interface FieldDoc {
  type: string;
  nullable: boolean;
  /** The values of a field documented with "one of". */
  values?: string[];
}

/** How the doc writes a schema's JSON type: string, integer, number, boolean, date-time, object of string, array of string. */
function describe(schema: Record<string, any>): FieldDoc {
  const variants: Record<string, any>[] = schema.anyOf ?? [schema];
  const nonNull = variants.filter((v) => v.type !== 'null');
  assert.equal(nonNull.length, 1, `cannot describe ${JSON.stringify(schema)}`);
  const inner = nonNull[0]!;
  const nullable = nonNull.length < variants.length;
  if (inner.enum) return { type: 'string', nullable, values: [...inner.enum] };
  if (inner.type === 'string' && inner.format === 'date-time') return { type: 'date-time', nullable };
  if (inner.type === 'object') return { type: 'object of string', nullable };
  if (inner.type === 'array') return { type: `array of ${(inner.items as { type: string }).type}`, nullable };
  return { type: inner.type, nullable };
}

function documentedCatalogue(): Record<string, Record<string, FieldDoc>> {
  const doc = fs.readFileSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../docs/events.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Catalogue'), doc.indexOf('### Families added by later features'));
  const catalogue: Record<string, Record<string, FieldDoc>> = {};
  for (const row of section.matchAll(/^\| `([a-z_]+(?:\.[a-z_]+)+)` \| .*? \| (.*) \|$/gm)) {
    const fields: Record<string, FieldDoc> = {};
    for (const field of row[2]!.matchAll(
      /`([a-z_]+)` (date-time|string|integer|number|boolean|object of string|array of string)(\?)?(?: \(one of ([^)]*)\))?/g,
    )) {
      fields[field[1]!] = {
        type: field[2]!,
        nullable: field[3] === '?',
        ...(field[4] !== undefined ? { values: [...field[4].matchAll(/`([^`]+)`/g)].map((m) => m[1]!) } : {}),
      };
    }
    catalogue[row[1]!] = fields;
  }
  return catalogue;
}

test('docs/events.md lists exactly the event types of the catalogue, each with its payload fields, types and values', () => {
  const fromCode = Object.fromEntries(
    Object.entries(EVENT_CATALOGUE).map(([type, schema]) => [
      type,
      Object.fromEntries(
        Object.entries((schema as unknown as { properties: Record<string, Record<string, any>> }).properties).map(([name, field]) => [name, describe(field)]),
      ),
    ]),
  );
  assert.deepEqual(documentedCatalogue(), fromCode);
});
