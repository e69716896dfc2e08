/** Column helpers that paper over the few differences between SQLite and PostgreSQL DDL. */
import type { ColumnDefinitionBuilder, CreateTableBuilder } from 'kysely';
import type { SqlDialect } from '../dialect.ts';

/** Adds an auto-incrementing integer primary key named `id`. */
export function withSerialId<T extends string>(table: CreateTableBuilder<T, never>, dialect: SqlDialect) {
  return dialect === 'postgres'
    ? table.addColumn('id', 'serial', (c: ColumnDefinitionBuilder) => c.primaryKey())
    : table.addColumn('id', 'integer', (c: ColumnDefinitionBuilder) => c.primaryKey().autoIncrement());
}
