/**
 * The versioned migrations, in order. Names sort lexically; never rename or edit a migration that has
 * shipped: add a new one.
 */
import type { Kysely, Migration, MigrationProvider } from 'kysely';
import type { SqlDialect } from '../dialect.ts';
import * as m0001 from './0001-users-and-api-keys.ts';
import * as m0002 from './0002-sessions-vms-executions-events.ts';
import * as m0003 from './0003-webhooks-audit.ts';
import * as m0004 from './0004-cli-auth.ts';
import * as m0005 from './0005-shares.ts';
import * as m0006 from './0006-execution-node.ts';
import * as m0007 from './0007-vm-snapshots-templates.ts';
import * as m0008 from './0008-custom-domains.ts';
import * as m0009 from './0009-volumes.ts';
import * as m0010 from './0010-browser.ts';
import * as m0011 from './0011-computer-use.ts';
import * as m0012 from './0012-cluster-nodes.ts';
import * as m0013 from './0013-pty-attach-tokens.ts';
import * as m0014 from './0014-vms-node-status.ts';
import * as m0015 from './0015-ssh-keys.ts';
import * as m0016 from './0016-lifecycle-hooks.ts';
import * as m0017 from './0017-egress.ts';
import * as m0018 from './0018-vaults.ts';
import * as m0019 from './0019-console-sessions.ts';
import * as m0020 from './0020-vault-injection.ts';
import * as m0021 from './0021-custom-domain-reverify.ts';
import * as m0022 from './0022-python-results-contexts.ts';
import * as m0023 from './0023-session-client-data.ts';
import * as m0024 from './0024-auto-pause.ts';
import * as m0025 from './0025-session-volumes.ts';
import * as m0026 from './0026-volume-in-store.ts';
import * as m0028 from './0028-apps.ts';
import * as m0027networks from './0027-networks.ts';
import * as m0029 from './0029-custom-domain-apps.ts';

interface DialectMigration {
  up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void>;
  down?(db: Kysely<unknown>, dialect: SqlDialect): Promise<void>;
}

const MIGRATIONS: Record<string, DialectMigration> = {
  '0001-users-and-api-keys': m0001,
  '0002-sessions-vms-executions-events': m0002,
  '0003-webhooks-audit': m0003,
  '0004-cli-auth': m0004,
  '0005-shares': m0005,
  '0006-execution-node': m0006,
  '0007-vm-snapshots-templates': m0007,
  '0008-custom-domains': m0008,
  '0009-volumes': m0009,
  '0010-browser': m0010,
  '0011-computer-use': m0011,
  '0012-cluster-nodes': m0012,
  '0013-pty-attach-tokens': m0013,
  '0014-vms-node-status': m0014,
  '0015-ssh-keys': m0015,
  '0016-lifecycle-hooks': m0016,
  '0017-egress': m0017,
  '0018-vaults': m0018,
  '0019-console-sessions': m0019,
  '0020-vault-injection': m0020,
  '0021-custom-domain-reverify': m0021,
  '0022-python-results-contexts': m0022,
  '0023-session-client-data': m0023,
  '0024-auto-pause': m0024,
  '0025-session-volumes': m0025,
  '0026-volume-in-store': m0026,
  '0028-apps': m0028,
  '0027-networks': m0027networks,
  '0029-custom-domain-apps': m0029,
};

/** A Kysely migration provider that hands each migration the dialect it runs on. */
export function migrationProvider(dialect: SqlDialect): MigrationProvider {
  return {
    async getMigrations() {
      const result: Record<string, Migration> = {};
      for (const [name, migration] of Object.entries(MIGRATIONS)) {
        result[name] = {
          up: (db) => migration.up(db, dialect),
          ...(migration.down ? { down: (db: Kysely<unknown>) => migration.down!(db, dialect) } : {}),
        };
      }
      return result;
    },
  };
}
