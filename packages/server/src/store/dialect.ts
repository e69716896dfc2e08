/** The SQL dialects the store runs on; migrations take it for their few DDL differences. */
export type SqlDialect = 'sqlite' | 'postgres';
