/**
 * Wires the core services over one store. Used by the HTTP app and by the offline admin commands, so
 * both act on the store the same way.
 */
import { randomBytes } from 'node:crypto';
import type { Config } from './config.ts';
import { ApiKeyService } from './core/api-keys.ts';
import { createAccessTokenIssuer, type AccessTokenIssuer } from './core/auth/access-tokens.ts';
import { Authenticator } from './core/authenticator.ts';
import { EventNotifier } from './core/events.ts';
import { systemClock, type Clock } from './core/clock.ts';
import { UserService } from './core/users.ts';
import type { Database } from './store/database.ts';
import { readOrInitSetting } from './store/settings-store.ts';

export interface Services {
  config: Config;
  database: Database;
  clock: Clock;
  /** Wakes outbox consumers after a commit that recorded events. */
  events: EventNotifier;
  users: UserService;
  apiKeys: ApiKeyService;
  tokens: AccessTokenIssuer;
  authenticator: Authenticator;
}

/** The token signing secret: from configuration, or generated once and shared through the store. */
async function resolveAuthSecret(config: Config, database: Database): Promise<string> {
  if (config.authSecret) return config.authSecret;
  return readOrInitSetting(database.db, 'auth.token_secret', randomBytes(48).toString('base64url'));
}

export async function createServices(config: Config, database: Database, clock: Clock = systemClock): Promise<Services> {
  const tokens = createAccessTokenIssuer(await resolveAuthSecret(config, database), config.accessTokenTtlSeconds);
  const events = new EventNotifier();
  return {
    config,
    database,
    clock,
    events,
    users: new UserService(database, config.plans, config.defaultPlan, clock),
    apiKeys: new ApiKeyService(database, clock, events),
    tokens,
    authenticator: new Authenticator(database, tokens, clock),
  };
}
